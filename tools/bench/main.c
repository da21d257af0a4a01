// SPDX-License-Identifier: MIT
/*
 * xkv-bench: a load generator for xkv, over kernel UDP or AF_XDP.
 *
 * Each thread owns one transport (a connected UDP socket, or an AF_XDP socket on
 * the client interface). First the keys are loaded with PUTs (not measured), then
 * every thread runs the GET/PUT mix: in a closed loop (--depth outstanding), in an
 * open loop (--rate, Poisson arrivals, latency from the intended send time), or in
 * a sweep of short open-loop steps that finds the highest rate meeting a p99 SLO.
 * The table or JSON object on stdout says what was measured; docs/BENCH.md
 * explains every number.
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

#include "afxdp.h"
#include "clock.h"
#include "loop.h"
#include "report.h"
#include "sweep.h"
#include "udp.h"

#define THREADS_MAX	   256
#define NS_PER_S	   1000000000ULL
#define CLOSED_DEPTH	   16
#define OPEN_DEPTH	   1024	  /* open loop: the most outstanding per thread */
#define SWEEP_START	   1000	  /* requests per second of a sweep's first step */
#define SWEEP_MAX	   1e7
#define SWEEP_PERCENTILE   99
#define SWEEP_STEP_S	   1	  /* a sweep step's length, unless --duration */
#define SWEEP_PRECISION	   0.05	  /* bisection stops within 5 % */
#define SWEEP_STEPS	   30
#define SWEEP_RETRIES	   1	  /* a rate fails after two misses in a row */
#define SWEEP_SETTLE_NS	   200000000ULL /* before each step: the last one's queues drain */

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

enum bench_transport { TRANSPORT_UDP, TRANSPORT_XDP };

struct bench_opts {
	const char *server;
	const char *label;
	enum bench_transport transport;
	const struct bench_proto *proto;
	const char *iface; /* xdp: the client interface */
	uint32_t queue;	   /* xdp: its rx queue the sockets bind to */
	unsigned threads, depth;
	double duration_s; /* a sweep: of each step */
	double rate;	   /* open loop: requests per second, all threads; 0: closed */
	bool sweep;
	double slo_us, slo_mult, sweep_max;
	unsigned sweep_retries;
	double slo_pct; /* the percentile the SLO bounds */
	const char *csv;      /* a sweep's steps as CSV */
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
	struct loop loop;
	struct bench_stats load, measured;
	uint64_t loaded_ns, stopped_ns; /* when this thread finished loading, the last round */
	int err;			/* 0 or the -errno that stopped it */
	const char *failed;		/* the phase err belongs to */
};

/* A run: its options, threads and merged results. */
struct bench {
	struct bench_opts o;
	struct workload workload;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct afxdp_client *xdp;
	struct bench_thread *threads;
	unsigned opened;		  /* threads with a transport and a loop */
	unsigned started;		  /* of those, threads running */
	uint64_t load_start, loaded_ns;	  /* the load phase */
	struct bench_stats *load, *measured; /* merged: the load, the last round */
	struct op_stats *total;		  /* the last round, GETs and PUTs together */
	double seconds;			  /* the last round's window */
};

/* Every thread stops at this instant; SIGINT and a failing thread move it to 0. */
static _Atomic uint64_t deadline_ns = UINT64_MAX;
static atomic_bool stopping; /* SIGINT or SIGTERM */

/*
 * Threads load, then run rounds (one, or a sweep's steps) between two barriers; the
 * main thread sets the round's rate, or quit, while they wait. The barriers count
 * only threads that started: the gate holds them until that number is known.
 */
static struct {
	pthread_mutex_t gate;
	pthread_barrier_t start, done;
	double rate; /* per thread; 0: closed loop */
	bool quit;
} rounds = {.gate = PTHREAD_MUTEX_INITIALIZER};

