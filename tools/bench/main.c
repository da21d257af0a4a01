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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "afxdp.h"
#include "clock.h"
#include "loop.h"
#include "options.h"
#include "report.h"
#include "sweep.h"
#include "udp.h"

#define NS_PER_S	   1000000000ULL
#define SWEEP_PRECISION	   0.05	  /* bisection stops within 5 % */
#define SWEEP_STEPS	   30
#define SWEEP_SETTLE_NS	   200000000ULL /* before each step: the last one's queues drain */

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

struct bench_thread {
	pthread_t pthread;
	unsigned index;
	const struct bench_opts *opts;
	struct transport *transport;
	struct loop loop;
	struct bench_stats load, measured;
	struct interval_log intervals; /* --interval-csv: each second of the run */
	uint64_t loaded_ns, stopped_ns; /* when this thread finished loading, the last round */
	int err;			/* 0 or the -errno that stopped it */
	const char *failed;		/* the phase err belongs to */
};

/* A run: its options, threads and merged results. */
struct bench {
	struct bench_opts o;
	struct workload workload;
	struct bench_pool pool;
	struct afxdp_client *xdp;
	struct bench_thread *threads;
	unsigned opened;		  /* threads with a transport and a loop */
	unsigned started;		  /* of those, threads running */
	uint64_t load_start, loaded_ns;	  /* the load phase */
	struct bench_stats *load, *measured; /* merged: the load, the last round */
	struct op_stats *total;		  /* the last round, GETs and PUTs together */
	double seconds;			  /* the last round's window */
	double start_unix_s;		  /* the last round's start, CLOCK_REALTIME */
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
	struct timespec wall;

	rounds.rate = rate / b->started;
	clock_gettime(CLOCK_REALTIME, &wall);
	b->start_unix_s = wall.tv_sec + wall.tv_nsec / 1e9;
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

/* --interval-csv: each second of the round, every thread's merged. Returns 0 or -errno. */
static int write_intervals(const struct bench *b)
{
	const struct bench_opts *o = &b->o;
	struct interval_log *logs = calloc(b->started, sizeof(*logs));
	FILE *f = fopen(o->interval_csv, "w");
	int err = 0;

	if (!f || !logs) {
		err = f ? -ENOMEM : -errno;
		goto out;
	}
	for (unsigned i = 0; i < b->started; i++)
		logs[i] = b->threads[i].intervals;
	err = interval_csv(f, logs, b->started, b->seconds, &o->schedule,
			   o->workload.large_pct, b->start_unix_s);
	if (fclose(f) && !err)
		err = -errno;
	f = NULL;
out:
	if (f)
		fclose(f);
	free(logs);
	if (err)
		fprintf(stderr, "xkv-bench: --interval-csv %s: %s\n", o->interval_csv,
			strerror(-err));
	return err;
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
	return b->o.interval_csv ? write_intervals(b) : 0;
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
			.schedule = &o->schedule,
			.intervals = o->interval_csv ? &t->intervals : NULL,
			.dest = b->pool.dest,
			.nservers = b->pool.n,
		};
		int err;

		t->index = i;
		t->opts = o;
		if (o->interval_csv) {
			/* a round lasts a little past its deadline: that goes in the last second */
			err = interval_log_init(&t->intervals, o->duration_s);
			if (err) {
				fprintf(stderr, "xkv-bench: thread %u: --interval-csv: %s\n", i,
					strerror(-err));
				return err;
			}
		}
		if (b->xdp)
			err = afxdp_transport_open(b->xdp, &t->transport, why, sizeof(why));
		else
			err = udp_transport_open(&b->pool, batch, &t->transport);
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

	if (b->pool.n > 1 || b->pool.addrs[0].addr.ss_family != AF_INET) {
		fprintf(stderr, "xkv-bench: --transport xdp speaks to one IPv4 server\n");
		return -EAFNOSUPPORT;
	}
	err = afxdp_client_open(b->o.iface, b->o.queue, b->o.queues, b->o.threads,
				(const struct sockaddr_in *)&b->pool.addrs[0].addr, &b->xdp, why,
				sizeof(why));
	if (err) {
		fprintf(stderr, "xkv-bench: --transport xdp: %s\n", why);
		return err;
	}
	if (open_threads(b))
		return -EIO;
	afxdp_client_info(b->xdp, &info);
	if (info.nqueues == 1)
		fprintf(stderr, "xkv-bench: AF_XDP on %s queue %u, %s mode\n", info.iface,
			info.queue, info.mode);
	else
		fprintf(stderr, "xkv-bench: AF_XDP on %s queues %u-%u, %s mode\n", info.iface,
			info.queue, info.queue + info.nqueues - 1, info.mode);
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
	char why[320];

	err = bench_options_parse(argc, argv, &b.o, why, sizeof(why));
	if (err == BENCH_HELP) {
		bench_options_usage(stdout);
		return 0;
	}
	if (err) {
		fprintf(stderr, "xkv-bench: %s (--help for usage)\n", why);
		return EXIT_USAGE;
	}
	/*
	 * The open loop sleeps to within LOOP_WAKE_EARLY_NS of each arrival: the default
	 * slack of 50 us would make every wakeup that late. Threads inherit it.
	 */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	/* from here every way out detaches the XDP program: SIGINT only moves the deadline */
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	err = workload_init(&b.workload, &b.o.workload);
	if (err) {
		fprintf(stderr, "xkv-bench: building the workload: %s\n", strerror(-err));
		return EXIT_FAILED;
	}
	err = bench_pool_open(&b.pool, b.o.server, &b.workload, why, sizeof(why));
	if (err) {
		if (err == -ENOMEM)
			snprintf(why, sizeof(why), "--server: %s", strerror(ENOMEM));
		fprintf(stderr, "xkv-bench: %s\n", why);
		bench_pool_close(&b.pool);
		return EXIT_USAGE;
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
	for (unsigned i = 0; b.threads && i < b.o.threads; i++) {
		interval_log_free(&b.threads[i].intervals);
	}
	afxdp_client_close(b.xdp);
out_free:
	free(b.threads);
	free(b.load);
	free(b.measured);
	free(b.total);
	bench_pool_close(&b.pool);
	return status;
}
