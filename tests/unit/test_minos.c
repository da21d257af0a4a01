// SPDX-License-Identifier: MIT
/*
 * The arithmetic of Minos's control loop (userspace/engine/minos_plan.c) on cases worked
 * out by hand: class costs in packets, the EWMA, the threshold percentile, the
 * number of small workers and the large workers' equal-cost size ranges.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/minos_plan.h"

#define BIG_CLASS   19 /* 500 KB values: [262144, 524288) */
#define SMALL_CLASS 7  /* 64 B values: [64, 128) */

static struct xkv_minos_hist hist_of(const double count[XKV_SIZE_CLASSES])
{
	struct xkv_minos_hist h;

	memcpy(h.count, count, sizeof(h.count));
	return h;
}

static void expect_class(const struct xkv_roles *r, uint32_t cls, uint8_t first, uint8_t count)
{
	cr_expect_eq(r->classes[cls].first, first, "class %u: first %u, expected %u", cls,
		     r->classes[cls].first, first);
	cr_expect_eq(r->classes[cls].count, count, "class %u: count %u, expected %u", cls,
		     r->classes[cls].count, count);
}

/* Classes up to the threshold have no large workers; the others get `first` and `count`. */
static void expect_classes_above(const struct xkv_roles *r, uint32_t from, uint32_t to,
				 uint8_t first, uint8_t count)
{
	for (uint32_t c = from; c <= to; c++)
		expect_class(r, c, first, count);
}

Test(minos, class_cost_is_packets_of_the_middle_size)
{
	cr_expect_eq(xkv_minos_class_cost(0), 1, "an empty value still takes a packet");
	cr_expect_eq(xkv_minos_class_cost(1), 1);
	cr_expect_eq(xkv_minos_class_cost(7), 1, "96 B");
	cr_expect_eq(xkv_minos_class_cost(11), 2, "1536 B: just over one piece");
	cr_expect_eq(xkv_minos_class_cost(12), 3, "3072 B: ceil(2.19)");
	cr_expect_eq(xkv_minos_class_cost(14), 9, "12288 B: ceil(8.78)");
	cr_expect_eq(xkv_minos_class_cost(19), 281, "393216 B: ceil(280.87)");
	cr_expect_eq(xkv_minos_class_cost(21), 1124, "1572864 B: ceil(1123.47)");
}

Test(minos, ewma_takes_the_first_sample_then_weighs_the_new_one_by_alpha)
{
	struct xkv_minos_hist cur = {0};
	uint64_t first[XKV_SIZE_CLASSES] = {[3] = 5, [7] = 7};
	uint64_t second[XKV_SIZE_CLASSES] = {[3] = 15, [10] = 100};

	xkv_minos_ewma(&cur, first, XKV_MINOS_ALPHA);
	cr_expect_float_eq(cur.count[3], 5.0, 1e-12);
	cr_expect_float_eq(cur.count[7], 7.0, 1e-12);
	cr_expect_float_eq(cur.count[10], 0.0, 1e-12);
	xkv_minos_ewma(&cur, second, XKV_MINOS_ALPHA);
	cr_expect_float_eq(cur.count[3], 0.1 * 5 + 0.9 * 15, 1e-9, "14.0, got %f", cur.count[3]);
	cr_expect_float_eq(cur.count[7], 0.1 * 7, 1e-9, "0.7, got %f", cur.count[7]);
	cr_expect_float_eq(cur.count[10], 0.9 * 100, 1e-9, "90.0, got %f", cur.count[10]);
	cr_expect_float_eq(cur.count[0], 0.0, 1e-12);
}

