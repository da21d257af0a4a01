// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"

#define NS_PER_S 1000000000ULL

int large_schedule_parse(const char *list, uint64_t step_ns, struct large_schedule *s, char *why,
			 size_t why_len)
{
	const char *p = list;

	*s = (struct large_schedule){.step_ns = step_ns};
	for (;;) {
		char *end;
		double v = strtod(p, &end);

		if (end == p || (*end && *end != ',') || !(v >= 0 && v < 100)) {
			snprintf(why, why_len,
				 "--large-pct-steps %s: percents 0 or more and below 100, "
				 "comma-separated",
				 list);
			return -EINVAL;
		}
		if (s->n == SCHEDULE_STEPS_MAX) {
			snprintf(why, why_len, "--large-pct-steps %s: at most %d steps", list,
				 SCHEDULE_STEPS_MAX);
			return -EINVAL;
		}
		s->pct[s->n++] = v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

double large_schedule_pct(const struct large_schedule *s, uint64_t elapsed_ns)
{
	uint64_t step = elapsed_ns / s->step_ns;

	return s->pct[step < s->n ? step : s->n - 1];
}

double large_schedule_max(const struct large_schedule *s)
{
	double max = 0;

	for (unsigned i = 0; i < s->n; i++)
		if (s->pct[i] > max)
			max = s->pct[i];
	return max;
}

int interval_log_init(struct interval_log *log, double seconds)
{
	double n = ceil(seconds);

	*log = (struct interval_log){0};
	if (!(n >= 1 && n <= INTERVALS_MAX))
		return -EINVAL;
	/* pages are touched as the run reaches each second, not here */
	log->iv = calloc((size_t)n, sizeof(*log->iv));
	if (!log->iv)
		return -ENOMEM;
	log->n = (unsigned)n;
	return 0;
}

void interval_log_free(struct interval_log *log)
{
	free(log->iv);
	*log = (struct interval_log){0};
}

struct interval *interval_at(struct interval_log *log, uint64_t elapsed_ns)
{
	uint64_t i = elapsed_ns / NS_PER_S;

	if (i >= log->n)
		i = log->n - 1;
	for (; log->ready <= i; log->ready++) {
		struct interval *iv = &log->iv[log->ready];

		iv->answered = iv->lost = 0;
		hist_init(&iv->small);
		hist_init(&iv->large);
	}
	return &log->iv[i];
}

static double p_us(const struct hist *h, double q)
{
	return h->count ? hist_percentile(h, q) / 1e3 : -1;
}

int interval_row(const struct interval_log *logs, unsigned n, unsigned i, double seconds,
		 const struct large_schedule *pct, double large_pct, struct interval_row *row)
{
	struct interval *m = malloc(sizeof(*m));
	struct hist *all = malloc(sizeof(*all));
	double len = seconds - i < 1 ? seconds - i : 1;
	int err = 0;

	if (!m || !all) {
		err = -ENOMEM;
		goto out;
	}
	m->answered = m->lost = 0;
	hist_init(&m->small);
	hist_init(&m->large);
	for (unsigned t = 0; t < n; t++) {
		const struct interval *iv = &logs[t].iv[i];

		if (i >= logs[t].ready) /* that thread saw nothing from this second on */
			continue;
		m->answered += iv->answered;
		m->lost += iv->lost;
		hist_merge(&m->small, &iv->small);
		hist_merge(&m->large, &iv->large);
	}
	*all = m->small;
	hist_merge(all, &m->large);
	*row = (struct interval_row){
		.second = i,
		.ops_per_s = len > 0 ? m->answered / len : 0,
		.p50_us = p_us(all, 50),
		.p99_us = p_us(all, 99),
		.p99_small_us = p_us(&m->small, 99),
		.p99_large_us = p_us(&m->large, 99),
		.lost = m->lost,
		.large_pct = pct && pct->n ? large_schedule_pct(pct, (uint64_t)i * NS_PER_S)
					   : large_pct,
	};
out:
	free(m);
	free(all);
	return err;
}

/* A latency, or an empty field when nothing was answered. */
static void csv_us(FILE *f, double us)
{
	if (us >= 0)
		fprintf(f, ",%.3f", us);
	else
		fputc(',', f);
}

int interval_csv(FILE *f, const struct interval_log *logs, unsigned n, double seconds,
		 const struct large_schedule *pct, double large_pct, double unix_s)
{
	unsigned rows = n ? logs[0].n : 0;

	fputs("second,ops_per_s,p50_us,p99_us,p99_small_us,p99_large_us,lost,large_pct,unix_s\n",
	      f);
	for (unsigned i = 0; i < rows; i++) {
		struct interval_row r;
		int err = interval_row(logs, n, i, seconds, pct, large_pct, &r);

		if (err)
			return err;
		fprintf(f, "%u,%.1f", r.second, r.ops_per_s);
		csv_us(f, r.p50_us);
		csv_us(f, r.p99_us);
		csv_us(f, r.p99_small_us);
		csv_us(f, r.p99_large_us);
		fprintf(f, ",%llu,%g,%.3f\n", (unsigned long long)r.lost, r.large_pct,
			unix_s + r.second);
	}
	return 0;
}
