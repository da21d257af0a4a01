// SPDX-License-Identifier: MIT
/*
 * The latency histograms (util/latency.h): buckets that tile 0..17 s with no gap,
 * percentiles within 1 % of the exact ones, workers merged and snapshots taken apart
 * exactly, and a pool that runs dry counted, not overrun.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/latency.h"

static struct xkv_latency_chunk *pool_new(void)
{
	return calloc(XKV_LAT_CHUNKS, sizeof(struct xkv_latency_chunk));
}

Test(latency, buckets_tile_the_range_and_hold_their_values)
{
	uint64_t next = 0;

	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++) {
		uint64_t low = xkv_lat_bucket_low(b), width = xkv_lat_bucket_width(b);

		cr_assert_eq(low, next, "bucket %u starts at %lu, not where %u ended", b, low, b - 1);
		cr_assert_eq(xkv_lat_bucket(low), b);
		cr_assert_eq(xkv_lat_bucket(low + width - 1), b, "bucket %u ends before its width", b);
		/* what makes the middle within 1/128 of any value in the bucket */
		cr_assert(low < XKV_LAT_SUB || width * XKV_LAT_SUB <= low, "bucket %u too wide", b);
		next = low + width;
	}
	cr_assert_eq(next, 1ULL << 34, "the last bucket ends at 2^34 ns");
	cr_assert_eq(xkv_lat_bucket(UINT64_MAX), XKV_LAT_BUCKETS - 1, "longer counts in the last");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

Test(latency, percentiles_are_within_one_percent_of_the_exact_ones)
{
	static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
	enum { N = 100000 };
	struct xkv_latency_dir *dir = calloc(1, sizeof(*dir));
	struct xkv_latency l = {.dir = dir, .chunks = pool_new()};
	struct xkv_lat_hist *h = calloc(1, sizeof(*h));
	uint64_t *v = malloc(N * sizeof(*v));

	srandom(7);
	for (int i = 0; i < N; i++) {
		/* 100 ns .. 10 s, spread over every octave between */
		v[i] = (uint64_t)(100.0 * pow(1e8, (double)random() / RAND_MAX));
		xkv_latency_record(&l, XKV_LAT_GET, 3, XKV_LAT_TOTAL, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	xkv_lat_hist_add_dir(h, dir, l.chunks, XKV_LAT_GET, 3, XKV_LAT_TOTAL);
	cr_assert_eq(xkv_lat_hist_count(h), N);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t rank = (uint64_t)ceil(qs[i] * N), exact = v[rank - 1];
		double got = (double)xkv_lat_hist_percentile(h, qs[i]);

		cr_assert(fabs(got - (double)exact) <= 0.01 * (double)exact,
			  "p%g: %.0f against %lu", qs[i] * 100, got, exact);
	}
	free(v);
	free(h);
	free(l.chunks);
	free(dir);
}

Test(latency, workers_merge_and_snapshots_subtract)
{
	struct xkv_latency_chunk *pool = pool_new();
	struct xkv_latency_dir *dirs = calloc(2, sizeof(*dirs));
	struct xkv_latency a = {.dir = &dirs[0], .chunks = pool}, b = {.dir = &dirs[1], .chunks = pool};
	struct xkv_lat_hist *h = calloc(1, sizeof(*h)), *before = calloc(1, sizeof(*before));

	for (int i = 0; i < 90; i++)
		xkv_latency_record(&a, XKV_LAT_PUT, 0, XKV_LAT_QUEUED, 1000);
	for (int i = 0; i < 10; i++)
		xkv_latency_record(&b, XKV_LAT_PUT, 0, XKV_LAT_QUEUED, 1000000);
	xkv_latency_record(&b, XKV_LAT_GET, 0, XKV_LAT_QUEUED, 5); /* another histogram */
	for (int w = 0; w < 2; w++)
		xkv_lat_hist_add_dir(h, &dirs[w], pool, XKV_LAT_PUT, 0, XKV_LAT_QUEUED);
	cr_assert_eq(xkv_lat_hist_count(h), 100);
	cr_assert_eq(xkv_lat_hist_percentile(h, 0.9), xkv_lat_bucket_value(xkv_lat_bucket(1000)));
	cr_assert_eq(xkv_lat_hist_percentile(h, 0.91),
		     xkv_lat_bucket_value(xkv_lat_bucket(1000000)), "worker b's tail is the merge's");

	/* a run's own histogram: the later snapshot less the earlier */
	*before = *h;
	for (int i = 0; i < 5; i++)
		xkv_latency_record(&a, XKV_LAT_PUT, 0, XKV_LAT_QUEUED, 300);
	memset(h, 0, sizeof(*h));
	for (int w = 0; w < 2; w++)
		xkv_lat_hist_add_dir(h, &dirs[w], pool, XKV_LAT_PUT, 0, XKV_LAT_QUEUED);
	xkv_lat_hist_sub(h, before);
	cr_assert_eq(xkv_lat_hist_count(h), 5);
	cr_assert_eq(xkv_lat_hist_percentile(h, 1.0), xkv_lat_bucket_value(xkv_lat_bucket(300)));
	free(before);
	free(h);
	free(dirs);
	free(pool);
}

/* Records one sample in every octave of every histogram of l; returns how many. */
static uint64_t record_everywhere(struct xkv_latency *l)
{
	uint64_t n = 0;

	for (uint32_t op = 0; op < XKV_LAT_OPS; op++)
		for (uint32_t cls = 0; cls < XKV_SIZE_CLASSES; cls++)
			for (uint32_t i = 0; i < XKV_LAT_INTERVALS; i++)
				for (uint32_t o = 0; o < XKV_LAT_OCTAVES; o++, n++)
					xkv_latency_record(l, op, cls, i,
							   xkv_lat_bucket_low(o * XKV_LAT_SUB));
	return n;
}

static uint64_t count_everywhere(const struct xkv_latency_dir *dir,
				 const struct xkv_latency_chunk *pool)
{
	struct xkv_lat_hist *h = calloc(1, sizeof(*h));
	uint64_t n;

	for (uint32_t op = 0; op < XKV_LAT_OPS; op++)
		for (uint32_t cls = 0; cls < XKV_SIZE_CLASSES; cls++)
			for (uint32_t i = 0; i < XKV_LAT_INTERVALS; i++)
				xkv_lat_hist_add_dir(h, dir, pool, op, cls, i);
	n = xkv_lat_hist_count(h);
	free(h);
	return n;
}

Test(latency, a_dry_pool_loses_samples_it_counts)
{
	struct xkv_latency_chunk *pool = pool_new();
	struct xkv_latency_dir *dirs = calloc(2, sizeof(*dirs));
	struct xkv_latency a = {.dir = &dirs[0], .chunks = pool}, b = {.dir = &dirs[1], .chunks = pool};
	uint64_t recorded;

	/* one worker's every chunk fits the pool; a second's no longer do */
	recorded = record_everywhere(&a);
	cr_assert_eq(a.lost, 0);
	cr_assert_eq(count_everywhere(&dirs[0], pool), recorded);
	recorded = record_everywhere(&b);
	cr_assert_eq(b.lost, recorded - (XKV_LAT_CHUNKS - 1 - recorded), "b got what a left");
	cr_assert_eq(count_everywhere(&dirs[1], pool), recorded - b.lost,
		     "what b's histograms lack is what it counted lost");
	cr_assert_eq(count_everywhere(&dirs[0], pool), recorded, "a's are untouched");
	free(dirs);
	free(pool);
}