Test(minos, threshold_is_the_class_where_the_cumulative_count_reaches_the_percentile)
{
	double bimodal[XKV_SIZE_CLASSES] = {[SMALL_CLASS] = 99, [BIG_CLASS] = 1};
	double spread[XKV_SIZE_CLASSES] = {[0] = 10, [3] = 30, [9] = 60};
	struct xkv_minos_hist h = hist_of(bimodal), empty = {0};

	cr_expect_eq(xkv_minos_threshold(&h, 99, 11), SMALL_CLASS, "cumulative 99 == 99%% of 100");
	cr_expect_eq(xkv_minos_threshold(&h, 99.01, 11), BIG_CLASS);
	cr_expect_eq(xkv_minos_threshold(&h, 99.5, 11), BIG_CLASS);
	cr_expect_eq(xkv_minos_threshold(&h, 100, 11), BIG_CLASS);
	cr_expect_eq(xkv_minos_threshold(&h, 50, 11), SMALL_CLASS);
	h = hist_of(spread);
	cr_expect_eq(xkv_minos_threshold(&h, 10, 11), 0, "cumulative 10 == 10%% of 100");
	cr_expect_eq(xkv_minos_threshold(&h, 10.5, 11), 3);
	cr_expect_eq(xkv_minos_threshold(&h, 40, 11), 3, "cumulative 40 == 40%% of 100");
	cr_expect_eq(xkv_minos_threshold(&h, 40.1, 11), 9);
	cr_expect_eq(xkv_minos_threshold(&empty, 99, 11), 11, "no data: the fallback");
}

/*
 * Minos's bimodal workload, per 100,000 requests: 64 B values (class 7, 1 packet) and
 * 500 KB ones (class 19, 281 packets). p99 falls in class 7 whenever under 1% are large.
 *
 * 0.125% large: small cost 99,875, large 125 * 281 = 35,125, total 135,000.
 *   4 workers: ceil(4 * 99,875 / 135,000) = ceil(2.959) = 3 small, 1 large.
 *   2 workers: ceil(2 * 0.7398) = ceil(1.480) = 2: all small, worker 1 on standby.
 * 0.75% large: small cost 99,250, large 750 * 281 = 210,750, total 310,000.
 *   4 workers: ceil(4 * 99,250 / 310,000) = ceil(1.281) = 2 small, 2 large; each large
 *   worker's share is 105,375, so class 19 (0 .. 210,750) is split over both, and the
 *   empty classes 20 and 21 (at 210,750 = 2 shares) go to the last.
 *   2 workers: ceil(2 * 0.3202) = ceil(0.640) = 1 small, 1 large.
 */
static struct xkv_roles bimodal_plan(double large_per_100k, uint32_t workers)
{
	double count[XKV_SIZE_CLASSES] = {[SMALL_CLASS] = 100000 - large_per_100k,
					  [BIG_CLASS] = large_per_100k};
	struct xkv_minos_hist h = hist_of(count);
	struct xkv_roles r = {.gen = 7};

	xkv_minos_plan(&h, XKV_MINOS_PERCENTILE, workers, &r);
	cr_expect_eq(r.gen, 7, "gen is the publisher's");
	cr_expect_eq(r.percentile_centi, 9900);
	cr_expect_eq(r.threshold, SMALL_CLASS);
	expect_classes_above(&r, 0, SMALL_CLASS, 0, 0);
	return r;
}

Test(minos, bimodal_one_in_800_large_takes_one_of_four_workers)
{
	struct xkv_roles r = bimodal_plan(125, 4);

	cr_expect_eq(r.nsmall, 3);
	cr_expect_eq(r.nlarge, 1);
	cr_expect_eq(r.standby, 0);
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.small[1], 1);
	cr_expect_eq(r.small[2], 2);
	cr_expect_eq(r.large[0], 3);
	expect_classes_above(&r, SMALL_CLASS + 1, XKV_SIZE_CLASSES - 1, 0, 1);
}

Test(minos, bimodal_one_in_800_large_leaves_two_workers_small_with_a_standby)
{
	struct xkv_roles r = bimodal_plan(125, 2);

	cr_expect_eq(r.nsmall, 1, "the standby owns no partition");
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.standby, 1);
	cr_expect_eq(r.nlarge, 1);
	cr_expect_eq(r.large[0], 1, "the last worker is the standby large one");
	expect_classes_above(&r, SMALL_CLASS + 1, XKV_SIZE_CLASSES - 1, 0, 1);
}

