// SPDX-License-Identifier: MIT
/*
 * Linearizability end to end (docs/LINEARIZABILITY.md): an XDP server in the test
 * namespaces, xkv-linload's clients on 4 hot keys for a couple of seconds while
 * xkv-bench keeps the workers' queues busy reading the same keys, then xkv-lincheck
 * on the history. Each row of the table is one server: its binary, its extra flags,
 * and what must come of it. A history is only worth checking if most of the load was
 * answered: at least MIN_ANSWERED operations, at most MAX_UNKNOWN_PCT % without a
 * reply. A row that must fail shows the pipeline can say no; so does the second test,
 * on a real history with one read made stale.
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
/*
 * A row's 2 s gave 25 k to 166 k operations idle, none unanswered; at load average 8 to
 * 9, 1231 with 16 unanswered (1.3 %). A server that never answers a PUT: 30 to 47, half
 * of them unanswered (docs/LINEARIZABILITY.md).
 */
#define MIN_ANSWERED	1000
#define MAX_UNKNOWN_PCT 5

/* What a row must give, beside xkv-lincheck's exits 0 (linearizable) and 1 (not). */
enum {
	BAD_REPLIES = 10, /* xkv-linload fails (exit 2): replies that make no sense */
	TOO_FEW,	  /* xkv-linload's summary is below the floor */
};

/* Arrays, not pointers: Criterion runs each row in a new process image (ASLR). */
struct lin_row {
	char name[24];
	char server[256];  /* the binary; "": this build's xkv-server */
	char args[8][32];  /* flags after the common ones, e.g. the policy; "" ends them */
	int expect;	   /* xkv-lincheck's exit (0 linearizable, 1 not), BAD_REPLIES, TOO_FEW */
};

/*
 * Every policy with write compaction off and on. xkv-server --echo answers PUT ok and
 * GET not found without a store: never linearizable; nor is a server built to answer
 * compacted PUTs before applying them (C-4's execution E1). tests/xkv-broken-server
 * answers nonsense (a PUT NOT_FOUND, a GET BAD_REQUEST), or never a PUT: histories
 * of unknown outcomes, which are linearizable and show nothing.
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
	{"bad-replies-says-no", XKV_BROKEN_SERVER_BIN, {"--bad-replies"}, BAD_REPLIES},
	{"no-put-replies-says-no", XKV_BROKEN_SERVER_BIN, {"--no-put-replies"}, TOO_FEW},
};

/* xkv-linload's summary, its last line on stderr. */
struct load_sum {
	uint64_t ops, get, put, del, none, unknown, refused, bad;
};

static struct server_proc srv;
static char allow[64];
static pid_t bench_pid;
static char history[64], load_log[72];

static void setup(void)
{
	netns_test_setup(&srv, allow);
	snprintf(history, sizeof(history), "/tmp/xkv-test-lin-%d.hist", getpid());
	snprintf(load_log, sizeof(load_log), "%s.log", history);
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
	unlink(load_log);
}

TestSuite(linearizable, .init = setup, .fini = teardown, .timeout = 120);

/* Runs argv with stdout to /dev/null, and stderr to err_path unless it is NULL. */
static pid_t spawn(const char *const *argv, const char *err_path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (err_path) {
			fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
				_exit(126);
		}
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

/* Shows linload's stderr (load_log) on ours, and reads its summary, the last line. */
static void load_summary(const struct lin_row *row, struct load_sum *sum)
{
	FILE *f = fopen(load_log, "r");
	char line[512];
	double secs, rate;
	int n = 0;

	cr_assert_not_null(f, "%s: %s", load_log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stderr);
		n = sscanf(line,
			   "xkv-linload: %" SCNu64 " ops in %lf s (%lf ops/s): get %" SCNu64
			   ", put %" SCNu64 ", del %" SCNu64 "; not found %" SCNu64
			   ", no reply %" SCNu64 ", refused %" SCNu64 ", bad replies %" SCNu64,
			   &sum->ops, &secs, &rate, &sum->get, &sum->put, &sum->del, &sum->none,
			   &sum->unknown, &sum->refused, &sum->bad);
	}
	fclose(f);
	cr_assert_eq(n, 10, "%s: no summary last from xkv-linload", row->name);
}

