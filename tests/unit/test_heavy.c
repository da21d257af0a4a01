// SPDX-License-Identifier: MIT
/*
 * Heavy hitters (userspace/util/heavy.c): streams whose true counts the test keeps
 * exactly, against the sketch's estimates and its top: never under, over by no more
 * than the bound (bar the rare key the bound allows), the hottest keys found whole,
 * and keys built to collide with a hot one in all rows but one counted true.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/heavy.h"
#include "xkv/hash.h"

#define KEYS 20000

static struct xkv_heavy *h;
static uint32_t truth[KEYS];

static void setup(void)
{
	h = malloc(sizeof(*h));
	cr_assert_not_null(h);
	xkv_heavy_reset(h);
	memset(truth, 0, sizeof(truth));
}

static void teardown(void)
{
	free(h);
}

TestSuite(heavy, .init = setup, .fini = teardown);

static int key_of(uint32_t i, char *buf)
{
	return sprintf(buf, "key:%08u", i);
}

static uint64_t hash_of(uint32_t i)
{
	char k[32];
	int len = key_of(i, k);

	return xkv_hash(k, (uint32_t)len);
}

static void count(uint32_t i)
{
	char k[32];
	int len = key_of(i, k);

	xkv_heavy_count(h, k, (uint32_t)len, xkv_hash(k, (uint32_t)len));
	truth[i]++;
}

/* Key ranks drawn from zipf(s) over KEYS keys, by inverting its CDF. */
static void zipf_stream(double s, uint32_t n, unsigned seed)
{
	static double cdf[KEYS];
	double sum = 0;

	for (uint32_t i = 0; i < KEYS; i++)
		cdf[i] = sum += 1 / pow(i + 1, s);
	srand(seed);
	for (uint32_t r = 0; r < n; r++) {
		double u = (double)rand() / RAND_MAX * sum;
		uint32_t lo = 0, hi = KEYS - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		count(lo);
	}
}

Test(heavy, a_few_keys_are_counted_exactly_and_ranked)
{
	struct xkv_heavy_key top[XKV_HEAVY_TOP];
	size_t n;

	for (uint32_t i = 0; i < 10; i++)
		for (uint32_t c = 0; c <= i * 3; c++)
			count(i);
	n = xkv_heavy_top(h, top, XKV_HEAVY_TOP);
	cr_assert_eq(n, 10);
	for (uint32_t r = 0; r < n; r++) {
		char k[32];
		int len = key_of(9 - r, k);

		cr_assert_eq(top[r].count, truth[9 - r], "rank %u: %llu, true %u", r,
			     (unsigned long long)top[r].count, truth[9 - r]);
		cr_assert_eq(top[r].len, len);
		cr_assert_eq(memcmp(top[r].key, k, (size_t)len), 0, "rank %u is the key, whole", r);
		cr_assert_eq(top[r].hash, hash_of(9 - r));
	}
	cr_assert_eq(h->total, 10 * 3 * 9 / 2 + 10);
	cr_assert_eq(xkv_heavy_top(h, top, 3), 3, "cap keeps the highest");
	cr_assert_eq(top[0].count, truth[9]);
	cr_assert_eq(top[2].count, truth[7]);
}

/*
 * Zipf 0.99, 400,000 requests over 20,000 keys: no estimate under its count; at most
 * e^-depth of the keys over it by more than e N / width; the top holds the true
 * hottest keys.
 */
Test(heavy, a_zipf_streams_hottest_keys_are_found_within_the_bound)
{
	const uint32_t n = 400000;
	const double bound = exp(1) * n / XKV_HEAVY_WIDTH;
	struct xkv_heavy_key top[XKV_HEAVY_TOP];
	uint32_t over = 0, found = 0;

	zipf_stream(0.99, n, 7);
	for (uint32_t i = 0; i < KEYS; i++) {
		uint64_t est = xkv_heavy_estimate(h, hash_of(i));

		cr_assert_geq(est, truth[i], "key %u: estimate %llu under its count %u", i,
			      (unsigned long long)est, truth[i]);
		over += est > truth[i] + bound;
	}
	cr_assert_leq(over, KEYS * exp(-XKV_HEAVY_DEPTH), "%u keys over the bound", over);
	cr_assert_eq(xkv_heavy_top(h, top, XKV_HEAVY_TOP), XKV_HEAVY_TOP);
	/* zipf's ranks are its keys: the 24 hottest, well apart from the rest, are all in */
	for (uint32_t i = 0; i < 24; i++)
		for (uint32_t r = 0; r < XKV_HEAVY_TOP; r++)
			found += top[r].hash == hash_of(i);
	cr_assert_eq(found, 24, "%u of the 24 hottest keys in the top", found);
	for (uint32_t r = 1; r < XKV_HEAVY_TOP; r++)
		cr_assert_geq(top[r - 1].count, top[r].count, "highest first");
}

