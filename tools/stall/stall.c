// SPDX-License-Identifier: MIT
/*
 * xkv-stall: how long this machine kept a CPU from what wanted to run on it,
 * measured while the soak (tests/soak/soak.sh) or a benchmark (tools/bench) runs, so
 * that a server worker's gap between two rounds, or a tail latency, can be told from
 * one the machine caused.
 *
 * Two figures:
 *  - per CPU, a SCHED_FIFO thread pinned to it sleeps 1 ms at a time (an absolute
 *    deadline, so nothing accumulates) and records how late it woke. Nothing of ours
 *    outranks it, so a late wake-up is time the CPU ran nothing we asked for: the
 *    hypervisor not running the vCPU (steal), interrupts and softirqs, a section of
 *    the kernel that cannot be preempted. That is the stall any thread on that CPU
 *    suffers at the same moment.
 *  - per thread named with --tids (the server's workers), its waits on the run
 *    queue: runnable, not running, because something else (another test, a client,
 *    the kernel) had the CPU. The kernel adds a wait to the thread's run_delay
 *    (/proc/PID/task/TID/schedstat, second field; the first is its time on the CPU)
 *    when the wait ends. A thread sampled every 1 ms gives the run_delay accrued in
 *    any window of time, to the millisecond (a wait that began before the window
 *    counts whole: an over-estimate, never an under-estimate). A wait inside
 *    sched_yield (the top of /proc/PID/task/TID/stack) is not the machine's: the
 *    server yields only while a worker waits for the others to adopt new roles
 *    (engine/roles_adopt.c), so each sample also says whether the thread was in it.
 * Neither needs schedstats (this kernel has CONFIG_SCHED_INFO, not CONFIG_SCHEDSTATS).
 *
 * Runs until SIGINT or SIGTERM (or --seconds), then prints, one per line:
 *   cpu C stall_max_us: N        and  cpu C stalls_over_5ms: N
 *   cpu C stalls_over_50us: N    and  cpu C stall_total_us: N (their sum)
 * (a 1 ms sleeper sees every stall of 1 ms or more; a shorter one only when it falls
 * on a wake-up, d / 1 ms of the time: the counts under 1 ms are a sample)
 *   stall_max_us: N              the worst over the CPUs
 *   tid T runq_wait_max_us: N    for each --tids: the most run_delay grew in 1 ms
 *   tid T runq_wait_total_us: N
 * and, with --log FILE, every sample for tests/soak/gaps.py, which finds the most the
 * machine took from a worker within the window of its longest gap, a line each:
 *   # xkv-stall 1
 *   s T_NS TID EXEC_NS DELAY_NS Y a sample of TID whose run_delay or Y changed (and the
 *                                 first); Y 1: it was in sched_yield
 *   l T_NS CPU LATE_NS            a sleeper on CPU that woke over 200 us late
 * (T_NS: CLOCK_MONOTONIC). With --progress S, the summary so far every S seconds on
 * stderr.
 *   xkv-stall [--pid PID --tids T,T...] [--log FILE] [--seconds S] [--progress S]
 * Exit 0; 2 bad usage; 1 a thread could not start or the log not be written. Without
 * the right to SCHED_FIFO it says so and measures at normal priority (then a late
 * wake-up is also time other threads of the same class took).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS   1000000ULL /* the sleepers' and the sampler's period */
#define STALL_BIG_NS 5000000ULL /* a stall counted apart */
#define STALL_NS     50000ULL   /* a late wake-up that counts as a stall */
#define STALL_LOG_NS 200000ULL /* a late wake-up written to the log */
#define MAX_CPUS    64
#define MAX_TIDS    64

/* What --log gets: a record each, kept in memory until the end (a few MB an hour). */
struct rec {
	uint64_t t_ns, a, b, c; /* a sample: exec, delay, in sched_yield; a late wake-up: late */
};

struct recs {
	struct rec *v;
	size_t n, cap;
	bool full; /* out of memory: the log says so, and the soak fails on it */
};

struct cpu_probe {
	pthread_t thread;
	int cpu;
	_Atomic uint64_t stall_max_ns;
	_Atomic uint64_t stalls_big;
	_Atomic uint64_t stalls, stall_total_ns; /* late wake-ups over STALL_NS, and their sum */
	struct recs late; /* written by its thread alone, read after the join */
};

struct tid_probe {
	int tid;
	char path[64];
	char stack_path[64];
	uint64_t last_delay_ns;
	bool last_yield;
	bool seen;
	_Atomic uint64_t wait_max_ns;
	_Atomic uint64_t wait_total_ns;
	struct recs samples; /* the sampler's alone, read after the join */
};