/*
 * The history of LOAD_SECONDS of linload, with xkv-bench reading the same keys.
 * Returns linload's exit status, its summary in *sum.
 */
static int record(const struct lin_row *row, const char *seconds, struct load_sum *sum)
{
	const char *bench[] = {XKV_BENCH_BIN, "--server", server_addr(&srv), "--keys", HOT_KEYS,
			       "--no-load", "--get-ratio", "1", "--rate", BENCH_RATE,
			       "--duration", BENCH_SECONDS, NULL};
	const char *load[] = {XKV_LINLOAD_BIN, "--server", server_addr(&srv), "--keys", HOT_KEYS,
			      "--duration", seconds, "--out", history, NULL};
	pid_t pid;
	int status, load_status;

	fflush(NULL);
	bench_pid = spawn(bench, NULL);
	cr_assert_gt(bench_pid, 0, "fork: %s", strerror(errno));
	pid = spawn(load, load_log);
	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	load_status = child_wait(pid);
	load_summary(row, sum);
	/* its reads were load, not checks: values it does not know are its errors, not ours */
	cr_assert_eq(waitpid(bench_pid, &status, WNOHANG), 0,
		     "%s: xkv-bench did not last the load (status %d)", row->name, status);
	kill(bench_pid, SIGKILL);
	waitpid(bench_pid, NULL, 0);
	bench_pid = 0;
	return load_status;
}

/* Whether the load was answered enough for its history to say something; says why not. */
static bool answered_enough(const struct lin_row *row, const struct load_sum *sum)
{
	uint64_t answered = sum->ops - sum->unknown - sum->refused - sum->bad;

	if (answered < MIN_ANSWERED) {
		cr_log_info("%s: %" PRIu64 " operations answered, fewer than %d", row->name,
			    answered, MIN_ANSWERED);
		return false;
	}
	if (sum->unknown * 100 > sum->ops * MAX_UNKNOWN_PCT) {
		cr_log_info("%s: %" PRIu64 " of %" PRIu64 " operations unanswered, over %d %%",
			    row->name, sum->unknown, sum->ops, MAX_UNKNOWN_PCT);
		return false;
	}
	return true;
}

/* A run of LOAD_SECONDS s that must have gone well: exit 0 and answered enough. */
static void record_useful(const struct lin_row *row, const char *seconds)
{
	struct load_sum sum;
	int status = record(row, seconds, &sum);

	cr_assert_eq(status, 0, "%s: xkv-linload exited %d", row->name, status);
	cr_assert(answered_enough(row, &sum), "%s: the history says too little", row->name);
}

ParameterizedTestParameters(linearizable, policies)
{
	return cr_make_param_array(struct lin_row, rows, sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(struct lin_row *row, linearizable, policies)
{
	struct load_sum sum;
	int status;

	server_up(row);
	if (row->expect == BAD_REPLIES) {
		status = record(row, LOAD_SECONDS, &sum);
		cr_assert_eq(status, 2, "%s: xkv-linload exited %d, expected 2", row->name, status);
		cr_assert_gt(sum.bad, 0, "%s: no bad reply counted", row->name);
		return;
	}
	if (row->expect == TOO_FEW) {
		status = record(row, LOAD_SECONDS, &sum);
		cr_assert_eq(status, 0, "%s: xkv-linload exited %d", row->name, status);
		cr_assert_not(answered_enough(row, &sum), "%s: its history passed the floor",
			      row->name);
		return;
	}
	record_useful(row, LOAD_SECONDS);
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
	record_useful(&crew, "1");
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