Test(minos, bimodal_six_in_800_large_takes_two_of_four_workers_sharing_its_class)
{
	struct xkv_roles r = bimodal_plan(750, 4);

	cr_expect_eq(r.nsmall, 2);
	cr_expect_eq(r.nlarge, 2);
	cr_expect_eq(r.standby, 0);
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.small[1], 1);
	cr_expect_eq(r.large[0], 2);
	cr_expect_eq(r.large[1], 3);
	expect_classes_above(&r, SMALL_CLASS + 1, BIG_CLASS - 1, 0, 1);
	expect_class(&r, BIG_CLASS, 0, 2);
	expect_classes_above(&r, BIG_CLASS + 1, XKV_SIZE_CLASSES - 1, 1, 1);
}

Test(minos, bimodal_six_in_800_large_splits_two_workers_one_and_one)
{
	struct xkv_roles r = bimodal_plan(750, 2);

	cr_expect_eq(r.nsmall, 1);
	cr_expect_eq(r.nlarge, 1);
	cr_expect_eq(r.standby, 0);
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.large[0], 1);
	expect_classes_above(&r, SMALL_CLASS + 1, XKV_SIZE_CLASSES - 1, 0, 1);
}

/*
 * Three large workers over classes 10 (1 packet), 12 (3) and 14 (9), costs landing on
 * the shares exactly. Counts: class 7: 18; class 10: 6 (cost 6), class 12: 4 (cost 12),
 * class 14: 4 (cost 36). p50 is class 7 (18 of 32 requests). Small cost 18, large 54:
 * ceil(4 * 18 / 72) = 1 small worker, 3 large with a share of 18 each.
 *   classes 8, 9, 11 (empty, before 18): worker 0; 10: 0 .. 6 and 12: 6 .. 18, worker 0;
 *   13 (empty, at 18 = one share): worker 1; 14: 18 .. 54, workers 1 and 2;
 *   15 .. 21 (empty, at 54, the end): worker 2.
 */
Test(minos, large_workers_get_contiguous_ranges_of_equal_cost)
{
	double count[XKV_SIZE_CLASSES] = {[7] = 18, [10] = 6, [12] = 4, [14] = 4};
	struct xkv_minos_hist h = hist_of(count);
	struct xkv_roles r;

	xkv_minos_plan(&h, 50, 4, &r);
	cr_expect_eq(r.threshold, 7);
	cr_expect_eq(r.nsmall, 1);
	cr_expect_eq(r.nlarge, 3);
	cr_expect_eq(r.standby, 0);
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.large[0], 1);
	cr_expect_eq(r.large[1], 2);
	cr_expect_eq(r.large[2], 3);
	expect_classes_above(&r, 0, 7, 0, 0);
	expect_classes_above(&r, 8, 12, 0, 1);
	expect_class(&r, 13, 1, 1);
	expect_class(&r, 14, 1, 2);
	expect_classes_above(&r, 15, XKV_SIZE_CLASSES - 1, 2, 1);
}

/*
 * The same classes with costs off the shares: class 10: 30, class 12: 10 * 3 = 30,
 * class 14: 60 / 9 requests = 60; 120 in all, 40 a worker. Small: class 7, 40 of 86.7
 * requests (p40 falls there), cost 40: ceil(4 * 40 / 160) = 1. Class 10 (0 .. 30): worker 0; class 12 (30 .. 60):
 * workers 0 and 1; class 14 (60 .. 120): workers 1 and 2.
 */
