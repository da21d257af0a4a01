/* SPDX-License-Identifier: MIT */
#ifndef XKV_CLOCK_H
#define XKV_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* clock in nanoseconds */
static inline uint64_t xkv_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds: bpf_ktime_get_ns()'s clock, so XDP's stamps compare. */
static inline uint64_t xkv_now_ns(void)
{
	return xkv_clock_ns(CLOCK_MONOTONIC);
}

/*
 * The same clock read for every request a worker times, at a third of the cost
 * (10 ns here, against 24): the TSC counted from the last CLOCK_MONOTONIC reading
 * (xkv_fast_clock_sync, once per round of polling) at the rate measured once per
 * process. Where there is no invariant TSC to trust (not x86-64, or the kernel's
 * clocksource is not tsc), every read is clock_gettime.
 */
struct xkv_fast_clock {
	uint64_t base_ns, base_tsc;
	uint64_t mult; /* nanoseconds per tick, << 32; 0: read clock_gettime */
};

/* Measures the TSC's rate (the first call, about 2 ms), then syncs c to now. */
void xkv_fast_clock_init(struct xkv_fast_clock *c);

static inline uint64_t xkv_tsc(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return 0;
#endif
}

static inline void xkv_fast_clock_sync(struct xkv_fast_clock *c, uint64_t now_ns)
{
	c->base_ns = now_ns;
	c->base_tsc = xkv_tsc();
}

static inline uint64_t xkv_fast_clock_now(const struct xkv_fast_clock *c)
{
	uint64_t tsc;

	if (!c->mult)
		return xkv_now_ns();
	tsc = xkv_tsc();
	/* synced on another CPU whose TSC runs behind: never before the sync */
	if (tsc < c->base_tsc)
		return c->base_ns;
	return c->base_ns + (uint64_t)(((unsigned __int128)(tsc - c->base_tsc) * c->mult) >> 32);
}

#endif /* XKV_CLOCK_H */
