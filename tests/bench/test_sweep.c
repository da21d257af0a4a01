// SPDX-License-Identifier: MIT
/*
 * The SLO sweep's search against synthetic latency curves (an M/M/1 queue, whose
 * p99 at each rate is known in closed form, so the right answer is too), its
 * bounds, and the p99 that counts lost requests as infinitely late.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "sweep.h"

/* M/M/1: the sojourn time is exponential with mean S / (1 - rho), so p99 = ln(100) x that. */
struct mm1 {
	double capacity;   /* requests per second */
	double service_us; /* S */
	unsigned runs;
	unsigned fail_at;  /* the run that returns -EIO (0: none) */
	unsigned stall_at; /* the run a stall spoils: it misses any SLO (0: none) */
};

static int mm1_run(void *ctx, double rate, struct sweep_point *p)
{
	struct mm1 *q = ctx;
	double rho = rate / q->capacity;
	double mean = rho < 1 ? q->service_us / (1 - rho) : INFINITY;

	if (++q->runs == q->fail_at)
		return -EIO;
	*p = (struct sweep_point){
		.scheduled = rate,
		.achieved = fmin(rate, q->capacity),
		.mean_us = mean,
		.p50_us = mean * log(2),
		.p99_us = mean * log(100),
		.tail_us = q->runs == q->stall_at ? INFINITY : mean * log(100),
	};
	return 0;
}

/* The highest rate whose p99 is at most slo_us. */
static double mm1_answer(const struct mm1 *q, double slo_us)
{
	return q->capacity * (1 - q->service_us * log(100) / slo_us);
}

static struct sweep_config config(double slo_us, double slo_mult)
{
	return (struct sweep_config){
		.start_rate = 1000,
		.max_rate = 1e8,
		.slo_us = slo_us,
		.slo_mult = slo_mult,
		.percentile = 99,
		.precision = 0.05,
		.max_steps = 30,
	};
}

/* The rate found met the SLO, and a failing rate within the precision above it bounds it. */
static void assert_converged(const struct sweep_result *r, double answer, double precision)
{
	const struct sweep_point *fail = NULL;

	cr_assert(r->bracketed);
	cr_assert_leq(r->rate, answer, "found %g/s, over the %g/s that meets the SLO", r->rate,
		      answer);
	cr_assert_geq(r->rate * (1 + precision), answer, "found %g/s, short of %g/s", r->rate,
		      answer);
	for (unsigned i = 0; i < r->n; i++) {
		const struct sweep_point *p = &r->steps[i];

		cr_assert_eq(p->meets, p->tail_us <= r->slo_us, "step %u judged wrongly", i);
		if (!p->meets && p->offered > r->rate && (!fail || p->offered < fail->offered))
			fail = p;
	}
	cr_assert_not_null(fail);
	cr_assert_leq(fail->offered / r->rate, 1 + precision + 1e-9);
}

Test(sweep, converges_on_the_rate_an_slo_allows)
{
	static const double capacities[] = {5e4, 4.4e5, 3e6};

	for (int i = 0; i < 3; i++) {
		struct mm1 q = {.capacity = capacities[i], .service_us = 5};
		struct sweep_config cfg = config(200, 0);
		struct sweep_result r;

		cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
		assert_converged(&r, mm1_answer(&q, 200), cfg.precision);
		cr_assert_eq(q.runs, r.n);
		cr_assert_leq(r.n, cfg.max_steps);
		cr_assert_eq(r.slo_us, 200);
		cr_assert_eq(r.steps[0].offered, cfg.start_rate);
	}
}

Test(sweep, an_slo_as_a_multiple_of_the_low_load_mean)
{
	struct mm1 q = {.capacity = 2e5, .service_us = 4};
	struct sweep_config cfg = config(0, 10);
	double service = q.service_us / (1 - 1000 / q.capacity), slo = 10 * service;
	struct sweep_result r;

	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_float_eq(r.service_us, service, 1e-9);
	cr_assert_float_eq(r.slo_us, slo, 1e-9);
	assert_converged(&r, mm1_answer(&q, slo), cfg.precision);
}

Test(sweep, a_tighter_precision_costs_steps_and_lands_closer)
{
	struct mm1 q = {.capacity = 1e6, .service_us = 2};
	struct sweep_config cfg = config(100, 0);
	struct sweep_result coarse, fine;

	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &coarse), 0);
	cfg.precision = 0.001;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &fine), 0);
	assert_converged(&fine, mm1_answer(&q, 100), 0.001);
	cr_assert_gt(fine.n, coarse.n);
}

Test(sweep, nothing_found_when_the_first_step_misses)
{
	struct mm1 q = {.capacity = 1e6, .service_us = 50};
	struct sweep_config cfg = config(100, 0); /* below ln(100) x 50 us even unloaded */
	struct sweep_result r;

	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_eq(r.rate, 0);
	cr_assert_eq(r.n, 1);
	cr_assert_not(r.steps[0].meets);
}

Test(sweep, stops_at_the_highest_rate_allowed)
{
	struct mm1 q = {.capacity = 1e9, .service_us = 1};
	struct sweep_config cfg = config(1000, 0);
	struct sweep_result r;

	cfg.max_rate = 50000;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_eq(r.rate, 50000);
	cr_assert_not(r.bracketed);
	cr_assert_eq(r.steps[r.n - 1].offered, 50000);
	cr_assert_eq(r.n, 7, "1, 2, 4, 8, 16, 32, then 50 thousand");
}

