// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>

#include "sweep.h"

double sweep_tail_us(const struct hist *answered, uint64_t failed, double pct)
{
	double q;

	if (!answered->count)
		return INFINITY;
	/* rank ceil(pct % of all) among the answers, which come before every failure */
	q = pct * (double)(answered->count + failed) / (double)answered->count;
	return q > 100 ? INFINITY : hist_percentile(answered, q) / 1e3;
}

/* Runs one step at rate and judges it. Returns 0 or the run's -errno. */
static int step(const struct sweep_config *cfg, sweep_run_fn run, void *ctx,
		struct sweep_result *r, double rate, bool retry)
{
	struct sweep_point *p = &r->steps[r->n];
	int err;

	*p = (struct sweep_point){0};
	err = run(ctx, rate, p);
	if (err)
		return err;
	p->offered = rate;
	p->retry = retry;
	if (r->n == 0 && !cfg->slo_us) {
		r->service_us = p->mean_us;
		r->slo_us = cfg->slo_mult * p->mean_us;
	}
	p->meets = p->tail_us <= r->slo_us;
	r->n++;
	if (cfg->progress)
		fprintf(cfg->progress,
			"sweep step %2u: offered %10.0f/s achieved %10.0f/s p50 %8.1f us p99 "
			"%8.1f us (p%g of all due: %8.1f) lost %llu unsent %llu: %s the %.1f us "
			"SLO%s\n",
			r->n, rate, p->achieved, p->p50_us, p->p99_us, cfg->percentile, p->tail_us,
			(unsigned long long)p->lost, (unsigned long long)p->unsent,
			p->meets ? "meets" : "misses", r->slo_us, retry ? " (again)" : "");
	return 0;
}

enum verdict {
	MEETS,
	FAILS,	   /* retries + 1 misses in a row */
	UNDECIDED, /* the step limit came between misses */
};

/* Steps at rate until one meets the SLO or retries + 1 have missed. Returns 0 or -errno. */
static int try_rate(const struct sweep_config *cfg, sweep_run_fn run, void *ctx,
		    struct sweep_result *r, double rate, enum verdict *v)
{
	unsigned misses = 0;
	int err;

	for (;;) {
		err = step(cfg, run, ctx, r, rate, misses > 0);
		if (err)
			return err;
		if (r->steps[r->n - 1].meets) {
			*v = MEETS;
			return 0;
		}
		if (misses++ == cfg->retries) {
			*v = FAILS;
			return 0;
		}
		if (r->n == cfg->max_steps) {
			*v = UNDECIDED;
			return 0;
		}
	}
}

int sweep_search(const struct sweep_config *cfg, sweep_run_fn run, void *ctx,
		 struct sweep_result *r)
{
	unsigned max_steps = cfg->max_steps;
	double lo, hi = 0;
	enum verdict v;
	int err;

	if (!(cfg->start_rate > 0) || cfg->max_rate < cfg->start_rate || !(cfg->precision > 0) ||
	    !(cfg->slo_us > 0 || cfg->slo_mult > 0) || !(cfg->percentile > 0) ||
	    cfg->percentile > 100 || max_steps < 1 ||
	    max_steps > SWEEP_STEPS_MAX)
		return -EINVAL;
	*r = (struct sweep_result){
		.slo_us = cfg->slo_us, .percentile = cfg->percentile, .retries = cfg->retries};
	err = try_rate(cfg, run, ctx, r, cfg->start_rate, &v);
	if (err || v != MEETS)
		return err;
	lo = cfg->start_rate;
	while (r->n < max_steps && lo < cfg->max_rate) {
		double rate = fmin(2 * lo, cfg->max_rate);

		err = try_rate(cfg, run, ctx, r, rate, &v);
		if (err)
			return err;
		if (v != MEETS) { /* undecided: the search ends unbracketed */
			hi = v == FAILS ? rate : 0;
			break;
		}
		lo = rate;
	}
	while (hi && r->n < max_steps && hi / lo > 1 + cfg->precision) {
		double rate = sqrt(lo * hi);

		err = try_rate(cfg, run, ctx, r, rate, &v);
		if (err)
			return err;
		if (v == UNDECIDED)
			break;
		if (v == MEETS)
			lo = rate;
		else
			hi = rate;
	}
	r->rate = lo;
	r->bracketed = hi > 0;
	return 0;
}
