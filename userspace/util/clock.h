/* SPDX-License-Identifier: MIT */
#ifndef XKV_CLOCK_H
#define XKV_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: bpf_ktime_get_ns()'s clock, so XDP's stamps compare. */
static inline uint64_t xkv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif /* XKV_CLOCK_H */
