// SPDX-License-Identifier: MIT
#include <string.h>

#include "hist.h"

static unsigned bucket_of(uint64_t value)
{
	unsigned top_bit, shift;

	if (value < HIST_SUB)
		return (unsigned)value;
	top_bit = 63 - (unsigned)__builtin_clzll(value);
	shift = top_bit - HIST_SUB_BITS;
	/* value >> shift lies in [SUB, 2 * SUB): its low bits pick the bucket in the row */
	return (shift + 1) * HIST_SUB + (unsigned)(value >> shift) - HIST_SUB;
}

/* The middle of bucket i's range [low, low + width). */
static uint64_t bucket_midpoint(unsigned i)
{
	unsigned shift;

	if (i < HIST_SUB)
		return i;
	shift = i / HIST_SUB - 1;
	return ((uint64_t)(HIST_SUB + i % HIST_SUB) << shift) + ((1ULL << shift) >> 1);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_record(struct hist *h, uint64_t value)
{
	h->buckets[bucket_of(value)]++;
	h->count++;
	h->sum += value;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double q)
{
	uint64_t rank, value, seen = 0;
	unsigned i;

	if (!h->count)
		return 0;
	rank = hist_rank(h->count, q);
	if (rank == 1)
		return h->min;
	if (rank == h->count)
		return h->max;
	for (i = 0; i < HIST_BUCKETS - 1; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	/* the extremes are known exactly; clamping only moves the answer closer */
	value = bucket_midpoint(i);
	if (value < h->min)
		return h->min;
	return value > h->max ? h->max : value;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
