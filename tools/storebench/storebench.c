// SPDX-License-Identifier: MIT
/*
 * xkv-storebench: GET-hit and PUT-overwrite throughput of the store per thread,
 * and instructions per operation counted by callgrind (exact and repeatable on a
 * shared machine, unlike a timer). It prints figures; it asserts nothing.
 *
 *   xkv-storebench [--threads N] [--keys N] [--seconds S] [--batch N] [--no-callgrind]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include <xkv/hash.h>
#include "store/store.h"
#include "util/heavy.h"
#include "util/opts.h"
#include "util/pin.h"

#define KEY_LEN	      16
#define VALUE_LEN     64
#define COUNTED_OPS   200000
#define QUIESCE_EVERY 256

struct bench {
	struct xkv_store *store;
	char (*keys)[KEY_LEN];
	uint32_t nkeys;
	uint32_t threads;
	uint32_t batch; /* GETs hashed, then served, together */
	double seconds;
};

#define BATCH_MAX    256
#define BATCH_SLICES 10 /* with and without prefetch take turns, so noise hits both */

struct worker {
	struct bench *b;
	uint32_t id;
	bool put;
	uint64_t ops;
	double elapsed;
	pthread_t thread;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* What a worker does per request: hash the key, then the store operation. */
/* noipa: callgrind must find these functions by name */
__attribute__((noipa)) static int bench_get(struct xkv_store *s, const char *key, void *buf)
{
	uint32_t len;

	return xkv_store_get(s, key, KEY_LEN, xkv_hash(key, KEY_LEN), buf, VALUE_LEN, &len);
}

__attribute__((noipa)) static int bench_put(struct xkv_store *s, const char *key,
					       const void *value)
{
	return xkv_store_put(s, key, KEY_LEN, xkv_hash(key, KEY_LEN), value, VALUE_LEN);
}

/* PUTs keep docs/DESIGN.md invariant 1: thread t writes only partitions p % threads == t. */
static bool owns(const struct bench *b, uint32_t thread, const char *key)
{
	return xkv_partition(xkv_hash(key, KEY_LEN)) % b->threads == thread;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	uint8_t value[VALUE_LEN];
	uint64_t rng = 0x2545f4914f6cdd1dULL * (w->id + 1), ops = 0;
	uint32_t *mine = malloc(sizeof(*mine) * b->nkeys), nmine = 0;
	double start, stop;

	if (!mine)
		return NULL;
	for (uint32_t k = 0; k < b->nkeys; k++)
		if (!w->put || owns(b, w->id, b->keys[k]))
			mine[nmine++] = k;
	memset(value, 0x5a, sizeof(value));

	xkv_store_thread_online();
	start = now();
	stop = start + b->seconds;
	while (nmine) {
		for (int i = 0; i < QUIESCE_EVERY; i++) {
			const char *key = b->keys[mine[xorshift(&rng) % nmine]];

			if (w->put)
				bench_put(b->store, key, value);
			else
				bench_get(b->store, key, value);
		}
		ops += QUIESCE_EVERY;
		xkv_store_quiescent();
		if (now() >= stop)
			break;
	}
	w->elapsed = now() - start;
	w->ops = ops;
	xkv_store_thread_offline();
	free(mine);
	return NULL;
}

/*
 * One thread's GETs in batches, as a worker gets them off its ring: every key of the
 * batch hashed, then (with prefetch) every head bucket prefetched, then every GET
 * served. Returns the operations done in the given seconds.
 */
static uint64_t batch_run(struct bench *b, bool prefetch, double seconds, uint64_t *rng)
{
	uint64_t hashes[BATCH_MAX], ops = 0;
	const char *keys[BATCH_MAX];
	uint8_t value[VALUE_LEN];
	double stop = now() + seconds;
	uint32_t len;

	while (now() < stop) {
		for (int round = 0; round < QUIESCE_EVERY; round += b->batch) {
			for (uint32_t i = 0; i < b->batch; i++) {
				keys[i] = b->keys[xorshift(rng) % b->nkeys];
				hashes[i] = xkv_hash(keys[i], KEY_LEN);
				if (prefetch)
					xkv_store_prefetch(b->store, hashes[i]);
			}
			for (uint32_t i = 0; i < b->batch; i++)
				xkv_store_get(b->store, keys[i], KEY_LEN, hashes[i], value,
					      sizeof(value), &len);
			ops += b->batch;
		}
		xkv_store_quiescent();
	}
	return ops;
}

/* MICA's lesson, measured: do batches with their buckets prefetched go faster? */
static void measure_prefetch(struct bench *b)
{
	double slice = b->seconds / BATCH_SLICES;
	uint64_t ops[2] = {0}, rng = 0x9e3779b97f4a7c15ULL;

	xkv_pin_to_cpu(pthread_self(), 0);
	xkv_store_thread_online();
	for (int s = 0; s < 2 * BATCH_SLICES; s++)
		ops[s % 2] += batch_run(b, s % 2, slice, &rng);
	xkv_store_thread_offline();
	printf("GET in batches of %u, 1 thread, %d slices each, taking turns:\n", b->batch,
	       BATCH_SLICES);
	printf("  without prefetch: %8.2f M ops/s\n", ops[0] / (slice * BATCH_SLICES) / 1e6);
	printf("  with prefetch   : %8.2f M ops/s (%.2fx)\n", ops[1] / (slice * BATCH_SLICES) / 1e6,
	       (double)ops[1] / (double)ops[0]);
}

static int measure_rate(struct bench *b, bool put)
{
	struct worker *w = calloc(b->threads, sizeof(*w));
	double total = 0;

	if (!w)
		return -ENOMEM;
	for (uint32_t t = 0; t < b->threads; t++) {
		w[t] = (struct worker){.b = b, .id = t, .put = put};
		if (pthread_create(&w[t].thread, NULL, worker_run, &w[t])) {
			b->threads = t;
			break;
		}
		xkv_pin_to_cpu(w[t].thread, t);
	}
	for (uint32_t t = 0; t < b->threads; t++)
		pthread_join(w[t].thread, NULL);
	for (uint32_t t = 0; t < b->threads; t++) {
		double rate = w[t].elapsed > 0 ? w[t].ops / w[t].elapsed : 0;

		printf("  %-4s thread %u: %8.2f M ops/s\n", put ? "PUT" : "GET", t, rate / 1e6);
		total += rate;
	}
	printf("  %-4s total   : %8.2f M ops/s (%u threads)\n", put ? "PUT" : "GET", total / 1e6,
	       b->threads);
	free(w);
	return 0;
}

static int load_keys(struct bench *b)
{
	struct xkv_store_config cfg = {
		.memory_limit = (size_t)b->nkeys * 256 + (64 << 20),
		.mode = XKV_MODE_STORE,
		.bucket_bits = 10,
	};

	/* room for every key at 5 a head bucket: tables grow to what they need */
	while ((5u << cfg.bucket_bits) * XKV_PARTITIONS < b->nkeys && cfg.bucket_bits < 24)
		cfg.bucket_bits++;
	cfg.overflow_buckets = (1u << cfg.bucket_bits) / 4;
	uint8_t value[VALUE_LEN] = {0};

	b->keys = malloc((size_t)b->nkeys * KEY_LEN);
	if (!b->keys)
		return -ENOMEM;
	b->store = xkv_store_create(&cfg);
	if (!b->store)
		return -errno;
	for (uint32_t k = 0; k < b->nkeys; k++) {
		char tmp[KEY_LEN + 1];
		int err;

		snprintf(tmp, sizeof(tmp), "key:%012u", k);
		memcpy(b->keys[k], tmp, KEY_LEN);
		err = bench_put(b->store, b->keys[k], value);
		if (err)
			return err;
	}
	return 0;
}

/* Under callgrind: exactly COUNTED_OPS operations of one kind, nothing else collected. */
static int counted_run(struct bench *b, const char *op)
{
	struct xkv_heavy *hot = malloc(sizeof(*hot)); /* what a worker counts its keys in */
	uint8_t value[VALUE_LEN] = {0};
	uint64_t rng = 42;

	if (!hot)
		return -ENOMEM;
	xkv_heavy_reset(hot);
	CALLGRIND_ZERO_STATS; /* forget the loading puts */
	for (int i = 0; i < COUNTED_OPS; i++) {
		const char *key = b->keys[xorshift(&rng) % b->nkeys];

		if (!strcmp(op, "get"))
			bench_get(b->store, key, value);
		else if (!strcmp(op, "count"))
			xkv_heavy_count(hot, key, KEY_LEN, xkv_hash(key, KEY_LEN));
		else
			bench_put(b->store, key, value);
		if (i % QUIESCE_EVERY == 0)
			xkv_store_quiescent();
	}
	free(hot);
	return 0;
}

/* Total instructions callgrind counted inside fn, from its output file. */
static long long callgrind_count(const char *self, const char *op, const char *fn, uint32_t keys)
{
	char out[] = "/tmp/xkv-storebench-XXXXXX", toggle[64], outfile[96], nkeys[16];
	long long total = -1;
	char line[256];
	FILE *f;
	pid_t pid;
	int fd, status;

	fd = mkstemp(out);
	if (fd < 0)
		return -errno;
	close(fd);
	snprintf(toggle, sizeof(toggle), "--toggle-collect=%s", fn);
	snprintf(outfile, sizeof(outfile), "--callgrind-out-file=%s", out);
	snprintf(nkeys, sizeof(nkeys), "%u", keys);
	pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		execlp("valgrind", "valgrind", "--tool=callgrind", "--collect-atstart=no", toggle,
		       outfile, self, "--counted", op, "--keys", nkeys, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		goto out_unlink;
	f = fopen(out, "r");
	if (!f)
		goto out_unlink;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "summary: %lld", &total) == 1 ||
		    sscanf(line, "totals: %lld", &total) == 1)
			break;
	fclose(f);
out_unlink:
	unlink(out);
	return total;
}