static const char usage[] =
	"usage: xkv-bench --server HOST[:PORT] [options]\n"
	"Load on an xkv server: each thread first PUTs its share of the keys (not measured),\n"
	"then runs the GET/PUT mix in a closed loop (--depth outstanding), an open loop\n"
	"(--rate, Poisson arrivals), or a sweep of open-loop steps (--sweep).\n"
	"\n"
	"  -s, --server HOST[:PORT]  the server (port 7411 by default)\n"
	"      --protocol NAME       what the server speaks (xkv): xkv; memcached, its UDP\n"
	"                            frame and the ASCII protocol; memcached-binary, its\n"
	"                            UDP frame and the binary protocol\n"
	"      --transport udp|xdp   kernel UDP sockets, or AF_XDP sockets on --iface (udp)\n"
	"      --iface IF            xdp: the client interface (an XDP program is attached)\n"
	"      --queue Q             xdp: the rx queue the sockets bind to (0)\n"
	"  -t, --threads N           threads, one socket each (1; xdp: at most 4)\n"
	"  -d, --depth D             closed loop: requests outstanding per thread (16);\n"
	"                            open loop: the most outstanding per thread (1024)\n"
	"  -r, --rate R              open loop: R requests per second in all, R/threads each\n"
	"  -D, --duration S          seconds measured (5; a sweep: per step, 1)\n"
	"      --sweep               find the highest --rate whose p99 meets the SLO,\n"
	"                            starting at --rate (1000); a line per step on stderr\n"
	"      --slo-us X            sweep: p99 SLO in microseconds, or\n"
	"      --slo-mult M          sweep: p99 SLO as M x the first step's mean latency\n"
	"      --slo-percentile P    sweep: the percentile the SLO bounds (99)\n"
	"      --sweep-max R         sweep: highest rate tried (10000000)\n"
	"      --sweep-retries N     sweep: steps run again at a rate that missed the\n"
	"                            SLO before it counts as failed (1)\n"
	"      --csv FILE            sweep: every step as CSV (plot_latency.py reads it)\n"
	"  -k, --keys K              key space (100000)\n"
	"      --warmup-keys N       PUT the first N keys before measuring (all K)\n"
	"      --no-load             PUT nothing before measuring\n"
	"      --get-ratio R         fraction of GETs, the rest PUTs (0.95)\n"
	"      --key-size B          bytes per key: \"k\" + zero-padded index (16)\n"
	"      --value-size B        bytes per value (64); over one datagram it goes in\n"
	"                            pieces (xkv)\n"
	"      --value-profile P     value sizes: fixed (--value-size), bimodal (small of\n"
	"                            --value-size, large of --large-size) or etc (Minos's\n"
	"                            trimodal ETC: tiny 1-13 B, small 14-1400 B, large\n"
	"                            1500 B to --large-size) (fixed)\n"
	"      --large-pct P         bimodal, etc: percent of requests for large values\n"
	"                            (0.125)\n"
	"      --large-size B        bimodal: a large value's bytes; etc: the largest\n"
	"                            (512000)\n"
	"      --large-keys N        bimodal, etc: keys holding large values, the last\n"
	"                            ones (Minos's share, 10 K in 16 M, at least 1)\n"
	"      --zipf GAMMA          key popularity exponent, 0 for uniform (0)\n"
	"      --seed N              fixes every thread's requests and schedule (1)\n"
	"      --timeout-ms MS       a request without a reply by then is lost (100)\n"
	"      --label NAME          names the run in the output (xkv-bench)\n"
	"      --json                one JSON object on stdout instead of a table\n"
	"  -h, --help\n"
	"\n"
	"JSON fields: label server transport threads depth rate duration_s seed timeout_ms\n"
	"keys key_size value_size value_profile large_pct large_size large_keys get_ratio\n"
	"zipf; xdp {iface queue mode redirected wrong_queue no_socket} with --transport\n"
	"xdp; load {keys seconds ok lost errors}; all, get, put and, with a bimodal or etc\n"
	"profile, each size class that had requests (tiny <= 13 B, small <= 1400 B, large)\n"
	"{ops ops_per_s p50_us p90_us p99_us p999_us mean_us max_us misses errors lost};\n"
	"open_loop {scheduled_per_s send_lag_p50_us send_lag_p99_us\n"
	"send_lag_max_us unsent behind_ms slot_waits} with --rate; late invalid.\n"
	"A sweep: the run fields, then sweep slo_us slo_percentile service_us retries\n"
	"rate_found bracketed steps [{offered_per_s scheduled_per_s achieved_per_s p50_us\n"
	"p99_us tail_us mean_us send_lag_p99_us lost errors unsent meets_slo retry}].\n"
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

