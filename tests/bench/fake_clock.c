// SPDX-License-Identifier: MIT
#include "fake_clock.h"

static uint64_t fake_clock_now(struct bench_clock *base)
{
	struct fake_clock *c = (struct fake_clock *)base;

	c->now_ns += c->tick_ns;
	return c->now_ns;
}

void fake_clock_init(struct fake_clock *c, uint64_t start_ns, uint64_t tick_ns)
{
	*c = (struct fake_clock){
		.base = {.now_ns = fake_clock_now}, .now_ns = start_ns, .tick_ns = tick_ns};
}