static void report_instructions(const char *self, uint32_t keys)
{
	static const struct {
		const char *op, *fn, *what;
		int target;
	} rows[] = {
		{"get", "xkv_store_get", "GET hit, store", 400},
		{"get", "bench_get", "GET hit, hash + store", 0},
		{"put", "xkv_store_put", "PUT overwrite, store", 600},
		{"put", "bench_put", "PUT overwrite, hash + store", 0},
		/* what counting the hot keys adds to each request a worker serves (engine/hot.h) */
		{"count", "xkv_heavy_count", "hot-key count (sketch, top)", 0},
	};

	printf("instructions per operation (callgrind, %d ops, %u keys, %d B key, %d B value):\n",
	       COUNTED_OPS, keys, KEY_LEN, VALUE_LEN);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long long total;

		if (isatty(STDERR_FILENO))
			fprintf(stderr, "  [%zu/%zu] counting %s ...\r", i + 1,
				sizeof(rows) / sizeof(rows[0]), rows[i].what);
		total = callgrind_count(self, rows[i].op, rows[i].fn, keys);
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\033[K");
		if (total < 0) {
			printf("  %-28s: callgrind failed (is valgrind installed?)\n", rows[i].what);
			continue;
		}
		printf("  %-28s: %6.1f", rows[i].what, (double)total / COUNTED_OPS);
		if (rows[i].target)
			printf("   (target <= %d: ratio %.2f)", rows[i].target,
			       (double)total / COUNTED_OPS / rows[i].target);
		printf("\n");
	}
}