static int parse_profile(const char *arg, enum workload_profile *out)
{
	for (enum workload_profile p = WORKLOAD_FIXED; p <= WORKLOAD_ETC; p++) {
		if (!strcmp(arg, workload_profile_name(p))) {
			*out = p;
			return 0;
		}
	}
	fprintf(stderr, "xkv-bench: --value-profile %s: fixed, bimodal or etc\n", arg);
	return -EINVAL;
}

/* What --sweep, --transport and --rate imply, and what they refuse. */
static int check_modes(struct bench_opts *o, bool depth_given, bool duration_given)
{
	if (o->transport == TRANSPORT_XDP && !o->iface) {
		fprintf(stderr, "xkv-bench: --transport xdp needs --iface\n");
		return -EINVAL;
	}
	if (o->transport != TRANSPORT_XDP && o->iface) {
		fprintf(stderr, "xkv-bench: --iface is for --transport xdp\n");
		return -EINVAL;
	}
	if (o->transport == TRANSPORT_XDP && o->threads > AFXDP_THREADS_MAX) {
		fprintf(stderr, "xkv-bench: --transport xdp: at most %d threads\n",
			AFXDP_THREADS_MAX);
		return -EINVAL;
	}
	if (!o->sweep && (o->slo_us || o->slo_mult || o->slo_pct || o->csv || o->sweep_max)) {
		fprintf(stderr, "xkv-bench: --slo-us, --slo-mult, --slo-percentile, --sweep-max "
				"and --csv are for --sweep\n");
		return -EINVAL;
	}
	if (o->sweep && !o->slo_us == !o->slo_mult) {
		fprintf(stderr, "xkv-bench: --sweep needs one of --slo-us and --slo-mult\n");
		return -EINVAL;
	}
	if (o->sweep) {
		if (!o->rate)
			o->rate = SWEEP_START;
		if (!o->sweep_max)
			o->sweep_max = SWEEP_MAX;
		if (!o->slo_pct)
			o->slo_pct = SWEEP_PERCENTILE;
		if (!duration_given)
			o->duration_s = SWEEP_STEP_S;
		if (o->sweep_max < o->rate) {
			fprintf(stderr, "xkv-bench: --sweep-max %g is below the first rate %g\n",
				o->sweep_max, o->rate);
			return -EINVAL;
		}
	}
	if (!depth_given)
		o->depth = o->rate > 0 ? OPEN_DEPTH : CLOSED_DEPTH;
	return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	enum {
		OPT_WARMUP_KEYS = 256, OPT_NO_LOAD, OPT_GET_RATIO, OPT_KEY_SIZE, OPT_VALUE_SIZE,
		OPT_ZIPF, OPT_SEED, OPT_TIMEOUT_MS, OPT_LABEL, OPT_JSON, OPT_TRANSPORT, OPT_IFACE,
		OPT_QUEUE, OPT_SWEEP, OPT_SLO_US, OPT_SLO_MULT, OPT_SLO_PCT, OPT_SWEEP_MAX, OPT_CSV,
		OPT_PROTOCOL, OPT_SWEEP_RETRIES, OPT_VALUE_PROFILE, OPT_LARGE_PCT, OPT_LARGE_SIZE,
		OPT_LARGE_KEYS,
	};
	static const struct option opts[] = {
		{"server", required_argument, NULL, 's'},
		{"protocol", required_argument, NULL, OPT_PROTOCOL},
		{"transport", required_argument, NULL, OPT_TRANSPORT},
		{"iface", required_argument, NULL, OPT_IFACE},
		{"queue", required_argument, NULL, OPT_QUEUE},
		{"threads", required_argument, NULL, 't'},
		{"depth", required_argument, NULL, 'd'},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'D'},
		{"sweep", no_argument, NULL, OPT_SWEEP},
		{"slo-us", required_argument, NULL, OPT_SLO_US},
		{"slo-mult", required_argument, NULL, OPT_SLO_MULT},
		{"slo-percentile", required_argument, NULL, OPT_SLO_PCT},
		{"sweep-max", required_argument, NULL, OPT_SWEEP_MAX},
		{"sweep-retries", required_argument, NULL, OPT_SWEEP_RETRIES},
		{"csv", required_argument, NULL, OPT_CSV},
		{"keys", required_argument, NULL, 'k'},
		{"warmup-keys", required_argument, NULL, OPT_WARMUP_KEYS},
		{"no-load", no_argument, NULL, OPT_NO_LOAD},
		{"get-ratio", required_argument, NULL, OPT_GET_RATIO},
		{"key-size", required_argument, NULL, OPT_KEY_SIZE},
		{"value-size", required_argument, NULL, OPT_VALUE_SIZE},
		{"value-profile", required_argument, NULL, OPT_VALUE_PROFILE},
		{"large-pct", required_argument, NULL, OPT_LARGE_PCT},
		{"large-size", required_argument, NULL, OPT_LARGE_SIZE},
		{"large-keys", required_argument, NULL, OPT_LARGE_KEYS},
		{"zipf", required_argument, NULL, OPT_ZIPF},
		{"seed", required_argument, NULL, OPT_SEED},
		{"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
		{"label", required_argument, NULL, OPT_LABEL},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct workload_config *w = &o->workload;
	bool warmup_given = false, no_load = false, depth_given = false, duration_given = false;
	uint64_t v;
	int opt, err = 0;
	char why[200];

	*o = (struct bench_opts){
		.label = "xkv-bench",
		.proto = &bench_proto_xkv,
		.threads = 1,
		.duration_s = 5,
		.seed = 1,
		.timeout_ms = 100,
		.sweep_retries = SWEEP_RETRIES,
		.workload = {.keys = 100000, .key_size = 16, .value_size = 64, .get_ratio = 0.95,
			     .large_pct = 0.125, .large_size = 512000},
	};
	while (!err && (opt = getopt_long(argc, argv, "s:t:d:r:D:k:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->server = optarg;
			break;
		case OPT_PROTOCOL:
			o->proto = bench_proto_find(optarg);
			if (!o->proto) {
				fprintf(stderr, "xkv-bench: --protocol %s: xkv, memcached or "
						"memcached-binary\n", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_TRANSPORT:
			if (!strcmp(optarg, "udp") || !strcmp(optarg, "xdp")) {
				o->transport = optarg[0] == 'x' ? TRANSPORT_XDP : TRANSPORT_UDP;
			} else {
				fprintf(stderr, "xkv-bench: --transport %s: udp or xdp\n", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_IFACE:
			o->iface = optarg;
			break;
		case OPT_QUEUE:
			err = parse_uint("--queue", optarg, 0, 1023, &v);
			o->queue = (uint32_t)v;
			break;
		case 't':
			err = parse_uint("--threads", optarg, 1, THREADS_MAX, &v);
			o->threads = (unsigned)v;
			break;
		case 'd':
			err = parse_uint("--depth", optarg, 1, LOOP_DEPTH_MAX, &v);
			o->depth = (unsigned)v;
			depth_given = true;
			break;
		case 'r':
			err = parse_real("--rate", optarg, 1, 1e9, &o->rate);
			break;
		case 'D':
			err = parse_real("--duration", optarg, 0.001, 86400, &o->duration_s);
			duration_given = true;
			break;
		case OPT_SWEEP:
			o->sweep = true;
			break;
		case OPT_SLO_US:
			err = parse_real("--slo-us", optarg, 0.001, 1e9, &o->slo_us);
			break;
		case OPT_SLO_MULT:
			err = parse_real("--slo-mult", optarg, 1, 1e6, &o->slo_mult);
			break;
		case OPT_SLO_PCT:
			err = parse_real("--slo-percentile", optarg, 1, 99.999, &o->slo_pct);
			break;
		case OPT_SWEEP_MAX:
			err = parse_real("--sweep-max", optarg, 1, 1e9, &o->sweep_max);
			break;
		case OPT_SWEEP_RETRIES:
			err = parse_uint("--sweep-retries", optarg, 0, 5, &v);
			o->sweep_retries = (unsigned)v;
			break;
		case OPT_CSV:
			o->csv = optarg;
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
		case OPT_VALUE_PROFILE:
			err = parse_profile(optarg, &w->profile);
			break;
		case OPT_LARGE_PCT:
			err = parse_real("--large-pct", optarg, 0, 99.999, &w->large_pct);
			break;
		case OPT_LARGE_SIZE:
			err = parse_uint("--large-size", optarg, 1, XKV_VALUE_MAX, &v);
			w->large_size = (uint32_t)v;
			break;
		case OPT_LARGE_KEYS:
			err = parse_uint("--large-keys", optarg, 1, WORKLOAD_KEYS_MAX, &v);
			w->large_keys = (uint32_t)v;
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
	if (o->warmup_keys && o->warmup_keys < w->keys && workload_large_keys(w)) {
		fprintf(stderr,
			"xkv-bench: --warmup-keys %u: the large values are the last %u keys, "
			"and would miss; load all keys or none\n",
			o->warmup_keys, workload_large_keys(w));
		return -EINVAL;
	}
	if (workload_config_check(w, why, sizeof(why))) {
		fprintf(stderr, "xkv-bench: %s\n", why);
		return -EINVAL;
	}
	if (o->proto->value_max &&
	    workload_value_size_max(w) > o->proto->value_max(w->key_size, LOOP_DGRAM_CAP)) {
		fprintf(stderr,
			"xkv-bench: --protocol %s: values of up to %u bytes, but a request or "
			"its reply then takes more than one datagram: at most %u with %u-byte "
			"keys (only xkv sends values in pieces)\n",
			o->proto->name, workload_value_size_max(w),
			o->proto->value_max(w->key_size, LOOP_DGRAM_CAP), w->key_size);
		return -EINVAL;
	}
	return check_modes(o, depth_given, duration_given);
}

static void stop_now(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
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

	pthread_mutex_lock(&rounds.gate);
	pthread_mutex_unlock(&rounds.gate);
	/* thread i loads keys i, i + threads, ...: each key once, spread evenly */
	if (o->warmup_keys)
		err = loop_load(&t->loop, t->index, o->threads, o->warmup_keys, &t->load);
	if (err && err != -EINTR)
		fail(t, "loading", err);
	t->loaded_ns = bench_now_ns();
	pthread_barrier_wait(&rounds.done);
	for (;;) {
		pthread_barrier_wait(&rounds.start);
		if (rounds.quit)
			break;
		if (!t->failed) {
			err = loop_measure(&t->loop, rounds.rate, &t->measured);
			if (err)
				fail(t, "measuring", err);
		}
		t->stopped_ns = bench_now_ns();
		pthread_barrier_wait(&rounds.done);
	}
	return NULL;
}

static const struct bench_thread *first_failure(const struct bench *b)
{
	for (unsigned i = 0; i < b->started; i++)
		if (b->threads[i].failed)
			return &b->threads[i];
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

static void print_progress(const struct bench *b, uint64_t elapsed_ns)
{
	uint64_t answered = 0;

	for (unsigned i = 0; i < b->started; i++)
		answered += atomic_load_explicit(&b->threads[i].loop.answered,
						 memory_order_relaxed);
	fprintf(stderr, "\r%6.1f s %12.0f ops/s\033[K", elapsed_ns / 1e9,
		answered / (elapsed_ns / 1e9));
}

/* Until the deadline; once a second, ops/s so far on stderr if asked and a terminal. */
static void wait_for_deadline(const struct bench *b, uint64_t start, bool progress)
{
	bool tty = progress && isatty(STDERR_FILENO);
	uint64_t next_line = start + NS_PER_S;

	for (;;) {
		uint64_t deadline = atomic_load(&deadline_ns), now = bench_now_ns(), until;
		struct timespec nap;

		if (now >= deadline)
			break;
		if (now >= next_line) {
			if (tty)
				print_progress(b, now - start);
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

/*
 * One round at rate (all threads; 0: closed loop) for --duration, merged into
 * b->measured and b->total. Returns 0, or -ECANCELED when a thread failed.
 */
static int run_round(struct bench *b, double rate, bool progress)
{
	uint64_t start, stopped_ns;

	rounds.rate = rate / b->started;
	start = bench_now_ns();
	stopped_ns = start;
	atomic_store(&deadline_ns, start + (uint64_t)(b->o.duration_s * NS_PER_S));
	if (atomic_load(&stopping)) /* the signal came before the store above */
		atomic_store(&deadline_ns, 0);
	pthread_barrier_wait(&rounds.start);
	wait_for_deadline(b, start, progress);
	pthread_barrier_wait(&rounds.done);

	bench_stats_init(b->measured);
	for (unsigned i = 0; i < b->started; i++) {
		const struct bench_thread *t = &b->threads[i];

		bench_stats_merge(b->measured, &t->measured);
		/* a round lasts until its last thread is done */
		if (t->stopped_ns > stopped_ns)
			stopped_ns = t->stopped_ns;
	}
	bench_stats_total(b->measured, b->total);
	b->seconds = (stopped_ns - start) / 1e9;
	return first_failure(b) ? -ECANCELED : 0;
}

/*
 * Starts the threads and waits until they have loaded. Returns 0, or -errno when not
 * every thread started (those that did are told to quit by stop_threads).
 */
static int start_threads(struct bench *b)
{
	sigset_t stop_signals;
	int err = 0;

	/* only the main thread takes SIGINT, so that it wakes at once to end the run */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	pthread_mutex_lock(&rounds.gate);
	b->load_start = bench_now_ns();
	for (; b->started < b->opened; b->started++) {
		err = pthread_create(&b->threads[b->started].pthread, NULL, thread_main,
				     &b->threads[b->started]);
		if (err) {
			fprintf(stderr, "xkv-bench: starting thread %u: %s\n", b->started,
				strerror(err));
			atomic_store(&deadline_ns, 0); /* the others load nothing */
			break;
		}
	}
	pthread_barrier_init(&rounds.start, NULL, b->started + 1);
	pthread_barrier_init(&rounds.done, NULL, b->started + 1);
	pthread_mutex_unlock(&rounds.gate);
	pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);

	pthread_barrier_wait(&rounds.done);
	b->loaded_ns = b->load_start;
	bench_stats_init(b->load);
	for (unsigned i = 0; i < b->started; i++) {
		bench_stats_merge(b->load, &b->threads[i].load);
		if (b->threads[i].loaded_ns > b->loaded_ns)
			b->loaded_ns = b->threads[i].loaded_ns;
	}
	return -err;
}

static void stop_threads(struct bench *b)
{
	rounds.quit = true;
	pthread_barrier_wait(&rounds.start);
	for (unsigned i = 0; i < b->started; i++)
		pthread_join(b->threads[i].pthread, NULL);
	pthread_barrier_destroy(&rounds.start);
	pthread_barrier_destroy(&rounds.done);
}

static void fill_report(const struct bench *b, struct afxdp_info *xdp, struct run_report *r)
{
	const struct bench_opts *o = &b->o;

	if (b->xdp)
		afxdp_client_info(b->xdp, xdp);
	*r = (struct run_report){
		.label = o->label,
		.server = o->server,
		.transport = o->transport == TRANSPORT_XDP ? "xdp" : "udp",
		.xdp = b->xdp ? xdp : NULL,
		.threads = b->started,
		.depth = o->depth,
		.rate = o->rate,
		.sweep = o->sweep,
		.seed = o->seed,
		.timeout_ms = o->timeout_ms,
		.workload = &o->workload,
		.loaded_keys = o->warmup_keys,
		.load_seconds = o->warmup_keys ? (b->loaded_ns - b->load_start) / 1e9 : 0,
		.load = o->warmup_keys ? b->load : NULL,
		.seconds = o->sweep ? o->duration_s : b->seconds,
		.measured = o->sweep ? NULL : b->measured,
	};
}

/* One measured round, reported. Returns 0, or -ETIMEDOUT when nothing replied. */
static int measure_once(struct bench *b)
{
	const struct op_stats *all = b->total;
	struct afxdp_info xdp;
	struct run_report r;

	if (run_round(b, b->o.rate, true))
		return -ECANCELED;
	fill_report(b, &xdp, &r);
	if (b->o.json)
		report_json(stdout, &r);
	else
		report_table(stdout, &r);
	if (!(all->ok + all->misses + all->errors)) {
		fprintf(stderr, "xkv-bench: no reply from %s in %.1f s (%llu requests lost)\n",
			b->o.server, r.seconds, (unsigned long long)all->lost);
		return -ETIMEDOUT;
	}
	return 0;
}

/* The sweep's run: a round at rate after a pause for the last one's queues to drain. */
static int sweep_step(void *ctx, double rate, struct sweep_point *p)
{
	struct bench *b = ctx;
	const struct bench_stats *m = b->measured;
	const struct op_stats *all = b->total;
	struct timespec settle = {.tv_nsec = SWEEP_SETTLE_NS};
	int err;

	nanosleep(&settle, NULL);
	err = run_round(b, rate, false);
	if (err)
		return err;
	if (atomic_load(&stopping))
		return -EINTR;
	*p = (struct sweep_point){
		.scheduled = m->scheduled / b->seconds,
		.achieved = (all->ok + all->misses) / b->seconds,
		.p50_us = hist_percentile(&all->latency, 50) / 1e3,
		.p99_us = hist_percentile(&all->latency, 99) / 1e3,
		.mean_us = hist_mean(&all->latency) / 1e3,
		.tail_us = sweep_tail_us(&all->latency, all->lost + all->errors + m->unsent,
					 b->o.slo_pct),
		.send_lag_p99_us = hist_percentile(&m->send_lag, 99) / 1e3,
		.lost = all->lost,
		.errors = all->errors,
		.unsent = m->unsent,
	};
	return 0;
}

static int write_csv(const char *path, const struct run_report *r, const struct sweep_result *s)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "xkv-bench: --csv %s: %s\n", path, strerror(errno));
		return err;
	}
	report_sweep_csv(f, r, s);
	if (fclose(f)) {
		err = -errno;
		fprintf(stderr, "xkv-bench: --csv %s: %s\n", path, strerror(errno));
	}
	return err;
}

/* Sweeps, reports the steps (also those before an interruption). Returns 0 or -errno. */
static int sweep(struct bench *b)
{
	const struct bench_opts *o = &b->o;
	struct sweep_config cfg = {
		.start_rate = o->rate,
		.max_rate = o->sweep_max,
		.slo_us = o->slo_us,
		.slo_mult = o->slo_mult,
		.percentile = o->slo_pct,
		.precision = SWEEP_PRECISION,
		.retries = o->sweep_retries,
		.max_steps = SWEEP_STEPS,
		.progress = stderr,
	};
	struct sweep_result *s = malloc(sizeof(*s));
	struct afxdp_info xdp;
	struct run_report r;
	int err;

	if (!s)
		return -ENOMEM;
	err = sweep_search(&cfg, sweep_step, b, s);
	if (err == -EINTR)
		fprintf(stderr, "xkv-bench: sweep interrupted after %u steps\n", s->n);
	else if (err)
		goto out_free;
	fill_report(b, &xdp, &r);
	if (o->json)
		report_sweep_json(stdout, &r, s);
	else
		report_sweep_table(stdout, &r, s);
	if (o->csv && write_csv(o->csv, &r, s) && !err)
		err = -EIO;
out_free:
	free(s);
	return err;
}

/* A transport and a loop per thread; b->opened says how many to close. */
static int open_threads(struct bench *b)
{
	const struct bench_opts *o = &b->o;
	/* a batch holds every slot's request and a burst of pieces */
	unsigned batch = o->depth + LOOP_PIECE_BURST < UDP_BATCH_MAX ? o->depth + LOOP_PIECE_BURST
								     : UDP_BATCH_MAX;
	char why[256];

	for (unsigned i = 0; i < o->threads; i++) {
		struct bench_thread *t = &b->threads[i];
		struct loop_config loop = {
			.depth = o->depth,
			.timeout_ns = o->timeout_ms * 1000000ULL,
			.seed = o->seed,
			.stream = i,
			.deadline_ns = &deadline_ns,
			.proto = o->proto,
		};
		int err;

		t->index = i;
		t->opts = o;
		if (b->xdp)
			err = afxdp_transport_open(b->xdp, &t->transport, why, sizeof(why));
		else
			err = udp_transport_open(&b->addr, b->addr_len, batch, &t->transport);
		if (err) {
			fprintf(stderr, "xkv-bench: thread %u: opening a socket to %s: %s\n", i,
				o->server, b->xdp ? why : strerror(-err));
			return err;
		}
		err = loop_init(&t->loop, t->transport, &b->workload, &loop);
		if (err) {
			fprintf(stderr, "xkv-bench: thread %u: %s\n", i, strerror(-err));
			transport_close(t->transport);
			return err;
		}
		b->opened = i + 1;
	}
	return 0;
}

/* Opens the AF_XDP client and says which mode the kernel bound: never a silent fallback. */
static int open_xdp(struct bench *b)
{
	struct afxdp_info info;
	char why[256];
	int err;

	if (b->addr.ss_family != AF_INET) {
		fprintf(stderr, "xkv-bench: --transport xdp speaks IPv4 only\n");
		return -EAFNOSUPPORT;
	}
	err = afxdp_client_open(b->o.iface, b->o.queue, b->o.threads,
				(const struct sockaddr_in *)&b->addr, &b->xdp, why, sizeof(why));
	if (err) {
		fprintf(stderr, "xkv-bench: --transport xdp: %s\n", why);
		return err;
	}
	if (open_threads(b))
		return -EIO;
	afxdp_client_info(b->xdp, &info);
	fprintf(stderr, "xkv-bench: AF_XDP on %s queue %u, %s mode\n", info.iface, info.queue,
		info.mode);
	return 0;
}

/* Loads, then measures once or sweeps. Returns 0 when something was measured and reported. */
static int run(struct bench *b)
{
	const struct bench_thread *failed;
	int err = start_threads(b);

	failed = first_failure(b);
	if (!err && !failed && atomic_load(&stopping)) {
		fprintf(stderr, "xkv-bench: interrupted while loading\n");
		err = -EINTR;
	} else if (!err && !failed) {
		err = b->o.sweep ? sweep(b) : measure_once(b);
		failed = first_failure(b);
	}
	stop_threads(b);
	if (failed) {
		say_failure(&b->o, failed);
		err = -ECANCELED;
	}
	return err;
}

int main(int argc, char **argv)
{
	struct sigaction stop = {.sa_handler = stop_now};
	struct bench b = {0};
	int err, status = EXIT_FAILED;

	if (parse_opts(argc, argv, &b.o))
		return EXIT_USAGE;
	err = udp_resolve(b.o.server, &b.addr, &b.addr_len);
	if (err == -EINVAL) {
		fprintf(stderr, "xkv-bench: --server %s: not HOST, HOST:PORT or [IPV6]:PORT\n",
			b.o.server);
		return EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, "xkv-bench: --server %s: the host does not resolve\n", b.o.server);
		return EXIT_USAGE;
	}
	/* from here every way out detaches the XDP program: SIGINT only moves the deadline */
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	err = workload_init(&b.workload, &b.o.workload);
	if (err) {
		fprintf(stderr, "xkv-bench: building the workload: %s\n", strerror(-err));
		return EXIT_FAILED;
	}
	b.threads = calloc(b.o.threads, sizeof(*b.threads));
	b.load = malloc(sizeof(*b.load));
	b.measured = malloc(sizeof(*b.measured));
	b.total = malloc(sizeof(*b.total));
	if (!b.threads || !b.load || !b.measured || !b.total) {
		fprintf(stderr, "xkv-bench: %u threads: %s\n", b.o.threads, strerror(ENOMEM));
		goto out_free;
	}
	err = b.o.transport == TRANSPORT_XDP ? open_xdp(&b) : open_threads(&b);
	if (!err && !run(&b))
		status = 0;

	for (unsigned i = 0; i < b.opened; i++) {
		loop_free(&b.threads[i].loop);
		transport_close(b.threads[i].transport);
	}
	afxdp_client_close(b.xdp);
out_free:
	free(b.threads);
	free(b.load);
	free(b.measured);
	free(b.total);
	return status;
}
