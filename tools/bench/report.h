/* SPDX-License-Identifier: MIT */
/* The result of a run: a table for people, or one JSON object for scripts. */
#ifndef XKV_BENCH_REPORT_H
#define XKV_BENCH_REPORT_H

#include <stdio.h>

#include "stats.h"
#include "workload.h"

struct run_report {
	const char *label;
	const char *server;
	const char *transport;
	unsigned threads, depth;
	uint64_t seed;
	uint64_t timeout_ms;
	const struct workload_config *workload;
	uint32_t loaded_keys; /* PUT before measuring; 0: no load phase */
	double load_seconds;
	const struct bench_stats *load; /* NULL when nothing was loaded */
	double seconds;			/* the measured window */
	const struct bench_stats *measured;
};

void report_table(FILE *f, const struct run_report *r);
void report_json(FILE *f, const struct run_report *r);

#endif /* XKV_BENCH_REPORT_H */
