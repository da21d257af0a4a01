/* SPDX-License-Identifier: MIT */
/*
 * A clock the test drives, for the load generator's loop (struct bench_clock) and
 * the fake server (fake_server.h). Every reading moves it on by tick_ns, the
 * generator's own work between two readings; the fake server moves it on where it
 * would sleep: a receive waiting for a reply or its timeout, a stalled send.
 * Nothing else does: what a test asserts about time is decided by the test, not
 * by how busy the machine is.
 */
#ifndef XKV_TEST_FAKE_CLOCK_H
#define XKV_TEST_FAKE_CLOCK_H

#include <stdint.h>

#include "clock.h"

struct fake_clock {
	struct bench_clock base;
	uint64_t now_ns; /* read without ticking by the test and the fake server */
	uint64_t tick_ns;
};

void fake_clock_init(struct fake_clock *c, uint64_t start_ns, uint64_t tick_ns);

#endif /* XKV_TEST_FAKE_CLOCK_H */
