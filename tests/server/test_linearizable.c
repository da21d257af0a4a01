// SPDX-License-Identifier: MIT
/*
 * Linearizability end to end (docs/LINEARIZABILITY.md): an XDP server in the test
 * namespaces, xkv-linload's clients on 4 hot keys for a couple of seconds while
 * xkv-bench keeps the workers' queues busy reading the same keys, then xkv-lincheck
 * on the history. Each row of the table is one server: its binary, its extra flags,
 * and the exit the checker must give. A row that must fail shows the pipeline can
 * say no; so does the second test, on a real history with one read made stale.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server_proc.h"

#define LOAD_SECONDS  "2"
#define BENCH_SECONDS "60"   /* outlasts the load; stopped after it */
#define BENCH_RATE    "3000" /* GETs a second: the queues never empty, the cores are not full */
#define HOT_KEYS      "4"
#define CHILD_TIMEOUT_MS 30000

/* Arrays, not pointers: Criterion runs each row in a new process image (ASLR). */
struct lin_row {
	char name[24];
	char server[256];  /* the binary; "": this build's xkv-server */
	char args[8][32];  /* flags after the common ones, e.g. the policy; "" ends them */
	int expect;	   /* xkv-lincheck's exit: 0 linearizable, 1 not */
};

/*
 * Every policy with write compaction off and on. xkv-server --echo answers PUT ok and
 * GET not found without a store: never linearizable; nor is a server built to answer
 * compacted PUTs before applying them (C-4's execution E1).
 */
static struct lin_row rows[] = {
	{"erew", "", {"--policy", "erew", "--compaction", "off"}, 0},
	{"erew-compaction", "", {"--policy", "erew", "--compaction", "on"}, 0},
	{"crew", "", {"--policy", "crew", "--compaction", "off"}, 0},
	{"crew-compaction", "", {"--policy", "crew", "--compaction", "on"}, 0},
	{"minos", "", {"--policy", "minos", "--compaction", "off"}, 0},
	{"minos-compaction", "", {"--policy", "minos", "--compaction", "on"}, 0},
	{"dcrew", "", {"--policy", "dcrew", "--compaction", "off"}, 0},
	{"dcrew-compaction", "", {"--policy", "dcrew", "--compaction", "on"}, 0},
	{"xkv-no-compaction", "", {"--policy", "xkv", "--compaction", "off"}, 0},
	{"xkv", "", {"--policy", "xkv", "--compaction", "on"}, 0},
	{"echo-says-no", "", {"--policy", "crew", "--echo"}, 1},
	{"early-reply-says-no", XKV_EARLY_REPLY_BIN, {"--policy", "xkv", "--compaction", "on"}, 1},
};

static struct server_proc srv;
static char allow[64];
static pid_t bench_pid;
static char history[64];

static void setup(void)
{
	netns_test_setup(&srv, allow);
	snprintf(history, sizeof(history), "/tmp/xkv-test-lin-%d.hist", getpid());
}

static void teardown(void)
{
	if (bench_pid > 0) {
		kill(bench_pid, SIGKILL);
		waitpid(bench_pid, NULL, 0);
	}
	server_stop(&srv);
	unlink(srv.out_path);
	unlink(history);
}

TestSuite(linearizable, .init = setup, .fini = teardown, .timeout = 120);

