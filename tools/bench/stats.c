// SPDX-License-Identifier: MIT
#include <string.h>

#include "stats.h"

void bench_stats_init(struct bench_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < BENCH_OPS; i++)
		hist_init(&s->op[i].latency);
	for (int i = 0; i < WORKLOAD_SIZE_CLASSES; i++)
		hist_init(&s->size_class[i].latency);
	hist_init(&s->send_lag);
}

void op_stats_merge(struct op_stats *dst, const struct op_stats *src)
{
	dst->ok += src->ok;
	dst->misses += src->misses;
	dst->errors += src->errors;
	dst->lost += src->lost;
	hist_merge(&dst->latency, &src->latency);
}

void bench_stats_merge(struct bench_stats *dst, const struct bench_stats *src)
{
	for (int i = 0; i < BENCH_OPS; i++)
		op_stats_merge(&dst->op[i], &src->op[i]);
	for (int i = 0; i < WORKLOAD_SIZE_CLASSES; i++)
		op_stats_merge(&dst->size_class[i], &src->size_class[i]);
	dst->late += src->late;
	dst->invalid += src->invalid;
	dst->validations += src->validations;
	dst->scheduled += src->scheduled;
	dst->unsent += src->unsent;
	dst->slot_waits += src->slot_waits;
	if (src->behind_ns > dst->behind_ns)
		dst->behind_ns = src->behind_ns;
	hist_merge(&dst->send_lag, &src->send_lag);
}

void bench_stats_total(const struct bench_stats *s, struct op_stats *all)
{
	*all = s->op[BENCH_GET];
	op_stats_merge(all, &s->op[BENCH_PUT]);
}