Test(minos, a_class_across_a_share_boundary_is_shared)
{
	double count[XKV_SIZE_CLASSES] = {[7] = 40, [10] = 30, [12] = 10};
	struct xkv_minos_hist h;
	struct xkv_roles r;

	count[14] = 60.0 / 9;
	h = hist_of(count);
	xkv_minos_plan(&h, 40, 4, &r);
	cr_expect_eq(r.percentile_centi, 4000);
	cr_expect_eq(r.threshold, 7);
	cr_expect_eq(r.nsmall, 1);
	cr_expect_eq(r.nlarge, 3);
	expect_class(&r, 10, 0, 1);
	expect_class(&r, 11, 0, 1);
	expect_class(&r, 12, 0, 2);
	expect_class(&r, 13, 1, 1);
	expect_class(&r, 14, 1, 2);
	expect_classes_above(&r, 15, XKV_SIZE_CLASSES - 1, 2, 1);
}

Test(minos, one_worker_is_small_and_standby_large)
{
	double count[XKV_SIZE_CLASSES] = {[SMALL_CLASS] = 99000, [BIG_CLASS] = 1000};
	struct xkv_minos_hist h = hist_of(count);
	struct xkv_roles r;

	xkv_minos_plan(&h, XKV_MINOS_PERCENTILE, 1, &r);
	cr_expect_eq(r.threshold, SMALL_CLASS);
	cr_expect_eq(r.nsmall, 1);
	cr_expect_eq(r.small[0], 0);
	cr_expect_eq(r.standby, 1);
	cr_expect_eq(r.nlarge, 1);
	cr_expect_eq(r.large[0], 0);
	expect_classes_above(&r, SMALL_CLASS + 1, XKV_SIZE_CLASSES - 1, 0, 1);
}

/* No data: values that fit one datagram (class 11 holds 1400) are small, all but one worker too. */
Test(minos, an_empty_histogram_gives_every_worker_small_and_one_standby)
{
	struct xkv_minos_hist empty = {0};
	struct xkv_roles r;

	memset(&r, 0xff, sizeof(r));
	r.gen = 3;
	xkv_minos_plan(&empty, XKV_MINOS_PERCENTILE, 4, &r);
	cr_expect_eq(r.gen, 3);
	cr_expect_eq(r.threshold, 11);
	cr_expect_eq(r.nsmall, 3, "the standby owns no partition");
	for (uint32_t i = 0; i < 3; i++)
		cr_expect_eq(r.small[i], i);
	cr_expect_eq(r.small[3], 0, "the rest of the table is cleared");
	cr_expect_eq(r.standby, 1);
	cr_expect_eq(r.nlarge, 1);
	cr_expect_eq(r.large[0], 3);
	expect_classes_above(&r, 0, 11, 0, 0);
	expect_classes_above(&r, 12, XKV_SIZE_CLASSES - 1, 0, 1);
}

/* Whatever the counts, every class above the threshold has workers, in order, in range. */
Test(minos, every_large_class_is_covered_in_order_for_any_counts)
{
	srand(11);
	for (int round = 0; round < 2000; round++) {
		struct xkv_minos_hist h;
		struct xkv_roles r;
		uint32_t workers = 1 + (uint32_t)rand() % XKV_WORKERS_MAX, last_first = 0;

		for (uint32_t c = 0; c < XKV_SIZE_CLASSES; c++)
			h.count[c] = rand() % 4 ? (double)(rand() % 100000) : 0;
		xkv_minos_plan(&h, 50 + rand() % 51, workers, &r);
		cr_assert(r.nsmall >= 1 && r.nsmall <= workers);
		/* every worker has one role; a lone worker is its own standby */
		cr_assert_eq(workers == 1 ? 1 : r.nsmall + r.nlarge, workers);
		for (uint32_t c = r.threshold + 1; c < XKV_SIZE_CLASSES; c++) {
			cr_assert(r.classes[c].count >= 1, "class %u above %u", c, r.threshold);
			cr_assert_leq(r.classes[c].first + r.classes[c].count, r.nlarge);
			cr_assert_geq(r.classes[c].first, last_first, "ranges go up with size");
			last_first = r.classes[c].first;
		}
	}
}
