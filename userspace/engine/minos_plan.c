// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <string.h>

#include "engine/minos_plan.h"

/*
 * Far below a real fraction of a worker (the quotients below are at most
 * XKV_WORKERS_MAX), far above the rounding of sums of doubles: a split that lands
 * exactly on a worker's boundary stays there.
 */
#define MINOS_EPS 1e-9

/* floor and ceil of small non-negative quotients, without libm, which the engine does not link */
static uint32_t floor_u32(double x)
{
	return x > 0 ? (uint32_t)x : 0;
}

static uint32_t ceil_u32(double x)
{
	uint32_t u = floor_u32(x);

	return u + (x > (double)u);
}

double xkv_minos_class_cost(uint32_t cls)
{
	uint32_t size, packets;

	if (cls >= XKV_SIZE_CLASSES)
		cls = XKV_SIZE_CLASSES - 1;
	size = cls < 2 ? cls : 3u << (cls - 2); /* the middle of [2^(cls-1), 2^cls) */
	packets = (size + XKV_MINOS_PIECE_BYTES - 1) / XKV_MINOS_PIECE_BYTES;
	return packets ? packets : 1;
}

void xkv_minos_ewma(struct xkv_minos_hist *cur, const uint64_t sample[XKV_SIZE_CLASSES],
		    double alpha)
{
	bool first = true;

	for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++)
		if (cur->count[c] != 0)
			first = false;
	for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++)
		cur->count[c] = first ? (double)sample[c]
				      : (1 - alpha) * cur->count[c] + alpha * (double)sample[c];
}

uint32_t xkv_minos_threshold(const struct xkv_minos_hist *h, double percentile, uint32_t fallback)
{
	double total = 0, target, cumulative = 0;

	for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++)
		total += h->count[c];
	if (!(total > 0))
		return fallback;
	/* the tolerance keeps a cumulative count equal to the target at it, despite rounding */
	target = percentile * total / 100 * (1 - 1e-12);
	for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++) {
		cumulative += h->count[c];
		if (cumulative >= target)
			return c;
	}
	return XKV_SIZE_CLASSES - 1;
}

/*
 * The large workers of a class whose cost runs from `before` to `after` in the
 * cumulative cost of the large classes, each worker taking `share` (> 0) of it: those
 * whose share overlaps the class, and for a class without cost the one its point
 * falls in.
 */
static struct xkv_class_workers large_range(double before, double after, double share,
					    uint32_t nlarge)
{
	uint32_t first = floor_u32(before / share + MINOS_EPS);
	uint32_t end = ceil_u32(after / share - MINOS_EPS); /* workers up to the class's end */
	uint32_t last = end ? end - 1 : 0;

	if (first > nlarge - 1)
		first = nlarge - 1;
	if (last > nlarge - 1)
		last = nlarge - 1;
	if (last < first)
		last = first;
	return (struct xkv_class_workers){.first = (__u8)first, .count = (__u8)(last - first + 1)};
}

void xkv_minos_plan(const struct xkv_minos_hist *h, double percentile, uint32_t workers,
		    struct xkv_roles *out)
{
	uint32_t threshold =
		xkv_minos_threshold(h, percentile, xkv_size_class(XKV_MINOS_PIECE_BYTES));
	double small = 0, large = 0, before = 0, share;
	uint32_t nsmall, nlarge;
	__u32 gen = out->gen;

	if (workers < 1)
		workers = 1;
	if (workers > XKV_WORKERS_MAX)
		workers = XKV_WORKERS_MAX;
	for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++) {
		double cost = h->count[c] * xkv_minos_class_cost(c);

		if (c <= threshold)
			small += cost;
		else
			large += cost;
	}
	nsmall = workers;
	if (large > 0)
		nsmall = ceil_u32(workers * small / (small + large) - MINOS_EPS);
	if (nsmall < 1)
		nsmall = 1;
	if (nsmall > workers)
		nsmall = workers;

	memset(out, 0, sizeof(*out));
	out->gen = gen;
	out->threshold = (__u8)threshold;
	out->percentile_centi = (__u16)floor_u32(percentile * 100 + 0.5);
	out->standby = nsmall == workers;
	/*
	 * The standby owns no partition (when there is another worker to own them): a
	 * small write never waits behind a large request on it. It takes small reads
	 * only while idle (bpf/steer.h).
	 */
	if (out->standby && workers > 1)
		nsmall--;
	out->nsmall = (__u8)nsmall;
	nlarge = out->standby ? 1 : workers - nsmall;
	out->nlarge = (__u8)nlarge;
	for (uint32_t i = 0; i < nsmall; i++)
		out->small[i] = (__u8)i;
	for (uint32_t i = 0; i < nlarge; i++)
		out->large[i] = (__u8)(out->standby ? workers - 1 : nsmall + i);

	/* not standby means some large cost, so every share is positive */
	share = large / nlarge;
	for (uint32_t c = threshold + 1; c < XKV_SIZE_CLASSES; c++) {
		double cost = h->count[c] * xkv_minos_class_cost(c);

		out->classes[c] = out->standby ? (struct xkv_class_workers){.first = 0, .count = 1}
					       : large_range(before, before + cost, share, nlarge);
		before += cost;
	}
}
