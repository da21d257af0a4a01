/* SPDX-License-Identifier: MIT */
/*
 * The result of a run, or of a sweep: a table for people, or one JSON object for
 * scripts; a sweep's steps also as CSV rows (tools/bench/plot_latency.py reads them).
 */
#ifndef XKV_BENCH_REPORT_H
#define XKV_BENCH_REPORT_H

#include <stdio.h>

#include "afxdp.h"
#include "stats.h"
#include "sweep.h"
#include "workload.h"

struct run_report {
	const char *label;
	const char *server;
	const char *transport;		/* "udp" or "xdp" */
	const struct afxdp_info *xdp; /* the AF_XDP transport's, or NULL */
	unsigned threads, depth;
	double rate; /* open loop: requests per second offered (a sweep: first); 0: closed */
	bool sweep;
	uint64_t seed;
	uint64_t timeout_ms;
	const struct workload_config *workload;
	uint32_t loaded_keys; /* PUT before measuring; 0: no load phase */
	double load_seconds;
	const struct bench_stats *load; /* NULL when nothing was loaded */
	double seconds;			/* the measured window (a sweep: of each step) */
	const struct bench_stats *measured; /* NULL for a sweep */
};

void report_table(FILE *f, const struct run_report *r);
void report_json(FILE *f, const struct run_report *r);

/* A sweep's steps and the rate found; r says how each step ran. */
void report_sweep_table(FILE *f, const struct run_report *r, const struct sweep_result *s);
void report_sweep_json(FILE *f, const struct run_report *r, const struct sweep_result *s);
/* A header line, then a line per step. */
void report_sweep_csv(FILE *f, const struct run_report *r, const struct sweep_result *s);

#endif /* XKV_BENCH_REPORT_H */