enum { OPT_THREADS, OPT_KEYS, OPT_SECONDS, OPT_BATCH, OPT_NO_CALLGRIND, OPT_COUNTED, OPT_HELP };

static const struct xkv_opt options[] = {
	[OPT_THREADS] = {"threads", 't', "N", "threads, one per core (2)"},
	[OPT_KEYS] = {"keys", 'k', "N", "keys loaded and operated on (100000)"},
	[OPT_SECONDS] = {"seconds", 's', "S", "length of each measured phase (1)"},
	[OPT_BATCH] = {"batch", 'b', "N", "GETs a batch, with and without prefetch (32)"},
	[OPT_NO_CALLGRIND] = {"no-callgrind", 'n', NULL, "skip the instruction counts"},
	/* the run callgrind counts: the program runs itself with it */
	[OPT_COUNTED] = {"counted", 0, "OP", NULL},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xkv-storebench [options]\n"
		"GET-hit and PUT-overwrite rates per thread, %d B keys, %d B values,\n"
		"and instructions per operation under callgrind.\n",
		KEY_LEN, VALUE_LEN);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
}

int main(int argc, char **argv)
{
	struct bench b = {.nkeys = 100000, .threads = 2, .batch = 32, .seconds = 1.0};
	const char *counted = NULL;
	bool callgrind = true;
	struct xkv_opts p;
	int opt, err;

	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case OPT_THREADS:
			err = xkv_opts_u32(&p, 1, 4096, &b.threads);
			break;
		case OPT_KEYS:
			err = xkv_opts_u32(&p, 1, UINT32_MAX, &b.nkeys);
			break;
		case OPT_SECONDS:
			err = xkv_opts_double(&p, 0.001, 86400, &b.seconds);
			break;
		case OPT_BATCH:
			err = xkv_opts_u32(&p, 1, BATCH_MAX, &b.batch);
			break;
		case OPT_NO_CALLGRIND:
			callgrind = false;
			break;
		case OPT_COUNTED:
			counted = p.arg;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			err = opt;
		}
	}
	if (err || optind < argc) {
		fprintf(stderr, "xkv-storebench: %s (--help for usage)\n",
			err ? p.why : "no operand is taken");
		return 2;
	}

	xkv_store_thread_online();
	err = load_keys(&b);
	if (err) {
		fprintf(stderr, "xkv-storebench: loading %u keys: %s\n", b.nkeys, strerror(-err));
		return 1;
	}
	if (counted)
		return counted_run(&b, counted);

	xkv_store_thread_offline();
	printf("store throughput (%u keys, %d B key, %d B value, %.1f s per phase):\n", b.nkeys,
	       KEY_LEN, VALUE_LEN, b.seconds);
	measure_rate(&b, false);
	measure_rate(&b, true);
	measure_prefetch(&b);
	if (callgrind)
		report_instructions(argv[0], b.nkeys);
	xkv_store_thread_online();
	xkv_store_destroy(b.store);
	free(b.keys);
	return 0;
}
