// SPDX-License-Identifier: MIT
/*
 * The key hash of include/xkv/hash.h: XXH64 exactly, pinned against the reference
 * implementation (libxxhash) at every key length, never reading past the end it is
 * given, and uniform in each bit range the store and steering cut from it. The XDP
 * program is held to the same function by tests/bpf/test_xdp.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <xkv/hash.h>

/* Published XXH64 vectors (seed 0), independent of any implementation here. */
Test(hash, known_vectors)
{
	char k250[250];

	memset(k250, 'x', sizeof(k250));
	cr_assert_eq(xkv_hash("", 0), 0xEF46DB3751D8E999ULL);
	cr_assert_eq(xkv_hash("abc", 3), 0x44BC2CF5AD770999ULL);
	cr_assert_eq(xkv_hash(k250, 250), XXH64(k250, 250, 0));
}

/* Every length a key can have, random bytes, at every alignment: libxxhash's answer. */
Test(hash, is_xxh64_at_every_length_and_alignment)
{
	uint8_t buf[XKV_KEY_MAX + 8];

	srand(20);
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rand();
		for (uint32_t len = 0; len <= XKV_KEY_MAX; len++)
			for (int align = 0; align < 8; align++)
				cr_assert_eq(xkv_hash(buf + align, len), XXH64(buf + align, len, 0),
					     "length %u at offset %d", len, align);
	}
}

/* A key that crosses the end given (a truncated packet) is refused, not read past. */
Test(hash, stops_at_the_end_it_is_given)
{
	uint8_t key[XKV_KEY_MAX];
	__u64 h;

	memset(key, 'k', sizeof(key));
	for (uint32_t len = 1; len <= XKV_KEY_MAX; len++) {
		cr_assert_eq(xkv_hash_within(key, len, key + len, &h), 0);
		cr_assert_eq(h, XXH64(key, len, 0));
		for (uint32_t cut = 0; cut < len; cut++)
			cr_assert_eq(xkv_hash_within(key, len, key + cut, &h), -1,
				     "length %u, end after %u bytes", len, cut);
	}
}

#define KEYS 4000000

/* The hashes of KEYS keys: names as clients make them, or random bytes. */
static uint64_t *hash_keys(bool random_bytes)
{
	uint64_t *h = malloc(KEYS * sizeof(*h));
	uint8_t key[16];

	cr_assert_not_null(h);
	srand(7);
	for (uint32_t i = 0; i < KEYS; i++) {
		int len = 16;

		if (random_bytes)
			for (int b = 0; b < len; b++)
				key[b] = (uint8_t)rand();
		else
			len = snprintf((char *)key, sizeof(key), "user:%010u", i);
		h[i] = xkv_hash(key, (uint32_t)len);
	}
	return h;
}

/*
 * Partitions: each within 5 standard deviations of its expected share (binomial,
 * KEYS / 256 = 15625 each, sd 125), so a skew of 4 % fails.
 */
static void assert_partitions_balanced(const uint64_t *h, const char *what)
{
	static uint32_t count[XKV_PARTITIONS];
	const double mean = (double)KEYS / XKV_PARTITIONS;

	memset(count, 0, sizeof(count));
	for (uint32_t i = 0; i < KEYS; i++)
		count[xkv_partition(h[i])]++;
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++)
		cr_assert_lt(abs((int)count[p] - (int)mean), 5 * 125, "%s: partition %u has %u",
			     what, p, count[p]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Two keys the store cannot tell apart without comparing them: same partition,
 * same bucket (16 bits of index, a large table's) and same tag, 40 bits in all.
 * Among 4 M keys about n^2 / 2^41 = 7.3 such pairs are expected; a hash whose
 * bits depend on each other shows many more.
 */
static void assert_few_tag_collisions(uint64_t *h, const char *what)
{
	const uint64_t mask = 0xff0000000000ffffULL | ((uint64_t)0xffff << 32);
	uint32_t pairs = 0;

	for (uint32_t i = 0; i < KEYS; i++)
		h[i] &= mask;
	qsort(h, KEYS, sizeof(*h), cmp_u64);
	for (uint32_t i = 1; i < KEYS; i++)
		pairs += h[i] == h[i - 1];
	cr_assert_lt(pairs, 30, "%s: %u pairs share partition, bucket and tag (7 expected)",
		     what, pairs);
}

Test(hash, named_keys_spread_evenly, .timeout = 60)
{
	uint64_t *h = hash_keys(false);

	assert_partitions_balanced(h, "user:N");
	assert_few_tag_collisions(h, "user:N");
	free(h);
}

Test(hash, random_keys_spread_evenly, .timeout = 60)
{
	uint64_t *h = hash_keys(true);

	assert_partitions_balanced(h, "random");
	assert_few_tag_collisions(h, "random");
	free(h);
}

Test(hash, size_classes)
{
	cr_assert_eq(xkv_size_class(0), 0);
	cr_assert_eq(xkv_size_class(1), 1);
	cr_assert_eq(xkv_size_class(2), 2);
	cr_assert_eq(xkv_size_class(3), 2);
	cr_assert_eq(xkv_size_class(4), 3);
	for (uint32_t i = 1; i <= 20; i++) {
		cr_assert_eq(xkv_size_class((1u << i) - 1), i, "2^%u - 1", i);
		cr_assert_eq(xkv_size_class(1u << i), i + 1, "2^%u", i);
	}
	cr_assert_eq(xkv_size_class(XKV_VALUE_MAX), XKV_SIZE_CLASSES - 1);
}

/*
 * Every worker count XDP allows shares the partitions out whole: each of n workers
 * owns floor or ceil of XKV_PARTITIONS / n of them, and no partition is owned by a
 * worker past n - 1 (steering would drop its requests as a bad configuration).
 */
Test(hash, partitions_shared_evenly_by_any_worker_count)
{
	for (uint32_t n = 1; n <= 64; n++) {
		uint32_t owned[64] = {0};

		for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
			uint32_t owner = xkv_partition_owner(p, n);

			cr_assert_lt(owner, n, "%u workers: partition %u owned by %u", n, p, owner);
			owned[owner]++;
		}
		for (uint32_t w = 0; w < n; w++)
			cr_assert(owned[w] == XKV_PARTITIONS / n ||
					  owned[w] == (XKV_PARTITIONS + n - 1) / n,
				  "%u workers: worker %u owns %u partitions", n, w, owned[w]);
	}
}
