// SPDX-License-Identifier: MIT
/*
 * xkv-linload: T client threads on K hot keys, each request timed, the whole run
 * written as a history for xkv-lincheck (docs/LINEARIZABILITY.md).
 *
 *   xkv-linload --server SERVERS --out FILE [--threads T] [--keys K] [--mix G:P:D]
 *               [--value MIN-MAX] [--duration S | --ops N] [--timeout-ms MS] [--seed N]
 *               [--dir]
 *
 * The keys are deleted first, outside the history, which starts from none. Each
 * value is unique: "t<thread> s<sequence> " then filler. Requests are not
 * retried: one that gets no reply has an unknown outcome (a retry could apply a PUT
 * twice, which is no single point in time). A reply that makes no sense for what was
 * asked fails the run: left out or taken for unknown, it would hide a broken server
 * behind a history with little in it. Key i is "k" and i zero-padded to 16 bytes,
 * xkv-bench's key i at its default --key-size.
 * Exit codes: 0 done, 2 an error or bad replies (one line on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xkv/proto.h>
#include "client/client.h"
#include "common/history.h"
#include "common/rng.h"
#include "util/opts.h"

enum { EXIT_DONE = 0, EXIT_ERROR = 2 };

#define KEY_LEN	     16 /* xkv-bench's default --key-size */
#define KEYS_MAX     1000
#define THREADS_MAX  256
#define VALUE_HEADER 32 /* room for "t<thread> s<sequence> " */

enum { OPT_SERVER, OPT_OUT, OPT_THREADS, OPT_KEYS, OPT_MIX, OPT_VALUE, OPT_DURATION, OPT_OPS,
       OPT_TIMEOUT, OPT_SEED, OPT_DIR, OPT_HELP };