/* Runs argv with stdout to /dev/null (stderr stays: the test's output shows it). */
static pid_t spawn(const char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Its exit status; killed (and -1) if it takes longer than CHILD_TIMEOUT_MS. */
static int child_wait(pid_t pid)
{
	int status;

	for (int waited = 0; waited < CHILD_TIMEOUT_MS; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* xkv-lincheck's exit on path; its verdict and any explanation go to stderr. */
static int lincheck(const char *path)
{
	const char *argv[] = {XKV_LINCHECK_BIN, "--timeout", "30", path, NULL};
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* the test's own output is stderr */
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	return child_wait(pid);
}

static void server_up(const struct lin_row *row)
{
	const char *args[20] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"),
				"--workers", "2", "--allow", allow, "--memory", "64M"};
	size_t n = 10;
	int err;

	for (size_t i = 0; i < 8 && row->args[i][0]; i++)
		args[n++] = row->args[i];
	srv.bin = row->server[0] ? row->server : NULL;
	err = server_start(&srv, args);
	cr_assert_eq(err, 0, "%s: the server did not start: %s", row->name, strerror(-err));
}

/* The history of LOAD_SECONDS of linload, with xkv-bench reading the same keys. */
static void record(const struct lin_row *row, const char *seconds)
{
	const char *bench[] = {XKV_BENCH_BIN, "--server", server_addr(&srv), "--keys", HOT_KEYS,
			       "--no-load", "--get-ratio", "1", "--rate", BENCH_RATE,
			       "--duration", BENCH_SECONDS, NULL};
	const char *load[] = {XKV_LINLOAD_BIN, "--server", server_addr(&srv), "--keys", HOT_KEYS,
			      "--duration", seconds, "--out", history, NULL};
	pid_t pid;
	int status;

	fflush(NULL);
	bench_pid = spawn(bench);
	cr_assert_gt(bench_pid, 0, "fork: %s", strerror(errno));
	pid = spawn(load);
	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	status = child_wait(pid);
	cr_assert_eq(status, 0, "%s: xkv-linload exited %d", row->name, status);
	/* its reads were load, not checks: values it does not know are its errors, not ours */
	cr_assert_eq(waitpid(bench_pid, &status, WNOHANG), 0,
		     "%s: xkv-bench did not last the load (status %d)", row->name, status);
	kill(bench_pid, SIGKILL);
	waitpid(bench_pid, NULL, 0);
	bench_pid = 0;
}

ParameterizedTestParameters(linearizable, policies)
{
	return cr_make_param_array(struct lin_row, rows, sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(struct lin_row *row, linearizable, policies)
{
	int status;

	server_up(row);
	record(row, LOAD_SECONDS);
	status = lincheck(history);
	cr_assert_eq(status, row->expect, "%s: xkv-lincheck exited %d, expected %d", row->name,
		     status, row->expect);
	/* a row with compaction on checks nothing unless windows did open */
	if (!strcmp(row->args[3], "on")) {
		cr_assert_eq(server_stop(&srv), 0, "%s: the server did not stop cleanly", row->name);
		cr_assert_gt(server_counter(&srv, "compact_windows"), 0,
			     "%s: no compaction window opened", row->name);
	}
}

/* One line of a history, as much as the test needs of it. */
struct line {
	char op[4], key[80], arg[17], result[17];
	unsigned client;
	uint64_t invoke, ret; /* ret: UINT64_MAX if no reply */
};

static int line_parse(const char *text, struct line *l)
{
	char ret[24];

	if (sscanf(text, "%u %3s %79s %16s %" SCNu64 " %23s %16s", &l->client, l->op, l->key,
		   l->arg, &l->invoke, ret, l->result) != 7)
		return -EINVAL;
	l->ret = strcmp(ret, "-") ? strtoull(ret, NULL, 10) : UINT64_MAX;
	return 0;
}

static struct line *history_read(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct line *lines = NULL;
	size_t cap = 0;
	char text[256];

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	*n = 0;
	while (fgets(text, sizeof(text), f)) {
		if (text[0] == '#')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4096;
			lines = realloc(lines, cap * sizeof(*lines));
			cr_assert_not_null(lines);
		}
		cr_assert_eq(line_parse(text, &lines[*n]), 0, "%s: cannot read %s", path, text);
		(*n)++;
	}
	fclose(f);
	return lines;
}

static bool put_ok(const struct line *l, const char *key)
{
	return !strcmp(l->op, "put") && !strcmp(l->result, "ok") && !strcmp(l->key, key);
}

/*
 * A get g that can be made stale: on its key, an answered put p1 whose value a second
 * answered put p2, invoked after p1 returned, replaced before g was invoked. No other
 * put writes p1's value (values are unique), so g may not return it. Returns p1's
 * index, or -1.
 */
static long stale_put_for(const struct line *lines, size_t n, size_t g)
{
	for (size_t p1 = 0; p1 < n; p1++) {
		if (!put_ok(&lines[p1], lines[g].key) || !strcmp(lines[p1].arg, lines[g].result))
			continue;
		for (size_t p2 = 0; p2 < n; p2++) {
			if (put_ok(&lines[p2], lines[g].key) && lines[p2].invoke > lines[p1].ret &&
			    lines[p2].ret < lines[g].invoke)
				return (long)p1;
		}
	}
	return -1;
}

Test(linearizable, a_stale_read_planted_in_a_real_history_is_found)
{
	static const struct lin_row crew = {"crew", "", {"--policy", "crew"}, 0};
	struct line *lines;
	size_t n, g;
	long p1 = -1;
	FILE *f;

	server_up(&crew);
	record(&crew, "1");
	cr_assert_eq(lincheck(history), 0, "the real history is not linearizable as recorded");

	lines = history_read(history, &n);
	/* a get late in the run: an early put long overwritten is easy to find */
	for (g = n / 2; g < n; g++) {
		if (!strcmp(lines[g].op, "get") && strcmp(lines[g].result, "none"))
			p1 = stale_put_for(lines, n, g);
		if (p1 >= 0)
			break;
	}
	cr_assert_geq(p1, 0, "no get of %zu operations could be made stale", n);
	cr_log_info("get of client %u at line %zu returns put %ld's older value %s instead of %s",
		    lines[g].client, g + 2, p1 + 2, lines[p1].arg, lines[g].result);
	strcpy(lines[g].result, lines[p1].arg);

	f = fopen(history, "w");
	cr_assert_not_null(f);
	fputs("# xkv-history 1\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct line *l = &lines[i];
		char ret[24] = "-";

		if (l->ret != UINT64_MAX)
			snprintf(ret, sizeof(ret), "%" PRIu64, l->ret);
		fprintf(f, "%u %s %s %s %" PRIu64 " %s %s\n", l->client, l->op, l->key, l->arg,
			l->invoke, ret, l->result);
	}
	cr_assert_eq(fclose(f), 0);
	free(lines);
	cr_assert_eq(lincheck(history), 1, "the planted stale read was not found");
}