Test(sweep, the_step_limit_bounds_the_search)
{
	struct mm1 q = {.capacity = 1e6, .service_us = 2};
	struct sweep_config cfg = config(100, 0);
	struct sweep_result r;

	cfg.precision = 1e-12;
	cfg.max_steps = 12;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_eq(r.n, 12);
	cr_assert_eq(q.runs, 12);
	cr_assert_leq(r.rate, mm1_answer(&q, 100));
	cr_assert(r.bracketed);
}

/* A stall spoils one step at a rate the server sustains: the step is run again. */
Test(sweep, a_stalled_step_is_run_again)
{
	struct mm1 q = {.capacity = 4.4e5, .service_us = 5, .stall_at = 4};
	struct sweep_config cfg = config(200, 0);
	struct sweep_result r;

	cfg.retries = 1;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	assert_converged(&r, mm1_answer(&q, 200), cfg.precision);
	cr_assert(!r.steps[3].meets && r.steps[4].meets && r.steps[4].retry);
	cr_assert_eq(r.steps[4].offered, r.steps[3].offered, "the same rate again");
	cr_assert_eq(r.retries, 1);

	/* without the retry the search believes the stall and stops at a quarter */
	q = (struct mm1){.capacity = 4.4e5, .service_us = 5, .stall_at = 4};
	cfg.retries = 0;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_lt(r.rate, mm1_answer(&q, 200) / 2);
}

/* A rate the server cannot sustain misses every time: retries do not raise the answer. */
Test(sweep, a_rate_that_always_misses_fails_after_its_retries)
{
	struct mm1 q = {.capacity = 4.4e5, .service_us = 5};
	struct sweep_config cfg = config(200, 0);
	struct sweep_result r;
	unsigned misses = 0;

	cfg.retries = 2;
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	assert_converged(&r, mm1_answer(&q, 200), cfg.precision);
	for (unsigned i = 0; i < r.n; i++) {
		if (r.steps[i].meets) {
			cr_assert_eq(misses % 3, 0, "step %u: a rate judged after %u misses", i,
				     misses % 3);
			continue;
		}
		/* each miss is the first, second or third at its rate, in a row */
		cr_assert_eq(r.steps[i].retry, misses % 3 != 0, "step %u", i);
		if (misses % 3)
			cr_assert_eq(r.steps[i].offered, r.steps[i - 1].offered);
		misses++;
	}
	cr_assert_gt(misses, 0);
	cr_assert_eq(misses % 3, 0, "every failing rate missed three times");
}

Test(sweep, a_failing_run_ends_it)
{
	struct mm1 q = {.capacity = 1e6, .service_us = 2, .fail_at = 3};
	struct sweep_config cfg = config(100, 0);
	struct sweep_result r;

	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), -EIO);
	cr_assert_eq(r.n, 2, "the steps before the failure are kept");
}

Test(sweep, bad_configs)
{
	struct mm1 q = {.capacity = 1e6, .service_us = 2};
	struct sweep_config bad[] = {config(0, 0),   config(100, 0), config(100, 0),
				     config(100, 0), config(100, 0), config(100, 0)};
	struct sweep_result r;

	bad[1].start_rate = 0;
	bad[2].max_rate = 10;
	bad[3].precision = 0;
	bad[4].max_steps = SWEEP_STEPS_MAX + 1;
	bad[5].percentile = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sweep_search(&bad[i], mm1_run, &q, &r), -EINVAL, "config %zu", i);
	cr_assert_eq(q.runs, 0);
}

Test(sweep, the_tail_counts_failures_as_infinitely_late)
{
	struct hist *h = malloc(sizeof(*h));

	cr_assert_not_null(h);
	hist_init(h);
	for (uint64_t us = 1; us <= 990; us++)
		hist_record(h, us * 1000);
	/* 1000 due: rank 990 is the slowest answer; one more failure and p99 is a failure */
	cr_assert_float_eq(sweep_tail_us(h, 10, 99), 990, 990 * 0.002);
	cr_assert(isinf(sweep_tail_us(h, 11, 99)));
	cr_assert_float_eq(sweep_tail_us(h, 0, 99), 981, 981 * 0.002, "ceil(0.99 x 990) = 981");
	/* p90: up to 10 % may fail */
	cr_assert_float_eq(sweep_tail_us(h, 10, 90), 900, 900 * 0.002);
	cr_assert_float_eq(sweep_tail_us(h, 110, 90), 990, 990 * 0.002, "1100 due, 110 failed");
	cr_assert(isinf(sweep_tail_us(h, 111, 90)));
	hist_init(h);
	cr_assert(isinf(sweep_tail_us(h, 0, 99)), "nothing answered");
	free(h);
}

/* The step limit between two misses at a rate decides nothing: no failing rate bounds it. */
Test(sweep, a_miss_cut_short_by_the_step_limit_is_no_failure)
{
	struct mm1 q = {.capacity = 4.4e5, .service_us = 5, .stall_at = 4};
	struct sweep_config cfg = config(200, 0);
	struct sweep_result r;

	cfg.retries = 1;
	cfg.max_steps = 4; /* the 4th step, 8000/s, misses and is the last */
	cr_assert_eq(sweep_search(&cfg, mm1_run, &q, &r), 0);
	cr_assert_eq(r.n, 4);
	cr_assert(!r.steps[3].meets);
	cr_assert(!r.bracketed, "a rate that missed once, with its retry never run");
	cr_assert_eq(r.rate, 4000);
}
