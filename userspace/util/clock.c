// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"

#define CALIBRATE_NS 2000000ULL

static uint64_t tsc_mult;
static pthread_once_t calibrated = PTHREAD_ONCE_INIT;

/* The kernel keeps CLOCK_MONOTONIC on the TSC only when it found the TSC invariant. */
static int clocksource_is_tsc(void)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	char name[32] = "";
	int tsc;

	if (!f)
		return 0;
	tsc = fgets(name, sizeof(name), f) && !strcmp(name, "tsc\n");
	fclose(f);
	return tsc;
}

/*
 * A CLOCK_MONOTONIC reading and the TSC at the same moment: the tightest of a few
 * brackets, so that a stall of the vCPU between two reads does not skew the rate.
 */
static void sample(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t before = xkv_tsc(), now = xkv_now_ns(), after = xkv_tsc();

		if (after - before < best) {
			best = after - before;
			*ns = now;
			*tsc = before + (after - before) / 2;
		}
	}
}

static void calibrate(void)
{
	uint64_t ns0, tsc0, ns1, tsc1;

	if (!xkv_tsc() || !clocksource_is_tsc())
		return;
	sample(&ns0, &tsc0);
	while (xkv_now_ns() - ns0 < CALIBRATE_NS)
		;
	sample(&ns1, &tsc1);
	if (tsc1 > tsc0)
		tsc_mult = (uint64_t)(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0));
}

void xkv_fast_clock_init(struct xkv_fast_clock *c)
{
	pthread_once(&calibrated, calibrate);
	c->mult = tsc_mult;
	xkv_fast_clock_sync(c, xkv_now_ns());
}
