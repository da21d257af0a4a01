/* SPDX-License-Identifier: MIT */
/*
 * The store's clock, moved by a test: a suite linked with store_clock.o and
 * -Wl,--wrap=xkv_store_now (tests/unit/unit.mk) sees every xkv_store_now, the store's
 * own included, run seconds ahead, so expiry is tested without sleeping. The server
 * has no such knob: its clock is store/clock.c's alone.
 */
#ifndef XKV_TESTS_STORE_CLOCK_H
#define XKV_TESTS_STORE_CLOCK_H

#include <stdint.h>

struct xkv_store;

/* Moves the store's clock by seconds, for every store of this process. */
void xkv_store_clock_shift(struct xkv_store *s, int32_t seconds);

#endif /* XKV_TESTS_STORE_CLOCK_H */
