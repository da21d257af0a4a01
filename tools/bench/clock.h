/* SPDX-License-Identifier: MIT */
#ifndef XKV_BENCH_CLOCK_H
#define XKV_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns: every time the load generator takes or compares. */
static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ns as a timespec, for ppoll(2): a wait to the microsecond, not poll's millisecond. */
static inline struct timespec bench_timespec(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000ULL),
				 .tv_nsec = (long)(ns % 1000000000ULL)};
}

/*
 * Another clock for the loop to read, so that a test decides what time it is
 * (tests/bench/fake_clock.h). It is embedded first in its owner's struct.
 */
struct bench_clock {
	uint64_t (*now_ns)(struct bench_clock *c);
};

/* The time on c; NULL is CLOCK_MONOTONIC, read inline: the real clock costs a branch. */
static inline uint64_t bench_clock_now(struct bench_clock *c)
{
	return c ? c->now_ns(c) : bench_now_ns();
}

#endif /* XKV_BENCH_CLOCK_H */
