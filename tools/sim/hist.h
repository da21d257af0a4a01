/* SPDX-License-Identifier: MIT */
/*
 * A log-linear latency histogram (HdrHistogram's layout): each power of two is split in
 * HIST_SUB bins, so a percentile is known within 1/(2 * HIST_SUB) of its value, in O(1)
 * per sample and a fixed 120 KiB whatever the sample size.
 */
#ifndef XKV_SIM_HIST_H
#define XKV_SIM_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 8
#define HIST_SUB      (1u << HIST_SUB_BITS)
#define HIST_OCTAVES  60 /* values up to 2^60 ns */
#define HIST_BINS     (HIST_OCTAVES * HIST_SUB)

struct hist {
	uint64_t count;
	double sum, max;
	uint64_t bins[HIST_BINS];
};

void hist_reset(struct hist *h);
void hist_add(struct hist *h, double v);
/* The p-th percentile (0 < p <= 100): the middle of the bin holding that rank. */
double hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

#endif
