/* SPDX-License-Identifier: MIT */
/*
 * A log-linear histogram in HdrHistogram's layout, for latencies in nanoseconds.
 * Values below 2^(HIST_SUB_BITS + 1) get a bucket each; above, every power of two
 * [2^e, 2^(e+1)) is split into HIST_SUB buckets of width 2^(e - HIST_SUB_BITS). A
 * bucket is reported by its midpoint, so a percentile is within
 * 1/2^(HIST_SUB_BITS + 1) of the true sample at that rank (relative), for any uint64_t
 * value, at O(1) per sample and a fixed size. The count, sum, minimum and maximum are
 * exact. Histograms of threads merge by adding buckets.
 */
#ifndef XKV_TOOLS_HIST_H
#define XKV_TOOLS_HIST_H

#include <math.h>
#include <stdint.h>

#define HIST_SUB_BITS 8
#define HIST_SUB      (1u << HIST_SUB_BITS)
/* [0, SUB) exact, then one row of SUB buckets for each shift 0 .. 63 - SUB_BITS */
#define HIST_BUCKETS ((65 - HIST_SUB_BITS) * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t sum; /* of every value recorded: the mean is exact */
	uint64_t min, max;
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t value);
/* Adds src's samples to dst, as if each had been recorded into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * The q-th percentile (0 <= q <= 100) by nearest rank: the sample at rank
 * hist_rank(count, q) in sorted order, within the stated error; the lowest and
 * highest ranks are the exact minimum and maximum. 0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double q);
double hist_mean(const struct hist *h);

/* 1-based nearest rank of percentile q among count samples: ceil(q / 100 * count), >= 1. */
static inline uint64_t hist_rank(uint64_t count, double q)
{
	/* the tolerance keeps 99.9 % of 1000 at 999 despite binary rounding */
	double rank = ceil(q / 100.0 * (double)count * (1 - 1e-12));

	if (rank < 1)
		return 1;
	return rank > (double)count ? count : (uint64_t)rank;
}

#endif /* XKV_TOOLS_HIST_H */
