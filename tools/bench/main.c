// SPDX-License-Identifier: MIT
/*
 * xkv-bench: a closed-loop load generator for xkv over kernel UDP.
 *
 * Each thread owns one connected socket and keeps --depth requests outstanding.
 * First the keys are loaded with PUTs (not measured), then every thread runs the
 * GET/PUT mix for --duration seconds; the table or JSON object on stdout says how
 * many requests were answered and how fast. docs/BENCH.md explains every number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "closed_loop.h"
#include "report.h"
#include "udp.h"

#define THREADS_MAX 256
#define NS_PER_S    1000000000ULL

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

struct bench_opts {
	const char *server;
	const char *label;
	unsigned threads, depth;
	double duration_s;
	uint32_t warmup_keys; /* the first this many keys are PUT before measuring */
	struct workload_config workload;
	uint64_t seed;
	uint64_t timeout_ms;
	bool json;
};

struct bench_thread {
	pthread_t pthread;
	unsigned index;
	const struct bench_opts *opts;
	struct transport *transport;
	struct closed_loop loop;
	struct bench_stats load, measured;
	uint64_t loaded_ns, stopped_ns; /* when this thread finished each phase */
	int err;			/* 0 or the -errno that stopped it */
	const char *failed;		/* the phase err belongs to */
};

/* Every thread stops at this instant; SIGINT and a failing thread move it to 0. */
static _Atomic uint64_t deadline_ns = UINT64_MAX;
static pthread_barrier_t loaded, measuring;

static const char usage[] =
	"usage: xkv-bench --server HOST[:PORT] [options]\n"
	"Closed-loop load on an xkv server over UDP: each thread keeps --depth requests\n"
	"outstanding, first PUTs the keys (not measured), then runs the GET/PUT mix.\n"
	"\n"
	"  -s, --server HOST[:PORT]  the server (port 7411 by default)\n"
	"  -t, --threads N           threads, one socket each (1)\n"
	"  -d, --depth D             requests outstanding per thread, 1..4096 (16)\n"
	"  -D, --duration S          seconds measured (5)\n"
	"  -k, --keys K              key space (100000)\n"
	"      --warmup-keys N       PUT the first N keys before measuring (all K)\n"
	"      --no-load             PUT nothing before measuring\n"
	"      --get-ratio R         fraction of GETs, the rest PUTs (0.95)\n"
	"      --key-size B          bytes per key: \"k\" + zero-padded index (16)\n"
	"      --value-size B        bytes per value, at most 1400 (64)\n"
	"      --zipf GAMMA          key popularity exponent, 0 for uniform (0)\n"
	"      --seed N              fixes every thread's request sequence (1)\n"
	"      --timeout-ms MS       a request without a reply by then is lost (100)\n"
	"      --label NAME          names the run in the output (xkv-bench)\n"
	"      --json                one JSON object on stdout instead of a table\n"
	"  -h, --help\n"
	"\n"
	"JSON fields: label server transport threads depth duration_s seed timeout_ms keys\n"
	"key_size value_size get_ratio zipf; load {keys seconds ok lost errors}; all, get,\n"
	"put {ops ops_per_s p50_us p90_us p99_us p999_us mean_us max_us misses errors lost};\n"
	"late invalid. ops counts answers (right values and misses); latencies are of those.\n"
	"Exit status: 0 measured, 1 the run failed or got no reply, 2 bad options.\n";

