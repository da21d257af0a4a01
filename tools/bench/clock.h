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

#endif /* XKV_BENCH_CLOCK_H */