static struct cpu_probe cpus[MAX_CPUS];
static struct tid_probe tids[MAX_TIDS];
static int ncpus, ntids, pid;
static atomic_bool stopping;
static bool fifo = true;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void max_store(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

/* SCHED_FIFO at the lowest real-time priority: above every normal thread, no higher. */
static void go_fifo(void)
{
	struct sched_param p = {.sched_priority = 1};
	int err;

	if (!fifo)
		return;
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
	if (err) {
		fprintf(stderr, "xkv-stall: no SCHED_FIFO (%s): measuring at normal "
				"priority\n", strerror(err));
		fifo = false;
	}
}

static void recs_add(struct recs *r, uint64_t t_ns, uint64_t a, uint64_t b, uint64_t c)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct rec *v = r->full ? NULL : realloc(r->v, cap * sizeof(*v));

		if (!v) {
			r->full = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct rec){t_ns, a, b, c};
}

static struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000ULL),
				 .tv_nsec = (long)(ns % 1000000000ULL)};
}

static void *cpu_sleeper(void *arg)
{
	struct cpu_probe *c = arg;
	cpu_set_t set;
	uint64_t due;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "xkv-stall: cannot pin to CPU %d\n", c->cpu);
	go_fifo();
	due = now_ns() + PERIOD_NS;
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		struct timespec ts = ts_of(due);
		uint64_t late, t;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
		late = t > due ? t - due : 0;
		max_store(&c->stall_max_ns, late);
		if (late > STALL_BIG_NS)
			atomic_fetch_add_explicit(&c->stalls_big, 1, memory_order_relaxed);
		if (late > STALL_NS) {
			atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&c->stall_total_ns, late, memory_order_relaxed);
		}
		if (late > STALL_LOG_NS)
			recs_add(&c->late, t, late, 0, 0);
		/* the next deadline from now: a long stall is one late wake-up, not many */
		due = t + PERIOD_NS;
	}
	return NULL;
}

/*
 * Whether the thread is in sched_yield now: its kernel stack's top frame. (Its syscall
 * file says only "running" of a thread that waits on the run queue.)
 */
static bool in_yield(const struct tid_probe *t)
{
	FILE *f = fopen(t->stack_path, "r");
	char frame[128] = "";
	bool yes;

	if (!f)
		return false;
	yes = fgets(frame, sizeof(frame), f) && strstr(frame, "sched_yield");
	fclose(f);
	return yes;
}

/* The thread's time on the CPU and run_delay, ns; false when it is gone. */
static bool run_delay(const struct tid_probe *t, uint64_t *exec, uint64_t *delay)
{
	unsigned long long run, wait;
	FILE *f = fopen(t->path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	*exec = run;
	*delay = wait;
	return ok;
}

static void *tid_sampler(void *arg)
{
	uint64_t due = now_ns() + PERIOD_NS;

	(void)arg;
	go_fifo();
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		struct timespec ts = ts_of(due);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		for (int i = 0; i < ntids; i++) {
			struct tid_probe *t = &tids[i];
			uint64_t d, e;
			bool y;

			if (!run_delay(t, &e, &d))
				continue;
			y = in_yield(t);
			if (!t->seen || d != t->last_delay_ns || y != t->last_yield)
				recs_add(&t->samples, now_ns(), e, d, y);
			t->last_yield = y;
			if (t->seen && d > t->last_delay_ns) {
				max_store(&t->wait_max_ns, d - t->last_delay_ns);
				atomic_fetch_add_explicit(&t->wait_total_ns, d - t->last_delay_ns,
							  memory_order_relaxed);
			}
			t->last_delay_ns = d;
			t->seen = true;
		}
		due = now_ns() + PERIOD_NS;
	}
	return NULL;
}

static void report(FILE *out)
{
	uint64_t worst = 0;

	for (int c = 0; c < ncpus; c++) {
		uint64_t m = atomic_load(&cpus[c].stall_max_ns);

		fprintf(out, "cpu %d stall_max_us: %" PRIu64 "\n", cpus[c].cpu, m / 1000);
		fprintf(out, "cpu %d stalls_over_5ms: %" PRIu64 "\n", cpus[c].cpu,
			atomic_load(&cpus[c].stalls_big));
		fprintf(out, "cpu %d stalls_over_50us: %" PRIu64 "\n", cpus[c].cpu,
			atomic_load(&cpus[c].stalls));
		fprintf(out, "cpu %d stall_total_us: %" PRIu64 "\n", cpus[c].cpu,
			atomic_load(&cpus[c].stall_total_ns) / 1000);
		if (m > worst)
			worst = m;
	}
	fprintf(out, "stall_max_us: %" PRIu64 "\n", worst / 1000);
	for (int i = 0; i < ntids; i++) {
		fprintf(out, "tid %d runq_wait_max_us: %" PRIu64 "\n", tids[i].tid,
			atomic_load(&tids[i].wait_max_ns) / 1000);
		fprintf(out, "tid %d runq_wait_total_us: %" PRIu64 "\n", tids[i].tid,
			atomic_load(&tids[i].wait_total_ns) / 1000);
	}
	fflush(out);
}

