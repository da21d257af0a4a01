/* SPDX-License-Identifier: MIT */
/*
 * The open loop's schedule: a Poisson process of intended send times. Gaps are
 * exponential with mean 1/rate, drawn from a random stream of its own, so that
 * a seed fixes the schedule and the request sequence apart from each other.
 * Times are kept as doubles (ns) so that rounding never accumulates into drift.
 */
#ifndef XKV_BENCH_ARRIVALS_H
#define XKV_BENCH_ARRIVALS_H

#include <stdint.h>

#include "common/rng.h"

#define ARRIVALS_STREAM 0x80000000u /* or-ed into a thread's stream: apart from its requests */

struct arrivals {
	struct rng rng;
	double mean_gap_ns;
	double next_ns; /* CLOCK_MONOTONIC: the intended send time of the next request */
};

/* rate_per_s > 0; the first arrival is one gap after start_ns. */
void arrivals_init(struct arrivals *a, double rate_per_s, uint64_t seed, uint32_t stream,
		   uint64_t start_ns);

static inline uint64_t arrivals_next(const struct arrivals *a)
{
	return (uint64_t)a->next_ns;
}

/* Moves to the arrival after the next one. */
void arrivals_advance(struct arrivals *a);

/* Arrivals from the next one up to (not including) end_ns, each passed over. */
uint64_t arrivals_skip_until(struct arrivals *a, uint64_t end_ns);

#endif /* XKV_BENCH_ARRIVALS_H */
