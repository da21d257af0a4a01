/* SPDX-License-Identifier: MIT */
/*
 * One measured run seen over time: a large fraction that changes on a schedule
 * (--large-pct-steps with --step-seconds: Minos's dynamic workload, NSDI'19 Sec. 6.6),
 * and what each second of the run saw (--interval-csv).
 *
 * The schedule is a list of percents, each for step_ns; a request's percent is that of
 * the step its intended send time falls in (the open loop's Poisson schedule, fixed by
 * the seed), so a seed fixes which requests are large, whatever the machine's timing.
 *
 * Each thread counts its answers and losses into the second of the run they happened
 * in, into an interval log allocated before the run (about 240 KB a second: two
 * histograms): nothing is allocated per request. The logs of every thread are merged
 * second by second at the end, into the CSV rows.
 */
#ifndef XKV_BENCH_INTERVAL_H
#define XKV_BENCH_INTERVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/hist.h"

#define SCHEDULE_STEPS_MAX 64
#define INTERVALS_MAX	   3600 /* seconds an interval log holds: ~850 MB at most */

struct large_schedule {
	unsigned n; /* steps; 0: no schedule */
	double pct[SCHEDULE_STEPS_MAX];
	uint64_t step_ns;
};

/*
 * Fills s from "P,P,...": percents 0 <= P < 100. Returns 0, or -EINVAL with the
 * reason in why.
 */
int large_schedule_parse(const char *list, uint64_t step_ns, struct large_schedule *s, char *why,
			 size_t why_len);
/* The percent elapsed_ns into the run: the last step's after the schedule's end. */
double large_schedule_pct(const struct large_schedule *s, uint64_t elapsed_ns);
double large_schedule_max(const struct large_schedule *s);

/* One second of one thread, or of every thread merged. */
struct interval {
	uint64_t answered, lost; /* answered: right answers and misses, as "ops" elsewhere */
	struct hist small;	 /* latencies of requests for values not large */
	struct hist large;
};

struct interval_log {
	unsigned n;	/* seconds */
	unsigned ready; /* the first this many are initialised (as the run reaches them) */
	struct interval *iv;
};

/* Room for a run of seconds (rounded up). Returns 0, -EINVAL (too long) or -ENOMEM. */
int interval_log_init(struct interval_log *log, double seconds);
void interval_log_free(struct interval_log *log);
/* The second elapsed_ns falls in; after the end, the last one. */
struct interval *interval_at(struct interval_log *log, uint64_t elapsed_ns);

/* A CSV row: the merged second i of a run. */
struct interval_row {
	unsigned second;
	double ops_per_s;
	double p50_us, p99_us; /* every request */
	double p99_small_us, p99_large_us; /* < 0: no such request answered in that second */
	uint64_t lost;
	double large_pct; /* the schedule's at the second's start */
};

/*
 * Merges second i of each of the n logs into row. seconds is the run's length (the
 * last second may be shorter); pct the schedule, or NULL for a fixed large_pct.
 * Returns 0 or -ENOMEM.
 */
int interval_row(const struct interval_log *logs, unsigned n, unsigned i, double seconds,
		 const struct large_schedule *pct, double large_pct, struct interval_row *row);

/* The header, then a row per second; unix_s is the run's start (CLOCK_REALTIME). */
int interval_csv(FILE *f, const struct interval_log *logs, unsigned n, double seconds,
		 const struct large_schedule *pct, double large_pct, double unix_s);

#endif /* XKV_BENCH_INTERVAL_H */
