/* SPDX-License-Identifier: MIT */
/*
 * The highest offered rate whose p99 meets a latency SLO, found by a bounded search
 * of short open-loop runs: a geometric ramp (x2 per step) from a low start rate
 * until a step fails, then bisection (geometric midpoints) between the last rate
 * that met the SLO and the first that did not, until they are within `precision`.
 *
 * A step meets the SLO when its p99 (or another percentile) over every request due
 * in the step, counting a request lost, wrongly answered or never sent as infinitely
 * late, is at most the SLO. The SLO is given, or a multiple of the mean latency at
 * the start rate (the service time as low load shows it). The run itself is
 * injected, so the search can be tested against a synthetic latency curve.
 *
 * A rate fails only when `retries` + 1 steps at it in a row miss: on a machine that
 * stalls a CPU for milliseconds now and then (a VM), one stall in a short step can
 * miss a 1 ms SLO at any rate, and a search that believed it would stop at random.
 * A rate the server cannot sustain misses every time, so the answer is not raised.
 */
#ifndef XKV_BENCH_SWEEP_H
#define XKV_BENCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/hist.h"

#define SWEEP_STEPS_MAX 64

/* One step: an open-loop run at one offered rate. */
struct sweep_point {
	double offered;	   /* requests per second asked for */
	double scheduled;  /* per second, as the Poisson schedule drew them */
	double achieved;   /* answers per second */
	double p50_us, p99_us, mean_us; /* of the answers */
	double tail_us;	   /* the SLO's percentile of everything due; INFINITY: too few answers */
	double send_lag_p99_us;		/* how late requests went out */
	uint64_t lost, errors, unsent;
	bool meets; /* set by the search */
	bool retry; /* the step before ran at this rate too, and missed */
};

/* Runs one step at rate (requests per second). Returns 0 or -errno, which ends the search. */
typedef int (*sweep_run_fn)(void *ctx, double rate, struct sweep_point *p);

struct sweep_config {
	double start_rate; /* the first step, low enough to meet the SLO */
	double max_rate;   /* the ramp stops here */
	double slo_us;	   /* 0: slo_mult x the mean latency of the first step */
	double slo_mult;
	double percentile; /* the SLO's, e.g. 99 (only named in the progress lines) */
	double precision;  /* bisection stops when hi / lo <= 1 + precision */
	unsigned retries;  /* steps run again at a rate that missed before it fails */
	unsigned max_steps; /* at most SWEEP_STEPS_MAX */
	FILE *progress;	    /* a line per step, or NULL */
};

struct sweep_result {
	double slo_us;
	double percentile;
	double service_us; /* the first step's mean latency */
	unsigned retries;  /* the config's */
	double rate;	   /* the highest offered rate that met the SLO; 0: not even the first */
	bool bracketed;	   /* a failing rate bounds it (else max_rate or max_steps did) */
	unsigned n;
	struct sweep_point steps[SWEEP_STEPS_MAX]; /* in the order run */
};

/* Returns 0 (r filled in, even when no rate met the SLO), -EINVAL or the run's -errno. */
int sweep_search(const struct sweep_config *cfg, sweep_run_fn run, void *ctx,
		 struct sweep_result *r);

/*
 * Percentile pct (us) over answered + failed requests, the failed counting as
 * infinitely late: INFINITY when more than 100 - pct % failed or nothing was answered.
 */
double sweep_tail_us(const struct hist *answered, uint64_t failed, double pct);

#endif /* XKV_BENCH_SWEEP_H */