static const struct xkv_opt options[] = {
	[OPT_SERVER] = {"server", 's', "SERVERS",
			"HOST[:PORT] (port 7411 by default), or a list the keys are spread over by "
			"ketama (xkv-cli's)"},
	[OPT_OUT] = {"out", 'o', "FILE", "the history to write"},
	[OPT_THREADS] = {"threads", 't', "T", "client threads, a client each (8)"},
	[OPT_KEYS] = {"keys", 'k', "K", "hot keys, xkv-bench's first K (4)"},
	[OPT_MIX] = {"mix", 'm', "G:P:D", "weights of GET, PUT and DELETE (45:45:10)"},
	[OPT_VALUE] = {"value", 'v', "MIN-MAX",
		       "value bytes, uniform; over about 1400 a PUT goes in pieces (16-3000)"},
	[OPT_DURATION] = {"duration", 'D', "S", "seconds to run (2)"},
	[OPT_OPS] = {"ops", 'n', "N", "stop after N operations in all, or at --duration"},
	[OPT_TIMEOUT] = {"timeout-ms", 0, "MS",
			 "a request without a reply by then is unknown (1000)"},
	[OPT_SEED] = {"seed", 0, "N", "fixes each thread's requests (1)"},
	[OPT_DIR] = {"dir", 'd', NULL,
		     "speak version 3, through a coherence directory (docs/DIRECTORY.md)"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

struct config {
	const char *server, *out;
	uint32_t threads, keys, mix[3], value_min, value_max, timeout_ms;
	double duration;
	uint64_t ops, seed;
	bool dir;
};

/* One operation as the thread saw it; the history's records are made from these. */
struct op {
	uint64_t token; /* put: written; get: read */
	uint64_t invoke_ns, return_ns;
	uint16_t key;
	uint8_t op, result; /* enum history_op, enum history_result */
};

struct counts {
	uint64_t ops[3], none, unknown, refused, errors;
};

struct worker {
	pthread_t thread;
	const struct config *cfg;
	uint32_t id;
	atomic_uint_fast64_t done; /* operations completed, read by the progress line */
	atomic_bool *stop;
	atomic_uint_fast64_t *started; /* operations begun by every thread, for --ops */
	struct op *ops;
	size_t nops, cap;
	struct counts counts;
	int err; /* what ended it early */
	int bad_err; /* its first bad reply's error, and to what */
	uint8_t bad_op;
};

static char keys[KEYS_MAX][KEY_LEN + 1];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fputs("usage: xkv-linload --server SERVERS --out FILE [options]\n"
	      "Concurrent clients on a few hot keys; every operation's invocation, reply and\n"
	      "result written as a history for xkv-lincheck (docs/LINEARIZABILITY.md).\n",
	      f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
	fputs("exit codes: 0 done, 2 an error or bad replies\n", f);
}

/*
 * A status that refused the request: it had no effect, and the history leaves it out.
 * BUSY, NO_MEMORY, TOO_LARGE (a server with less room than the value) and VALIDATE
 * again (its token changed meanwhile); BAD_REQUEST is none: our requests are good.
 */
static bool refused(int err)
{
	return err == -EBUSY || err == -ENOMEM || err == -E2BIG || err == -EAGAIN;
}

/* A bad reply's error as the reply said it, for the one line that reports them. */
static const char *bad_reply_name(int err)
{
	switch (err) {
	case -ENOENT:
		return "NOT_FOUND";
	case -EINVAL:
		return "BAD_REQUEST";
	default:
		return strerror(-err);
	}
}

static int op_push(struct worker *w, const struct op *op)
{
	if (w->nops == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		struct op *ops = realloc(w->ops, cap * sizeof(*ops));

		if (!ops)
			return -ENOMEM;
		w->ops = ops;
		w->cap = cap;
	}
	w->ops[w->nops++] = *op;
	return 0;
}

/* A value no other operation writes: its writer and sequence first, then filler. */
static size_t value_make(const struct worker *w, struct rng *r, uint64_t seq, uint8_t *value)
{
	const struct config *cfg = w->cfg;
	size_t len = cfg->value_min + rng_below(r, cfg->value_max - cfg->value_min + 1);
	size_t head = (size_t)snprintf((char *)value, VALUE_HEADER, "t%u s%" PRIu64 " ", w->id,
				       seq);

	if (len < head)
		len = head;
	for (size_t i = head; i < len; i++)
		value[i] = (uint8_t)('a' + (i + seq) % 26);
	return len;
}

static uint8_t op_draw(const struct config *cfg, struct rng *r)
{
	uint64_t x = rng_below(r, (uint64_t)cfg->mix[0] + cfg->mix[1] + cfg->mix[2]);

	if (x < cfg->mix[0])
		return HISTORY_GET;
	return x < (uint64_t)cfg->mix[0] + cfg->mix[1] ? HISTORY_PUT : HISTORY_DEL;
}

/* Runs one operation and says what the history must record: 1 recorded, 0 left out. */
static int op_run(struct worker *w, struct xkv_client *c, struct op *op, uint8_t *value,
		  size_t len)
{
	const char *key = keys[op->key];
	void *got = NULL;
	uint32_t got_len = 0;
	int err;

	op->invoke_ns = now_ns();
	switch (op->op) {
	case HISTORY_PUT:
		err = xkv_client_put(c, key, KEY_LEN, value, len);
		break;
	case HISTORY_GET:
		err = xkv_client_get(c, key, KEY_LEN, &got, &got_len);
		break;
	default:
		err = xkv_client_delete(c, key, KEY_LEN);
	}
	op->return_ns = now_ns();
	w->counts.ops[op->op]++;
	if (!err) {
		op->result = op->op == HISTORY_GET ? HISTORY_VALUE : HISTORY_OK;
		/* through a directory, a DELETE's OK does not say the key was there */
		if (op->op == HISTORY_DEL && w->cfg->dir)
			op->result = HISTORY_DONE;
		if (op->op == HISTORY_GET)
			op->token = history_token(got, got_len);
		free(got);
		return 1;
	}
	if (err == -ENOENT && op->op != HISTORY_PUT) {
		w->counts.none++;
		op->result = HISTORY_NONE;
		return 1;
	}
	if (refused(err)) {
		w->counts.refused++;
		return 0;
	}
	/* no reply, or one that made no sense (which fails the run): it may have taken effect */
	if (err == -ETIMEDOUT) {
		w->counts.unknown++;
	} else if (!w->counts.errors++) {
		w->bad_err = err;
		w->bad_op = op->op;
	}
	op->result = HISTORY_UNKNOWN;
	return op->op != HISTORY_GET;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct config *cfg = w->cfg;
	const struct xkv_client_opts copts = {.timeout_ms = (int)cfg->timeout_ms, .retries = -1,
					      .dir = cfg->dir};
	struct xkv_client *c = xkv_client_open(cfg->server, &copts);
	uint8_t *value = malloc(cfg->value_max > VALUE_HEADER ? cfg->value_max : VALUE_HEADER);
	struct rng r;

	if (!c || !value) {
		w->err = -errno;
		goto out_free;
	}
	rng_seed(&r, cfg->seed, w->id);
	for (uint64_t seq = 0; !atomic_load(w->stop); seq++) {
		struct op op = {.key = (uint16_t)rng_below(&r, cfg->keys), .op = op_draw(cfg, &r)};
		size_t len = 0;

		if (cfg->ops && atomic_fetch_add(w->started, 1) >= cfg->ops)
			break;
		if (op.op == HISTORY_PUT) {
			len = value_make(w, &r, seq, value);
			op.token = history_token(value, len);
		}
		if (op_run(w, c, &op, value, len) == 1) {
			w->err = op_push(w, &op);
			if (w->err)
				break;
		}
		atomic_fetch_add(&w->done, 1);
	}
out_free:
	free(value);
	xkv_client_close(c);
	atomic_store(w->stop, true); /* --ops reached, or a failure: everyone stops */
	return NULL;
}

/* The model starts with every key empty: delete them first, outside the history. */
static int keys_clear(const struct config *cfg)
{
	const struct xkv_client_opts copts = {.timeout_ms = (int)cfg->timeout_ms, .dir = cfg->dir};
	struct xkv_client *c = xkv_client_open(cfg->server, &copts);
	int err = 0;

	if (!c)
		return -errno;
	for (uint32_t k = 0; k < cfg->keys && !err; k++) {
		err = xkv_client_delete(c, keys[k], KEY_LEN);
		if (err == -ENOENT)
			err = 0;
	}
	xkv_client_close(c);
	return err;
}

/* Every thread's operations, in the thread's order. */
static int history_save(const struct config *cfg, const struct worker *w)
{
	struct history *h = history_open(cfg->out);
	int err = 0;

	if (!h)
		return -errno;
	for (uint32_t t = 0; t < cfg->threads && !err; t++) {
		for (size_t i = 0; i < w[t].nops && !err; i++) {
			const struct op *op = &w[t].ops[i];
			const struct history_rec rec = {
				.client = t,
				.op = op->op,
				.result = op->result,
				.key = keys[op->key],
				.key_len = KEY_LEN,
				.token = op->token,
				.invoke_ns = op->invoke_ns,
				.return_ns = op->return_ns,
			};

			err = history_write(h, &rec);
		}
	}
	if (!err)
		return history_close(h);
	history_close(h);
	return err;
}

/* 0, 1 when it printed the help, or -EINVAL having said why. */
static int parse_args(int argc, char **argv, struct config *cfg)
{
	struct xkv_opts p;
	int opt, err, n;

	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case OPT_SERVER:
			cfg->server = p.arg;
			break;
		case OPT_OUT:
			cfg->out = p.arg;
			break;
		case OPT_THREADS:
			err = xkv_opts_u32(&p, 1, THREADS_MAX, &cfg->threads);
			break;
		case OPT_KEYS:
			err = xkv_opts_u32(&p, 1, KEYS_MAX, &cfg->keys);
			break;
		case OPT_MIX:
			if (sscanf(p.arg, "%u:%u:%u%n", &cfg->mix[0], &cfg->mix[1], &cfg->mix[2],
				   &n) != 3 || p.arg[n] ||
			    (uint64_t)cfg->mix[0] + cfg->mix[1] + cfg->mix[2] == 0)
				err = xkv_opts_bad_value(&p, "three weights G:P:D, not all 0");
			break;
		case OPT_VALUE:
			if (sscanf(p.arg, "%u-%u%n", &cfg->value_min, &cfg->value_max, &n) != 2 ||
			    p.arg[n] || cfg->value_min > cfg->value_max ||
			    cfg->value_max > XKV_VALUE_MAX)
				err = xkv_opts_bad_value(&p, "MIN-MAX bytes, MIN <= MAX <= 1048576");
			break;
		case OPT_DURATION:
			err = xkv_opts_double(&p, 0.001, 86400, &cfg->duration);
			break;
		case OPT_OPS:
			err = xkv_opts_u64(&p, 1, UINT64_MAX, &cfg->ops);
			break;
		case OPT_TIMEOUT:
			err = xkv_opts_u32(&p, 1, 3600000, &cfg->timeout_ms);
			break;
		case OPT_SEED:
			err = xkv_opts_u64(&p, 0, UINT64_MAX, &cfg->seed);
			break;
		case OPT_DIR:
			cfg->dir = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			err = opt;
		}
	}
	if (err) {
		fprintf(stderr, "xkv-linload: %s (--help for usage)\n", p.why);
		return err;
	}
	if (optind != argc || !cfg->server || !cfg->out) {
		fprintf(stderr, "xkv-linload: --server and --out are needed, and nothing else "
				"(--help for usage)\n");
		return -EINVAL;
	}
	return 0;
}