static int log_write(const char *path)
{
	FILE *f = fopen(path, "w");
	bool full = false;

	if (!f) {
		fprintf(stderr, "xkv-stall: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# xkv-stall 1\n");
	for (int i = 0; i < ntids; i++) {
		for (size_t j = 0; j < tids[i].samples.n; j++) {
			const struct rec *r = &tids[i].samples.v[j];

			fprintf(f, "s %" PRIu64 " %d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				r->t_ns, tids[i].tid, r->a, r->b, r->c);
		}
		full |= tids[i].samples.full;
	}
	for (int c = 0; c < ncpus; c++) {
		for (size_t j = 0; j < cpus[c].late.n; j++) {
			const struct rec *r = &cpus[c].late.v[j];

			fprintf(f, "l %" PRIu64 " %d %" PRIu64 "\n", r->t_ns, cpus[c].cpu, r->a);
		}
		full |= cpus[c].late.full;
	}
	/* a log cut short would hide waits: say so, and the reader refuses it */
	if (full)
		fprintf(f, "# incomplete: out of memory\n");
	if (fclose(f) || full) {
		fprintf(stderr, "xkv-stall: %s: %s\n", path,
			full ? "out of memory for the samples" : strerror(errno));
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: xkv-stall [--pid PID --tids T,T...] [--log FILE] [--seconds S] "
		     "[--progress S]\n"
		     "How late a SCHED_FIFO thread on each CPU wakes from 1 ms sleeps (the\n"
		     "machine's stalls) and, for each thread TID of process PID, its longest\n"
		     "wait on the run queue; printed at SIGINT, SIGTERM or after S seconds.\n");
}

static int parse_tids(char *list)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || ntids == MAX_TIDS)
			return -1;
		tids[ntids++].tid = (int)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"tids", required_argument, NULL, 't'},
		{"seconds", required_argument, NULL, 's'},
		{"progress", required_argument, NULL, 'P'},
		{"log", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *log = NULL;
	double seconds = 0, progress = 0;
	pthread_t sampler;
	sigset_t stop;
	uint64_t start, next_progress;
	int opt, sig;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pid = atoi(optarg);
			break;
		case 't':
			if (parse_tids(optarg)) {
				fprintf(stderr,
					"xkv-stall: --tids: thread ids, comma separated\n");
				return 2;
			}
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'P':
			progress = atof(optarg);
			break;
		case 'l':
			log = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (ntids && pid <= 0) || seconds < 0 || progress < 0) {
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < ntids; i++) {
		snprintf(tids[i].path, sizeof(tids[i].path), "/proc/%d/task/%d/schedstat", pid,
			 tids[i].tid);
		snprintf(tids[i].stack_path, sizeof(tids[i].stack_path),
			 "/proc/%d/task/%d/stack", pid, tids[i].tid);
	}

	/* the signals are waited for here, not delivered to the probes */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_CPUS; c++) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(c, &set))
			continue;
		cpus[ncpus].cpu = c;
		if (pthread_create(&cpus[ncpus].thread, NULL, cpu_sleeper, &cpus[ncpus])) {
			fprintf(stderr, "xkv-stall: cannot start a thread\n");
			return 1;
		}
		ncpus++;
	}
	if (ntids && pthread_create(&sampler, NULL, tid_sampler, NULL)) {
		fprintf(stderr, "xkv-stall: cannot start a thread\n");
		return 1;
	}

	start = now_ns();
	next_progress = progress > 0 ? start + (uint64_t)(progress * 1e9) : UINT64_MAX;
	for (;;) {
		struct timespec tick = {.tv_nsec = 100000000L}; /* 100 ms */
		uint64_t t;

		sig = sigtimedwait(&stop, NULL, &tick);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		t = now_ns();
		if (seconds > 0 && t - start >= (uint64_t)(seconds * 1e9))
			break;
		if (t >= next_progress) {
			report(stderr);
			next_progress += (uint64_t)(progress * 1e9);
		}
	}
	atomic_store(&stopping, true);
	for (int c = 0; c < ncpus; c++)
		pthread_join(cpus[c].thread, NULL);
	if (ntids)
		pthread_join(sampler, NULL);
	report(stdout);
	return log && log_write(log) ? 1 : 0;
}