static int parse_uint(const char *name, const char *arg, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "xkv-bench: %s %s: expected a whole number in %llu..%llu\n", name,
			arg, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_real(const char *name, const char *arg, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= min && v <= max)) {
		fprintf(stderr, "xkv-bench: %s %s: expected a number in %g..%g\n", name, arg, min,
			max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	enum {
		OPT_WARMUP_KEYS = 256, OPT_NO_LOAD, OPT_GET_RATIO, OPT_KEY_SIZE, OPT_VALUE_SIZE,
		OPT_ZIPF, OPT_SEED, OPT_TIMEOUT_MS, OPT_LABEL, OPT_JSON,
	};
	static const struct option opts[] = {
		{"server", required_argument, NULL, 's'},
		{"threads", required_argument, NULL, 't'},
		{"depth", required_argument, NULL, 'd'},
		{"duration", required_argument, NULL, 'D'},
		{"keys", required_argument, NULL, 'k'},
		{"warmup-keys", required_argument, NULL, OPT_WARMUP_KEYS},
		{"no-load", no_argument, NULL, OPT_NO_LOAD},
		{"get-ratio", required_argument, NULL, OPT_GET_RATIO},
		{"key-size", required_argument, NULL, OPT_KEY_SIZE},
		{"value-size", required_argument, NULL, OPT_VALUE_SIZE},
		{"zipf", required_argument, NULL, OPT_ZIPF},
		{"seed", required_argument, NULL, OPT_SEED},
		{"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
		{"label", required_argument, NULL, OPT_LABEL},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct workload_config *w = &o->workload;
	bool warmup_given = false, no_load = false;
	uint64_t v;
	int opt, err = 0;
	char why[200];

	*o = (struct bench_opts){
		.label = "xkv-bench",
		.threads = 1,
		.depth = 16,
		.duration_s = 5,
		.seed = 1,
		.timeout_ms = 100,
		.workload = {.keys = 100000, .key_size = 16, .value_size = 64, .get_ratio = 0.95},
	};
	while (!err && (opt = getopt_long(argc, argv, "s:t:d:D:k:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->server = optarg;
			break;
		case 't':
			err = parse_uint("--threads", optarg, 1, THREADS_MAX, &v);
			o->threads = (unsigned)v;
			break;
		case 'd':
			err = parse_uint("--depth", optarg, 1, LOOP_DEPTH_MAX, &v);
			o->depth = (unsigned)v;
			break;
		case 'D':
			err = parse_real("--duration", optarg, 0.001, 86400, &o->duration_s);
			break;
		case 'k':
			err = parse_uint("--keys", optarg, 1, WORKLOAD_KEYS_MAX, &v);
			w->keys = (uint32_t)v;
			break;
		case OPT_WARMUP_KEYS:
			err = parse_uint("--warmup-keys", optarg, 0, WORKLOAD_KEYS_MAX, &v);
			o->warmup_keys = (uint32_t)v;
			warmup_given = true;
			break;
		case OPT_NO_LOAD:
			no_load = true;
			break;
		case OPT_GET_RATIO:
			err = parse_real("--get-ratio", optarg, 0, 1, &w->get_ratio);
			break;
		case OPT_KEY_SIZE:
			err = parse_uint("--key-size", optarg, XKV_KEY_MIN, XKV_KEY_MAX, &v);
			w->key_size = (uint32_t)v;
			break;
		case OPT_VALUE_SIZE:
			err = parse_uint("--value-size", optarg, 0, XKV_VALUE_MAX, &v);
			w->value_size = (uint32_t)v;
			break;
		case OPT_ZIPF:
			err = parse_real("--zipf", optarg, 0, 100, &w->zipf);
			break;
		case OPT_SEED:
			err = parse_uint("--seed", optarg, 0, UINT64_MAX, &o->seed);
			break;
		case OPT_TIMEOUT_MS:
			err = parse_uint("--timeout-ms", optarg, 1, 60000, &o->timeout_ms);
			break;
		case OPT_LABEL:
			o->label = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "xkv-bench: unexpected argument %s\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->server) {
		fprintf(stderr, "xkv-bench: --server HOST[:PORT] is required\n");
		return -EINVAL;
	}
	if (warmup_given && no_load) {
		fprintf(stderr, "xkv-bench: --warmup-keys and --no-load contradict each other\n");
		return -EINVAL;
	}
	if (!warmup_given)
		o->warmup_keys = no_load ? 0 : w->keys;
	if (o->warmup_keys > w->keys) {
		fprintf(stderr, "xkv-bench: --warmup-keys %u: more than the %u --keys\n",
			o->warmup_keys, w->keys);
		return -EINVAL;
	}
	if (workload_config_check(w, why, sizeof(why))) {
		fprintf(stderr, "xkv-bench: %s\n", why);
		return -EINVAL;
	}
	return 0;
}

static void stop_now(int sig)
{
	(void)sig;
	atomic_store(&deadline_ns, 0);
}

/* A thread that fails stops the others: a partial run measures nothing useful. */
static void fail(struct bench_thread *t, const char *phase, int err)
{
	t->err = err;
	t->failed = phase;
	atomic_store(&deadline_ns, 0);
}

static void *thread_main(void *arg)
{
	struct bench_thread *t = arg;
	const struct bench_opts *o = t->opts;
	int err = 0;

	/* thread i loads keys i, i + threads, ...: each key once, spread evenly */
	if (o->warmup_keys)
		err = closed_loop_load(&t->loop, t->index, o->threads, o->warmup_keys, &t->load);
	if (err && err != -EINTR)
		fail(t, "loading", err);
	t->loaded_ns = bench_now_ns();
	pthread_barrier_wait(&loaded);
	pthread_barrier_wait(&measuring);
	if (!err) {
		err = closed_loop_measure(&t->loop, &t->measured);
		if (err)
			fail(t, "measuring", err);
	}
	t->stopped_ns = bench_now_ns();
	return NULL;
}

static const struct bench_thread *first_failure(const struct bench_thread *threads, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (threads[i].failed)
			return &threads[i];
	return NULL;
}

static void say_failure(const struct bench_opts *o, const struct bench_thread *t)
{
	const char *hint = "";

	if (t->err == -ECONNREFUSED)
		hint = " (is a server listening there?)";
	else if (t->err == -ETIMEDOUT)
		hint = " (no reply for 1 s)";
	fprintf(stderr, "xkv-bench: thread %u, %s against %s: %s%s\n", t->index, t->failed,
		o->server, strerror(-t->err), hint);
}

static void print_progress(const struct bench_thread *threads, unsigned n, uint64_t elapsed_ns)
{
	uint64_t answered = 0;

	for (unsigned i = 0; i < n; i++)
		answered += atomic_load_explicit(&threads[i].loop.answered, memory_order_relaxed);
	fprintf(stderr, "\r%6.1f s %12.0f ops/s\033[K", elapsed_ns / 1e9,
		answered / (elapsed_ns / 1e9));
}

/* Until the deadline; once a second, ops/s so far on stderr when it is a terminal. */
static void wait_for_deadline(const struct bench_thread *threads, unsigned n, uint64_t start)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t next_line = start + NS_PER_S;

	for (;;) {
		uint64_t deadline = atomic_load(&deadline_ns), now = bench_now_ns(), until;
		struct timespec nap;

		if (now >= deadline)
			break;
		if (now >= next_line) {
			if (tty)
				print_progress(threads, n, now - start);
			next_line += NS_PER_S;
		}
		until = deadline < next_line ? deadline : next_line;
		nap = (struct timespec){.tv_sec = (until - now) / NS_PER_S,
					.tv_nsec = (until - now) % NS_PER_S};
		nanosleep(&nap, NULL); /* SIGINT cuts it short and moves the deadline */
	}
	if (tty)
		fputs("\r\033[K", stderr);
}

/* Merges the threads' counts and prints them. Returns 0, or -ETIMEDOUT when nothing replied. */
static int report(const struct bench_opts *o, const struct bench_thread *threads,
		  uint64_t load_start, uint64_t start)
{
	struct bench_stats *load = malloc(sizeof(*load)), *measured = malloc(sizeof(*measured));
	uint64_t loaded_ns = load_start, stopped_ns = start, replied = 0, lost = 0;
	struct run_report r;
	int err = 0;

	if (!load || !measured) {
		fprintf(stderr, "xkv-bench: merging the results: %s\n", strerror(ENOMEM));
		err = -ENOMEM;
		goto out_free;
	}
	bench_stats_init(load);
	bench_stats_init(measured);
	for (unsigned i = 0; i < o->threads; i++) {
		const struct bench_thread *t = &threads[i];

		bench_stats_merge(load, &t->load);
		bench_stats_merge(measured, &t->measured);
		/* a phase lasts until its last thread is done */
		if (t->loaded_ns > loaded_ns)
			loaded_ns = t->loaded_ns;
		if (t->stopped_ns > stopped_ns)
			stopped_ns = t->stopped_ns;
	}
	r = (struct run_report){
		.label = o->label,
		.server = o->server,
		.transport = "udp",
		.threads = o->threads,
		.depth = o->depth,
		.seed = o->seed,
		.timeout_ms = o->timeout_ms,
		.workload = &o->workload,
		.loaded_keys = o->warmup_keys,
		.load_seconds = o->warmup_keys ? (loaded_ns - load_start) / 1e9 : 0,
		.load = o->warmup_keys ? load : NULL,
		.seconds = (stopped_ns - start) / 1e9,
		.measured = measured,
	};
	if (o->json)
		report_json(stdout, &r);
	else
		report_table(stdout, &r);

	for (int op = 0; op < BENCH_OPS; op++) {
		replied += measured->op[op].ok + measured->op[op].misses + measured->op[op].errors;
		lost += measured->op[op].lost;
	}
	if (!replied) {
		fprintf(stderr, "xkv-bench: no reply from %s in %.1f s (%llu requests lost)\n",
			o->server, r.seconds, (unsigned long long)lost);
		err = -ETIMEDOUT;
	}
out_free:
	free(load);
	free(measured);
	return err;
}

/* One socket and one loop per thread; *opened says how many to close. */
static int open_threads(struct bench_thread *threads, const struct bench_opts *o,
			const struct workload *w, const struct sockaddr_storage *addr,
			socklen_t addr_len, unsigned *opened)
{
	unsigned batch = o->depth < UDP_BATCH_MAX ? o->depth : UDP_BATCH_MAX;

	for (unsigned i = 0; i < o->threads; i++) {
		struct bench_thread *t = &threads[i];
		struct loop_config loop = {
			.depth = o->depth,
			.timeout_ns = o->timeout_ms * 1000000ULL,
			.seed = o->seed,
			.stream = i,
			.deadline_ns = &deadline_ns,
		};
		int err;

		t->index = i;
		t->opts = o;
		err = udp_transport_open(addr, addr_len, batch, &t->transport);
		if (err) {
			fprintf(stderr, "xkv-bench: thread %u: opening a socket to %s: %s\n", i,
				o->server, strerror(-err));
			return err;
		}
		err = closed_loop_init(&t->loop, t->transport, w, &loop);
		if (err) {
			fprintf(stderr, "xkv-bench: thread %u: %s\n", i, strerror(-err));
			transport_close(t->transport);
			return err;
		}
		*opened = i + 1;
	}
	return 0;
}

/*
 * Loads, then measures until the deadline, with every thread. Returns whether the
 * measured phase began (neither SIGINT nor a failing thread stopped the loading).
 */
static bool run_threads(struct bench_thread *threads, const struct bench_opts *o,
			uint64_t *load_start, uint64_t *start)
{
	struct sigaction stop = {.sa_handler = stop_now};
	sigset_t stop_signals;
	bool measure;

	/* only this thread takes SIGINT, so that it wakes at once to end the run */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	pthread_barrier_init(&loaded, NULL, o->threads + 1);
	pthread_barrier_init(&measuring, NULL, o->threads + 1);
	*load_start = bench_now_ns();
	for (unsigned i = 0; i < o->threads; i++) {
		int err = pthread_create(&threads[i].pthread, NULL, thread_main, &threads[i]);

		if (err) {
			/* the barriers count every thread: without this one nobody passes */
			fprintf(stderr, "xkv-bench: starting thread %u: %s\n", i, strerror(err));
			exit(EXIT_FAILED);
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);

	pthread_barrier_wait(&loaded);
	*start = bench_now_ns();
	/* unless SIGINT or a failing thread moved it to 0 meanwhile */
	measure = atomic_compare_exchange_strong(&deadline_ns, &(uint64_t){UINT64_MAX},
						 *start + (uint64_t)(o->duration_s * NS_PER_S));
	pthread_barrier_wait(&measuring);
	wait_for_deadline(threads, o->threads, *start);
	for (unsigned i = 0; i < o->threads; i++)
		pthread_join(threads[i].pthread, NULL);
	pthread_barrier_destroy(&loaded);
	pthread_barrier_destroy(&measuring);
	return measure;
}

int main(int argc, char **argv)
{
	const struct bench_thread *failed;
	struct bench_thread *threads;
	struct sockaddr_storage addr;
	struct workload workload;
	struct bench_opts o;
	uint64_t load_start, start;
	socklen_t addr_len;
	unsigned opened = 0;
	bool measured;
	int err, status = EXIT_FAILED;

	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	err = udp_resolve(o.server, &addr, &addr_len);
	if (err == -EINVAL) {
		fprintf(stderr, "xkv-bench: --server %s: not HOST, HOST:PORT or [IPV6]:PORT\n",
			o.server);
		return EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, "xkv-bench: --server %s: the host does not resolve\n", o.server);
		return EXIT_USAGE;
	}
	err = workload_init(&workload, &o.workload);
	if (err) {
		fprintf(stderr, "xkv-bench: building the workload: %s\n", strerror(-err));
		return EXIT_FAILED;
	}
	threads = calloc(o.threads, sizeof(*threads));
	if (!threads) {
		fprintf(stderr, "xkv-bench: %u threads: %s\n", o.threads, strerror(ENOMEM));
		goto out_free_workload;
	}
	if (open_threads(threads, &o, &workload, &addr, addr_len, &opened))
		goto out_close_threads;

	measured = run_threads(threads, &o, &load_start, &start);
	failed = first_failure(threads, o.threads);
	if (failed)
		say_failure(&o, failed);
	else if (!measured)
		fprintf(stderr, "xkv-bench: interrupted while loading\n");
	else if (!report(&o, threads, load_start, start))
		status = 0;

out_close_threads:
	for (unsigned i = 0; i < opened; i++) {
		closed_loop_free(&threads[i].loop);
		transport_close(threads[i].transport);
	}
	free(threads);
out_free_workload:
	workload_free(&workload);
	return status;
}