/* Progress every second until the threads stop or the time is up. */
static void progress(const struct config *cfg, struct worker *w, atomic_bool *stop)
{
	uint64_t start = now_ns(), end = start + (uint64_t)(cfg->duration * 1e9);
	uint64_t next = start + 1000000000ull, last = 0;

	for (unsigned s = 1; !atomic_load(stop) && now_ns() < end; usleep(10000)) {
		uint64_t done = 0;

		if (now_ns() < next)
			continue;
		for (uint32_t t = 0; t < cfg->threads; t++)
			done += atomic_load(&w[t].done);
		fprintf(stderr, "xkv-linload: %u s: %" PRIu64 " ops/s\n", s++, done - last);
		last = done;
		next += 1000000000ull;
	}
	atomic_store(stop, true);
}

int main(int argc, char **argv)
{
	struct config cfg = {.threads = 8, .keys = 4, .mix = {45, 45, 10}, .value_min = 16,
			     .value_max = 3000, .duration = 2, .timeout_ms = 1000, .seed = 1};
	atomic_uint_fast64_t started = 0;
	atomic_bool stop = false;
	static const char *const op_names[] = {[HISTORY_GET] = "GET", [HISTORY_PUT] = "PUT",
					       [HISTORY_DEL] = "DELETE"};
	struct counts sum = {0};
	const struct worker *bad = NULL;
	struct worker *w;
	uint64_t start, answered;
	double seconds;
	int err;

	err = parse_args(argc, argv, &cfg);
	if (err)
		return err > 0 ? EXIT_DONE : EXIT_ERROR;
	for (uint32_t k = 0; k < cfg.keys; k++)
		snprintf(keys[k], sizeof(keys[k]), "k%0*u", KEY_LEN - 1, k);
	err = keys_clear(&cfg);
	if (err) {
		fprintf(stderr, "xkv-linload: deleting the keys at %s first: %s\n", cfg.server,
			strerror(-err));
		return EXIT_ERROR;
	}
	w = calloc(cfg.threads, sizeof(*w));
	if (!w) {
		fprintf(stderr, "xkv-linload: %s\n", strerror(ENOMEM));
		return EXIT_ERROR;
	}
	start = now_ns();
	for (uint32_t t = 0; t < cfg.threads; t++) {
		w[t].cfg = &cfg;
		w[t].id = t;
		w[t].stop = &stop;
		w[t].started = &started;
		if (pthread_create(&w[t].thread, NULL, worker_run, &w[t])) {
			fprintf(stderr, "xkv-linload: cannot start thread %u\n", t);
			atomic_store(&stop, true);
			cfg.threads = t;
			err = -EAGAIN;
		}
	}
	if (!err)
		progress(&cfg, w, &stop);
	for (uint32_t t = 0; t < cfg.threads; t++) {
		pthread_join(w[t].thread, NULL);
		for (int o = 0; o < 3; o++)
			sum.ops[o] += w[t].counts.ops[o];
		sum.none += w[t].counts.none;
		sum.unknown += w[t].counts.unknown;
		sum.refused += w[t].counts.refused;
		sum.errors += w[t].counts.errors;
		if (w[t].counts.errors && !bad)
			bad = &w[t];
		if (w[t].err && !err) {
			fprintf(stderr, "xkv-linload: thread %u: %s\n", t, strerror(-w[t].err));
			err = w[t].err;
		}
	}
	seconds = (double)(now_ns() - start) / 1e9;
	answered = sum.ops[0] + sum.ops[1] + sum.ops[2] - sum.unknown - sum.errors;
	if (!err && !answered) {
		fprintf(stderr, "xkv-linload: no reply from %s\n", cfg.server);
		err = -ETIMEDOUT;
	}
	if (!err) {
		err = history_save(&cfg, w);
		if (err)
			fprintf(stderr, "xkv-linload: %s: %s\n", cfg.out, strerror(-err));
	}
	if (!err && bad) {
		fprintf(stderr, "xkv-linload: %" PRIu64 " bad replies from %s, such as a %s "
				"answered %s\n",
			sum.errors, cfg.server, op_names[bad->bad_op],
			bad_reply_name(bad->bad_err));
		err = -EPROTO;
	}
	fprintf(stderr,
		"xkv-linload: %" PRIu64 " ops in %.1f s (%.0f ops/s): get %" PRIu64 ", put %" PRIu64
		", del %" PRIu64 "; not found %" PRIu64 ", no reply %" PRIu64 ", refused %" PRIu64
		", bad replies %" PRIu64 "\n",
		sum.ops[0] + sum.ops[1] + sum.ops[2], seconds,
		(double)(sum.ops[0] + sum.ops[1] + sum.ops[2]) / seconds, sum.ops[HISTORY_GET],
		sum.ops[HISTORY_PUT], sum.ops[HISTORY_DEL], sum.none, sum.unknown, sum.refused,
		sum.errors);
	for (uint32_t t = 0; t < cfg.threads; t++)
		free(w[t].ops);
	free(w);
	return err ? EXIT_ERROR : EXIT_DONE;
}