/* Cold keys in their thousands, each seen once, evict no hot key. */
Test(heavy, a_flood_of_cold_keys_leaves_the_hot_ones)
{
	struct xkv_heavy_key top[XKV_HEAVY_TOP];

	for (uint32_t round = 0; round < 50; round++)
		for (uint32_t i = 0; i < 8; i++)
			count(i);
	for (uint32_t i = 100; i < KEYS; i++)
		count(i);
	xkv_heavy_top(h, top, XKV_HEAVY_TOP);
	for (uint32_t i = 0; i < 8; i++) {
		bool in = false;

		for (uint32_t r = 0; r < 8; r++)
			in |= top[r].hash == hash_of(i);
		cr_assert(in, "hot key %u not among the top 8 after the flood", i);
	}
}

/*
 * Keys that share the hot key's counter in every row but one (each row reads 12 bits
 * of the hash: these hashes differ from the hot one's in one row's bits alone), the
 * sketch's worst case short of a full collision: the row where they differ keeps each
 * at its true count and out of the top, and conservative update keeps the hot key at
 * its own (counting them in its counters would raise it in every row).
 */
Test(heavy, keys_colliding_with_a_hot_one_in_all_rows_but_one_are_counted_true)
{
	const uint64_t hot = 0x0123456789abcdefull;
	struct xkv_heavy_key top[XKV_HEAVY_TOP];
	uint64_t colliders[16];

	for (uint32_t i = 0; i < 16; i++) /* row i % 4's bits changed, by i / 4 + 1 */
		colliders[i] = hot ^ (uint64_t)(i / 4 + 1) << (12 * (i % 4));
	for (uint32_t i = 0; i < 1000; i++)
		xkv_heavy_count(h, "hot", 3, hot);
	for (uint32_t i = 0; i < 16; i++)
		for (uint32_t c = 0; c <= i; c++)
			xkv_heavy_count(h, "collider", 8, colliders[i]);
	for (uint32_t i = 0; i < 16; i++)
		cr_assert_eq(xkv_heavy_estimate(h, colliders[i]), i + 1, "collider %u: %llu", i,
			     (unsigned long long)xkv_heavy_estimate(h, colliders[i]));
	cr_assert_eq(xkv_heavy_estimate(h, hot), 1000);
	xkv_heavy_top(h, top, 1);
	cr_assert_eq(top[0].hash, hot);
}

/* The least of a full top, counted again, is the least no more: the next key gets in. */
Test(heavy, a_full_top_takes_a_key_above_its_new_least)
{
	struct xkv_heavy_key top[XKV_HEAVY_TOP];
	bool in = false;

	for (uint32_t i = 0; i < XKV_HEAVY_TOP; i++) /* key i counted 10 + i times */
		for (uint32_t c = 0; c < 10 + i; c++)
			count(i);
	for (uint32_t c = 0; c < 100; c++) /* the least, key 0, now the most */
		count(0);
	for (uint32_t c = 0; c < 12; c++) /* above key 1, the least now, at 11 */
		count(XKV_HEAVY_TOP);
	xkv_heavy_top(h, top, XKV_HEAVY_TOP);
	for (uint32_t r = 0; r < XKV_HEAVY_TOP; r++) {
		in |= top[r].hash == hash_of(XKV_HEAVY_TOP);
		cr_assert_neq(top[r].hash, hash_of(1), "the least, key 1, is still in");
	}
	cr_assert(in, "a key above the least was kept out");
	cr_assert_eq(top[0].hash, hash_of(0));
}

/*
 * A key gone below a share worth reporting stays in the top without its count
 * following it; the top, when read, gives its estimate all the same.
 */
Test(heavy, a_key_grown_cold_is_reported_at_its_estimate)
{
	struct xkv_heavy_key top[XKV_HEAVY_TOP];

	for (uint32_t c = 0; c < 100; c++)
		count(0);
	for (uint32_t i = 100; i < KEYS; i++) /* total some 20,000: a share of 1/1024 is 19 */
		for (uint32_t c = 0; c < 10; c++)
			count(i);
	for (uint32_t c = 0; c < 50; c++) /* 150 of 200,000: under 1/1024 */
		count(0);
	xkv_heavy_top(h, top, XKV_HEAVY_TOP);
	for (uint32_t r = 0; r < XKV_HEAVY_TOP; r++)
		if (top[r].hash == hash_of(0))
			cr_assert_geq(top[r].count, 150, "its count: %llu",
				      (unsigned long long)top[r].count);
	cr_assert_eq(top[0].hash, hash_of(0));
}

Test(heavy, a_reset_forgets_every_count)
{
	struct xkv_heavy_key top[XKV_HEAVY_TOP];

	for (uint32_t i = 0; i < 100; i++)
		count(i % 5);
	xkv_heavy_reset(h);
	cr_assert_eq(xkv_heavy_top(h, top, XKV_HEAVY_TOP), 0);
	cr_assert_eq(xkv_heavy_estimate(h, hash_of(0)), 0);
	cr_assert_eq(h->total, 0);
}
