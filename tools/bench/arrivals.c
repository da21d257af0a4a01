// SPDX-License-Identifier: MIT
#include "arrivals.h"

void arrivals_init(struct arrivals *a, double rate_per_s, uint64_t seed, uint32_t stream,
		   uint64_t start_ns)
{
	rng_seed(&a->rng, seed, stream | ARRIVALS_STREAM);
	a->mean_gap_ns = 1e9 / rate_per_s;
	a->next_ns = (double)start_ns;
	arrivals_advance(a);
}

void arrivals_advance(struct arrivals *a)
{
	a->next_ns += rng_exp(&a->rng) * a->mean_gap_ns;
}

uint64_t arrivals_skip_until(struct arrivals *a, uint64_t end_ns)
{
	uint64_t n = 0;

	for (; arrivals_next(a) < end_ns; n++)
		arrivals_advance(a);
	return n;
}
