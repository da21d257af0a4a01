// SPDX-License-Identifier: MIT
/* The store, one thread: operations, limits, collisions, overflow and eviction. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "store/store.h"
#include "store_clock.h"
#ifdef XKV_CHECKS
#include <signal.h>

#include "store/store_internal.h"
#endif

static struct xkv_store *s;
static uint8_t out[XKV_VALUE_MAX + 1];

/* A store whose tables start at their full size: chains and the hand as the test lays them. */
static void open_store(size_t limit, enum xkv_store_mode mode, uint32_t bucket_bits,
		       uint32_t overflow)
{
	struct xkv_store_config cfg = {
		.memory_limit = limit,
		.mode = mode,
		.bucket_bits = bucket_bits,
		.overflow_buckets = overflow,
		.start_bits = bucket_bits,
	};

	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s, "store create: %s", strerror(errno));
}

static void close_store(void)
{
	xkv_store_destroy(s);
	xkv_store_thread_offline();
}

static void setup_default(void)
{
	open_store(64 << 20, XKV_MODE_STORE, 8, 4);
}

static int put(const char *key, const void *value, uint32_t len)
{
	return xkv_store_put(s, key, strlen(key), xkv_hash(key, strlen(key)), value, len);
}

static int get(const char *key, uint32_t *len)
{
	return xkv_store_get(s, key, strlen(key), xkv_hash(key, strlen(key)), out, sizeof(out), len);
}

static int del(const char *key)
{
	return xkv_store_delete(s, key, strlen(key), xkv_hash(key, strlen(key)));
}

/* Puts, gets and deletes under a hash the test chooses, to place keys on purpose. */
static int put_h(const char *key, uint64_t hash, const void *value, uint32_t len)
{
	return xkv_store_put(s, key, strlen(key), hash, value, len);
}

static int get_h(const char *key, uint64_t hash, uint32_t *len)
{
	return xkv_store_get(s, key, strlen(key), hash, out, sizeof(out), len);
}

/* The two halves of a write, as a large worker and the owner split it. */
static int install_item(const char *key, uint64_t hash, const void *value, uint32_t len,
			int64_t *old_len)
{
	struct xkv_item *item = xkv_store_item_new(key, strlen(key), value, len);

	cr_assert_not_null(item, "item_new %s: %s", key, strerror(errno));
	return xkv_store_install(s, item, hash, old_len);
}

static int install(const char *key, const void *value, uint32_t len, int64_t *old_len)
{
	return install_item(key, xkv_hash(key, strlen(key)), value, len, old_len);
}

static int install_h(const char *key, uint64_t hash, const void *value, uint32_t len)
{
	return install_item(key, hash, value, len, NULL);
}

static struct xkv_store_stats stats(void)
{
	struct xkv_store_stats st;

	xkv_store_get_stats(s, &st);
	return st;
}

static void assert_value(const char *key, const void *want, uint32_t want_len)
{
	uint32_t len = 0;

	cr_assert_eq(get(key, &len), 0, "get %s", key);
	cr_assert_eq(len, want_len, "%s: length %u, want %u", key, len, want_len);
	cr_assert_eq(memcmp(out, want, len), 0, "%s: bytes differ", key);
}

TestSuite(store, .init = setup_default, .fini = close_store);

Test(store, put_get_overwrite_delete)
{
	uint32_t len;

	cr_assert_eq(get("k", &len), -ENOENT);
	cr_assert_eq(put("k", "one", 3), 0);
	assert_value("k", "one", 3);
	cr_assert_eq(put("k", "two", 3), 0, "same size: rewritten in place");
	assert_value("k", "two", 3);
	cr_assert_eq(put("k", "a much longer value", 19), 0, "grows: a new item");
	assert_value("k", "a much longer value", 19);
	cr_assert_eq(put("k", "s", 1), 0, "shrinks: a new item");
	assert_value("k", "s", 1);
	cr_assert_eq(stats().items, 1);
	cr_assert_eq(del("k"), 0);
	cr_assert_eq(get("k", &len), -ENOENT);
	cr_assert_eq(del("k"), -ENOENT);
	cr_assert_eq(stats().items, 0);
	cr_assert_eq(stats().bytes_used, 0, "every byte returns to the budget");
}

#ifdef XKV_CHECKS
/* The checked build (make test-asan): a write that finds another writer in its chain aborts. */
Test(store, second_writer_in_a_chain_aborts, .signal = SIGABRT)
{
	uint64_t hash = xkv_hash("k", 1);
	struct xkv_table *table = partition_table(&s->part[xkv_partition(hash)]);

	cr_assert_eq(put("k", "one", 3), 0);
	/* a writer that began in k's chain and has not ended: no hand-over ordered us after it */
	bucket_write_begin(&table->buckets[hash & table->mask]);
	put("k", "two", 3);
	cr_assert_fail("the second writer went on");
}
#endif

Test(store, many_keys)
{
	char key[32], val[64];

	for (int i = 0; i < 20000; i++) {
		int n = snprintf(key, sizeof(key), "key:%d", i);

		snprintf(val, sizeof(val), "value-%d", i * 7);
		cr_assert_eq(xkv_store_put(s, key, n, xkv_hash(key, n), val, strlen(val)), 0,
			     "put %s", key);
	}
	for (int i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "key:%d", i);
		snprintf(val, sizeof(val), "value-%d", i * 7);
		assert_value(key, val, strlen(val));
	}
	cr_assert_eq(stats().items, 20000);
}

Test(store, empty_and_one_mib_values)
{
	static uint8_t big[XKV_VALUE_MAX + 1];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 131 + 7);
	cr_assert_eq(put("empty", "", 0), 0);
	assert_value("empty", "", 0);
	cr_assert_eq(put("big", big, XKV_VALUE_MAX), 0);
	assert_value("big", big, XKV_VALUE_MAX);
	cr_assert_eq(put("huge", big, XKV_VALUE_MAX + 1), -E2BIG);
	cr_assert_eq(put("big", big + 1, XKV_VALUE_MAX), 0, "overwrite 1 MiB in place");
	assert_value("big", big + 1, XKV_VALUE_MAX);
}

Test(store, key_length_limits)
{
	char k[252];

	memset(k, 'k', sizeof(k));
	cr_assert_eq(xkv_store_put(s, k, 0, xkv_hash(k, 0), "v", 1), -EINVAL);
	cr_assert_eq(xkv_store_put(s, k, 251, xkv_hash(k, 251), "v", 1), -EINVAL);
	cr_assert_eq(xkv_store_put(s, k, 250, xkv_hash(k, 250), "v", 1), 0);
	cr_assert_eq(xkv_store_delete(s, k, 251, xkv_hash(k, 251)), -EINVAL);
}

Test(store, small_buffer_reports_the_length)
{
	uint32_t len = 0;
	char small[4];

	cr_assert_eq(put("k", "0123456789", 10), 0);
	cr_assert_eq(xkv_store_get(s, "k", 1, xkv_hash("k", 1), small, sizeof(small), &len),
		     -ENOBUFS);
	cr_assert_eq(len, 10);
}

/* Two keys with one hash share partition, bucket and tag: only the key compare tells them apart. */
Test(store, tag_collisions)
{
	const uint64_t h = 0x1234567890abcdefULL;
	uint32_t len;

	cr_assert_eq(put_h("alpha", h, "A", 1), 0);
	cr_assert_eq(put_h("beta", h, "BB", 2), 0);
	cr_assert_eq(get_h("alpha", h, &len), 0);
	cr_assert_eq(len, 1);
	cr_assert_eq(out[0], 'A');
	cr_assert_eq(get_h("beta", h, &len), 0);
	cr_assert_eq(len, 2);
	cr_assert_eq(get_h("gamma", h, &len), -ENOENT);
	cr_assert_eq(xkv_store_delete(s, "alpha", 5, h), 0);
	cr_assert_eq(get_h("alpha", h, &len), -ENOENT);
	cr_assert_eq(get_h("beta", h, &len), 0, "the other key survives");
}

/*
 * The key compare, by words, at every length up to 40 and every position: a key that
 * differs from a stored one in a single byte, under the same hash, is another key.
 */
Test(store, keys_differing_in_one_byte_are_told_apart)
{
	const uint64_t h = 0x1234567890abcdefULL;
	char key[41], other[41];
	uint32_t len;

	for (uint32_t n = 1; n <= 40; n++) {
		memset(key, 'k', n);
		key[n] = 0;
		cr_assert_eq(put_h(key, h, "K", 1), 0);
		for (uint32_t at = 0; at < n; at++) {
			memcpy(other, key, n + 1);
			other[at] = 'x';
			cr_assert_eq(get_h(other, h, &len), -ENOENT, "length %u, byte %u", n, at);
		}
		cr_assert_eq(get_h(key, h, &len), 0, "length %u", n);
		cr_assert_eq(xkv_store_delete(s, key, n, h), 0);
	}
}

/*
 * A hash whose tag bits are all 0: an empty slot is 0 too, so without the store's own
 * tag (never 0) a lookup would take an empty slot for the key's and read its item.
 */
Test(store, a_hash_whose_tag_bits_are_zero_finds_no_empty_slot)
{
	const uint64_t h = 0x1234000000005678ULL;
	uint32_t len;

	cr_assert_eq(xkv_tag(h), 0);
	cr_assert_eq(get_h("nobody", h, &len), -ENOENT);
	cr_assert_eq(put_h("zero-tag", h, "z", 1), 0);
	cr_assert_eq(get_h("zero-tag", h, &len), 0);
	cr_assert_eq(get_h("nobody", h, &len), -ENOENT);
	cr_assert_eq(xkv_store_delete(s, "zero-tag", 8, h), 0);
	cr_assert_eq(get_h("zero-tag", h, &len), -ENOENT);
}

/* 7 slots per bucket and 4 spares: one chain holds 35 items. */
Test(store, bucket_overflow_chains_spares)
{
	const uint64_t h = 0xfeed000000000003ULL;
	char key[16];
	uint32_t len;

	for (int i = 0; i < 35; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		cr_assert_eq(put_h(key, h, key, strlen(key)), 0, "item %d of the chain", i);
	}
	cr_assert_eq(stats().overflow_used, 4);
	cr_assert_eq(put_h("one-too-many", h, "x", 1), -ENOMEM, "store mode: chain full");
	for (int i = 0; i < 35; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		cr_assert_eq(get_h(key, h, &len), 0, "%s still there", key);
		cr_assert_eq(memcmp(out, key, len), 0);
	}
	/* a hole anywhere in the chain is reused */
	cr_assert_eq(xkv_store_delete(s, "c20", 3, h), 0);
	cr_assert_eq(put_h("one-too-many", h, "x", 1), 0);
}

Test(store, install_new_key_then_get)
{
	static uint8_t big[XKV_VALUE_MAX];
	int64_t old_len = 0;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 131 + 7);
	cr_assert_eq(install("big", big, sizeof(big), &old_len), 0);
	cr_assert_eq(old_len, -1, "the key was absent");
	assert_value("big", big, sizeof(big));
	cr_assert_eq(install("empty", "", 0, NULL), 0);
	assert_value("empty", "", 0);
	cr_assert_eq(stats().items, 2);
}

/* The replaced item goes back to the budget: bytes_used is the new item's alone. */
Test(store, install_replaces_and_accounts_the_old_item)
{
	static uint8_t v[3000];
	int64_t old_len = 0;

	memset(v, 'x', sizeof(v));
	cr_assert_eq(put("k", "small", 5), 0);
	cr_assert_eq(install("k", v, sizeof(v), &old_len), 0);
	cr_assert_eq(old_len, 5);
	assert_value("k", v, sizeof(v));
	cr_assert_eq(stats().items, 1);
	/* 32-byte header, 1-byte key padded to 8, 3000 bytes (a multiple of 8) */
	cr_assert_eq(stats().bytes_used, 32 + 8 + 3000, "%lu", stats().bytes_used);
	/* the same length again, which put would rewrite in place */
	v[0] = 'y';
	cr_assert_eq(install("k", v, sizeof(v), &old_len), 0);
	cr_assert_eq(old_len, 3000);
	assert_value("k", v, sizeof(v));
	cr_assert_eq(stats().bytes_used, 32 + 8 + 3000);
	cr_assert_eq(install("k", "s", 1, &old_len), 0, "shrinks");
	cr_assert_eq(old_len, 3000);
	assert_value("k", "s", 1);
	cr_assert_eq(stats().bytes_used, 32 + 8 + 8);
	cr_assert_eq(del("k"), 0);
	cr_assert_eq(stats().bytes_used, 0, "every byte returns to the budget");
	cr_assert_eq(stats().items, 0);
}

/* The old item, though it would fit, is retired and freed after a grace period. */
Test(store, install_never_rewrites_in_place)
{
	static uint8_t v[3000];
	uint64_t reclaimed = xkv_store_reclaimed();

	cr_assert_eq(put("k", v, sizeof(v)), 0);
	v[0] = 1;
	cr_assert_eq(install("k", v, sizeof(v), NULL), 0);
	/* offline, this thread holds up no grace period: the retired batch is freed */
	xkv_store_thread_sleep();
	for (int i = 0; i < 500 && xkv_store_reclaimed() == reclaimed; i++)
		usleep(10000);
	xkv_store_thread_wake();
	cr_assert_eq(xkv_store_reclaimed(), reclaimed + 1, "the old item was freed");
	assert_value("k", v, sizeof(v));
}

Test(store, item_new_refuses_bad_lengths)
{
	static uint8_t big[XKV_VALUE_MAX + 1];
	struct xkv_item *item;
	char k[251];

	memset(k, 'k', sizeof(k));
	errno = 0;
	cr_assert_null(xkv_store_item_new(k, 0, "v", 1));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(xkv_store_item_new(k, 251, "v", 1));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(xkv_store_item_new(k, 250, big, XKV_VALUE_MAX + 1));
	cr_assert_eq(errno, E2BIG);
	item = xkv_store_item_new(k, 250, big, XKV_VALUE_MAX);
	cr_assert_not_null(item, "the largest key and value");
	xkv_store_item_free(item); /* never installed: ASan would report it otherwise */
	cr_assert_eq(stats().bytes_used, 0, "an item counts only once installed");
}

Test(store, value_len_without_the_value)
{
	static uint8_t big[XKV_VALUE_MAX];
	uint32_t len = 7;

	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), -ENOENT);
	cr_assert_eq(put("k", "0123456789", 10), 0);
	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), 0);
	cr_assert_eq(len, 10);
	cr_assert_eq(put("k", "", 0), 0);
	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), 0);
	cr_assert_eq(len, 0);
	cr_assert_eq(install("k", big, sizeof(big), NULL), 0);
	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), 0);
	cr_assert_eq(len, XKV_VALUE_MAX);
	cr_assert_eq(del("k"), 0);
	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), -ENOENT);
}

/* A chain with no slot left: install fails after the reservation, and undoes it. */
Test(store, install_into_a_full_chain)
{
	const uint64_t h = 0xfeed000000000003ULL;
	struct xkv_store_stats before;
	char key[16];

	for (int i = 0; i < 35; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		cr_assert_eq(put_h(key, h, key, strlen(key)), 0, "item %d of the chain", i);
	}
	before = stats();
	cr_assert_eq(install_h("one-too-many", h, "x", 1), -ENOMEM);
	cr_assert_eq(stats().bytes_used, before.bytes_used, "the reservation is given back");
	cr_assert_eq(stats().items, before.items);
	cr_assert_eq(install_h("c7", h, "new", 3), 0, "replacing needs no new slot");
	cr_assert_eq(get_h("c7", h, &(uint32_t){0}), 0);
	cr_assert_eq(memcmp(out, "new", 3), 0);
}

Test(store_modes, store_mode_answers_no_memory)
{
	char key[16], val[1024] = {0};
	int stored = 0, err = 0;

	open_store(64 << 10, XKV_MODE_STORE, 6, 2);
	for (int i = 0; i < 1000 && !err; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		err = put(key, val, sizeof(val));
		stored += !err;
	}
	cr_assert_eq(err, -ENOMEM);
	cr_assert(stored > 50 && stored < 64, "1 KiB items in 64 KiB: stored %d", stored);
	cr_assert_leq(stats().bytes_used, 64 << 10);
	for (int i = 0; i < stored; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		assert_value(key, val, sizeof(val));
	}
	/* 1040-byte items leave 16 bytes, which an empty value's new item (16 bytes) takes */
	cr_assert_eq(put("m0", val, 0), 0, "an overwrite that shrinks frees room");
	snprintf(key, sizeof(key), "m%d", stored);
	cr_assert_eq(put(key, val, sizeof(val)), 0, "... for one more");
	close_store();
}

/* The item is freed on -ENOMEM (ASan's leak check sees to it) and nothing is counted. */
Test(store_modes, install_in_store_mode_answers_no_memory)
{
	char key[16], val[1024] = {0};
	struct xkv_store_stats before;
	int stored = 0, err = 0;

	open_store(64 << 10, XKV_MODE_STORE, 6, 2);
	for (int i = 0; i < 1000 && !err; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		before = stats();
		err = install(key, val, sizeof(val), NULL);
		stored += !err;
	}
	cr_assert_eq(err, -ENOMEM);
	cr_assert(stored > 50 && stored < 64, "1 KiB items in 64 KiB: stored %d", stored);
	cr_assert_eq(stats().bytes_used, before.bytes_used);
	cr_assert_eq(stats().items, (uint64_t)stored);
	for (int i = 0; i < stored; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		assert_value(key, val, sizeof(val));
	}
	close_store();
}

/* Keys placed in one partition, each in its own bucket, so only the memory limit evicts. */
static uint64_t hash_in_partition(uint32_t partition, uint32_t i)
{
	return (uint64_t)partition << 56 | (uint64_t)(i & 0xffff) << 32 | i;
}

static void key_name(char *key, size_t cap, int i)
{
	snprintf(key, cap, "e%d", i);
}

/* write is put_h or install_h: both evict alike */
static void cache_mode_evicts(int (*write)(const char *, uint64_t, const void *, uint32_t))
{
	char key[16], val[1000] = {0};
	uint32_t len;
	int present = 0;

	open_store(50 << 10, XKV_MODE_CACHE, 10, 0);
	for (int i = 0; i < 500; i++) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(write(key, hash_in_partition(9, i), val, sizeof(val)), 0, "write %d", i);
		cr_assert_leq(stats().bytes_used, 50 << 10);
	}
	for (int i = 0; i < 500; i++) {
		key_name(key, sizeof(key), i);
		present += get_h(key, hash_in_partition(9, i), &len) == 0;
	}
	cr_assert_eq((uint64_t)present, stats().items);
	/* 1000-byte values with their keys and 24-byte headers: 49 fit, a few less as evicted */
	cr_assert(present > 40 && present <= 50, "%d items of ~1 KiB in 50 KiB", present);
	cr_assert_eq(stats().evictions, 500 - present);
	cr_assert_eq(get_h("e499", hash_in_partition(9, 499), &len), 0, "the newest stays");
	close_store();
}

Test(store_modes, cache_mode_evicts_and_stays_in_budget)
{
	cache_mode_evicts(put_h);
}

Test(store_modes, install_in_cache_mode_evicts)
{
	cache_mode_evicts(install_h);
}

Test(store_modes, cache_mode_evicts_only_its_own_partition)
{
	static uint8_t big[40 << 10];

	open_store(64 << 10, XKV_MODE_CACHE, 4, 0);
	cr_assert_eq(put_h("a", hash_in_partition(1, 1), big, sizeof(big)), 0);
	cr_assert_eq(put_h("b", hash_in_partition(2, 1), big, sizeof(big)), -ENOMEM,
		     "partition 2's writer may not evict partition 1's item, and 80 KiB is past "
		     "the 1/8 it may borrow");
	cr_assert_eq(put_h("c", hash_in_partition(1, 2), big, sizeof(big)), 0,
		     "partition 1's writer evicts its own");
	cr_assert_eq(stats().evictions, 1);
	close_store();
}

/* A write to an empty partition borrows; the next writes elsewhere pay the debt back. */
Test(store_modes, cache_mode_borrows_then_repays)
{
	char key[16], val[1000] = {0};
	const size_t limit = 64 << 10;
	uint32_t len;
	int i;

	open_store(limit, XKV_MODE_CACHE, 8, 0);
	for (i = 0; stats().evictions == 0; i++) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(put_h(key, hash_in_partition(1, i), val, sizeof(val)), 0);
	}
	cr_assert_eq(put_h("other", hash_in_partition(2, 1), val, sizeof(val)), 0,
		     "nothing to evict in partition 2: it borrows");
	cr_assert_gt(stats().bytes_used, limit);
	cr_assert_leq(stats().bytes_used, limit + limit / 8);
	key_name(key, sizeof(key), i);
	cr_assert_eq(put_h(key, hash_in_partition(1, i), val, sizeof(val)), 0);
	cr_assert_leq(stats().bytes_used, limit, "partition 1's next write repaid the debt");
	cr_assert_eq(get_h("other", hash_in_partition(2, 1), &len), 0);
	close_store();
}

/* A cache-mode store that holds exactly n items of 1000-byte values in partition 3. */
static void open_store_for(int n)
{
	char val[1000] = {0};
	size_t item;

	open_store(1 << 20, XKV_MODE_CACHE, 10, 0);
	cr_assert_eq(put_h("probe", hash_in_partition(3, 1000), val, sizeof(val)), 0);
	item = stats().bytes_used;
	xkv_store_destroy(s);
	xkv_store_thread_offline();
	open_store(n * item, XKV_MODE_CACHE, 10, 0);
}

/* CLOCK: items read since the hand last passed survive; the others go first, in hand order. */
Test(store_modes, eviction_order_is_clock)
{
	const int n = 40;
	char key[16], val[1000] = {0};
	uint32_t len;

	open_store_for(n);
	for (int i = 0; i < n; i++) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(put_h(key, hash_in_partition(3, i), val, sizeof(val)), 0);
	}
	cr_assert_eq(stats().evictions, 0, "exactly full");
	for (int i = 0; i < n; i += 2) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(get_h(key, hash_in_partition(3, i), &len), 0);
	}
	for (int i = 0; i < n / 2; i++) {
		key_name(key, sizeof(key), n + i);
		cr_assert_eq(put_h(key, hash_in_partition(3, n + i), val, sizeof(val)), 0);
	}
	cr_assert_eq(stats().evictions, n / 2);
	for (int i = 0; i < n; i++) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(get_h(key, hash_in_partition(3, i), &len), i % 2 ? -ENOENT : 0,
			     "%s: %s", key, i % 2 ? "unread, evicted" : "read, kept");
	}
	close_store();
}

/* A full chain in cache mode evicts within the chain, preferring an unread item. */
Test(store_modes, cache_mode_full_chain_evicts_unread)
{
	const uint64_t h = 0xabc0000000000001ULL;
	struct xkv_store_class_stats cls[XKV_STORE_CLASSES];
	char key[16];
	uint32_t len;

	open_store(1 << 20, XKV_MODE_CACHE, 2, 0);
	for (int i = 0; i < 7; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		cr_assert_eq(put_h(key, h, "v", 1), 0);
	}
	cr_assert_eq(get_h("c0", h, &len), 0);
	cr_assert_eq(put_h("c7", h, "v", 1), 0, "cache mode makes room");
	cr_assert_eq(get_h("c0", h, &len), 0, "read item kept");
	cr_assert_eq(get_h("c1", h, &len), -ENOENT, "first unread item evicted");
	cr_assert_eq(stats().items, 7);
	cr_assert_eq(stats().evictions, 1);
	xkv_store_get_class_stats(s, cls);
	cr_assert_eq(cls[6].evicted, 1, "32 + 8 + 8 bytes: class 6");
	cr_assert_eq(cls[6].items, 7);
	close_store();
}

/* Tables start small and double as items arrive: every key stays, memory follows. */
Test(store_growth, tables_double_as_items_arrive)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 64 << 20, .mode = XKV_MODE_STORE, .bucket_bits = 10,
		.overflow_buckets = 128,
	};
	struct xkv_store_stats before, after;
	char key[16];
	uint32_t len;

	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s);
	xkv_store_get_stats(s, &before);
	/* 256 tables of 16 heads and 16 spares, each with its header line */
	cr_assert_eq(before.bucket_bytes, 256 * (33 * 64), "%lu", before.bucket_bytes);
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "g%d", i);
		cr_assert_eq(put(key, key, strlen(key)), 0, "%s", key);
	}
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "g%d", i);
		cr_assert_eq(get(key, &len), 0, "%s lost as the tables grew", key);
		cr_assert_eq(memcmp(out, key, len), 0);
	}
	xkv_store_get_stats(s, &after);
	/* ~390 items a partition: 128 heads at 5 each (640) suffice, 64 (320) do not */
	cr_assert_geq(after.bucket_bytes, 256 * (128 + 16 + 1) * 64, "%lu", after.bucket_bytes);
	cr_assert_leq(after.bucket_bytes, 256 * (256 + 32 + 1) * 64, "%lu", after.bucket_bytes);
	close_store();
}

/*
 * A table at its largest stays so: a full chain then gets -ENOMEM in store mode.
 * Growth rehashes keys, so the keys here really share a chain at the largest size:
 * partition 7, bucket 3 of 32.
 */
Test(store_growth, no_larger_than_configured)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 64 << 20, .mode = XKV_MODE_STORE, .bucket_bits = 5,
		.overflow_buckets = 4,
	};
	struct xkv_store_stats st;
	int stored = 0, err = 0;
	char key[16];

	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s);
	/* one chain: doubling cannot split it, and 7 + 4 spares x 7 = 35 slots is all */
	for (uint32_t n = 0; stored < 100 && !err; n++) {
		int len = snprintf(key, sizeof(key), "c%u", n);
		uint64_t h = xkv_hash(key, (uint32_t)len);

		if (xkv_partition(h) != 7 || (h & 31) != 3)
			continue;
		err = put(key, key, (uint32_t)len);
		stored += !err;
	}
	cr_assert_eq(err, -ENOMEM);
	cr_assert_eq(stored, 35);
	xkv_store_get_stats(s, &st);
	cr_assert_leq(st.bucket_bytes, 256 * (32 + 4 + 1) * 64, "%lu", st.bucket_bytes);
	close_store();
}

/*
 * The fraction of puts cache mode refuses: random keys, values of 16 B to 1 KiB
 * (items of ~550 bytes on average), into a store limited to limit bytes.
 */
static double cache_refusals(size_t limit)
{
	static uint8_t val[1024];
	uint64_t rng = 88172645463325252ULL;
	const int puts = 50000;
	int refused = 0;

	open_store(limit, XKV_MODE_CACHE, 6, 16);
	for (int i = 0; i < puts; i++) {
		char key[24];
		int err;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		snprintf(key, sizeof(key), "key:%u", (uint32_t)(rng % 100000));
		err = put(key, val, 16 + (uint32_t)(rng >> 32) % 1000);
		cr_assert(err == 0 || err == -ENOMEM, "put: %d", err);
		refused += err == -ENOMEM;
		if (i % 64 == 0)
			xkv_store_quiescent();
	}
	close_store();
	return (double)refused / puts;
}

/* store.h's sizing rule: a partition's share of the limit must hold a few items. */
Test(store_modes, cache_mode_refuses_puts_only_when_partitions_hold_under_two_items)
{
	double small = cache_refusals(96 << 10), sized = cache_refusals(256 << 10);

	cr_log_info("cache mode refused %.2f %% of puts in 96 KiB, %.2f %% in 256 KiB",
		    100 * small, 100 * sized);
	cr_assert_gt(small, 0.05, "96 KiB is 384 bytes a partition, under one item: %.3f refused",
		     small);
	cr_assert_eq(sized, 0, "256 KiB is 1 KiB a partition, two items: %.3f refused", sized);
}

Test(store_modes, bad_config)
{
	struct xkv_store_config cfg = {.memory_limit = 1 << 20, .bucket_bits = 30};

	cr_assert_null(xkv_store_create(&cfg));
	cr_assert_eq(errno, EINVAL);
	cfg.bucket_bits = 4;
	cfg.mode = 7;
	cr_assert_null(xkv_store_create(&cfg));
	cr_assert_eq(errno, EINVAL);
}

/* What memcached keeps beside a value: flags, expiry, CAS. */
static int put_meta(const char *key, const void *value, uint32_t len, uint32_t flags,
		    uint32_t exptime, uint64_t *cas)
{
	struct xkv_item_meta meta = {.flags = flags, .exptime = exptime};
	int err = xkv_store_put_meta(s, key, strlen(key), xkv_hash(key, strlen(key)), value, len,
				     &meta);

	if (cas)
		*cas = meta.cas;
	return err;
}

static int get_meta(const char *key, struct xkv_item_meta *meta)
{
	uint32_t len;

	return xkv_store_get_meta(s, key, strlen(key), xkv_hash(key, strlen(key)), out, sizeof(out),
				  &len, meta);
}

static int value_len(const char *key)
{
	uint32_t len;

	return xkv_store_value_len(s, key, strlen(key), xkv_hash(key, strlen(key)), &len);
}

static int touch(const char *key, uint32_t exptime, struct xkv_item_meta *meta)
{
	return xkv_store_touch(s, key, strlen(key), xkv_hash(key, strlen(key)), exptime, meta);
}

TestSuite(store_meta, .init = setup_default, .fini = close_store);

/* Every stored version gets a new CAS, never 0, of its key's partition; flags come back. */
Test(store_meta, flags_come_back_and_every_version_gets_a_new_cas)
{
	struct xkv_item_meta m;
	uint64_t cas1, cas2, cas3, other;
	uint32_t len;

	cr_assert_eq(put_meta("k", "one", 3, 0xdeadbeef, 0, &cas1), 0);
	cr_assert_neq(cas1, 0);
	cr_assert_eq(cas1 % XKV_PARTITIONS, xkv_partition(xkv_hash("k", 1)));
	cr_assert_eq(get_meta("k", &m), 0);
	cr_assert_eq(m.flags, 0xdeadbeef);
	cr_assert_eq(m.exptime, 0);
	cr_assert_eq(m.cas, cas1);
	/* the same length: rewritten in place, still a new version */
	cr_assert_eq(put_meta("k", "two", 3, 7, 0, &cas2), 0);
	cr_assert_gt(cas2, cas1);
	cr_assert_eq(get_meta("k", &m), 0);
	cr_assert_eq(m.flags, 7);
	cr_assert_eq(m.cas, cas2);
	/* plain put: a new item, flags 0, a new CAS too */
	cr_assert_eq(put("k", out, 3000), 0);
	cr_assert_eq(get_meta("k", &m), 0);
	cr_assert_eq(m.flags, 0);
	cas3 = m.cas;
	cr_assert(cas3 != cas1 && cas3 != cas2);
	cr_assert_eq(put_meta("other", "v", 1, 0, 0, &other), 0);
	cr_assert(other != cas1 && other != cas2 && other != cas3);
	/* too small a buffer still reports the meta */
	cr_assert_eq(xkv_store_get_meta(s, "k", 1, xkv_hash("k", 1), out, 10, &len, &m), -ENOBUFS);
	cr_assert_eq(m.cas, cas3);
}

/* A directory's version goes and comes with its value, rewritten in place or not. */
Test(store_meta, the_directorys_version_travels_with_the_value)
{
	struct xkv_item_meta m = {.ver = 41}, got;
	const char *k = "hot";
	uint64_t h = xkv_hash(k, 3);

	cr_assert_eq(xkv_store_put_meta(s, k, 3, h, "one", 3, &m), 0);
	cr_assert_eq(get_meta(k, &got), 0);
	cr_assert_eq(got.ver, 41);
	m.ver = 42; /* the same length: in place */
	cr_assert_eq(xkv_store_put_meta(s, k, 3, h, "two", 3, &m), 0);
	cr_assert_eq(get_meta(k, &got), 0);
	cr_assert_eq(got.ver, 42);
	cr_assert_eq(touch(k, 0, &got), 0);
	cr_assert_eq(got.ver, 42, "touch keeps it");
	m.ver = 43; /* a new item */
	cr_assert_eq(xkv_store_put_meta(s, k, 3, h, out, 3000, &m), 0);
	cr_assert_eq(get_meta(k, &got), 0);
	cr_assert_eq(got.ver, 43);
	cr_assert_eq(put(k, "v", 1), 0);
	cr_assert_eq(get_meta(k, &got), 0);
	cr_assert_eq(got.ver, 0, "a write that is not the directory's leaves none");
}

/* A tombstone is absent for every read, yet remembers its version; a write replaces it. */
Test(store_meta, a_tombstone_is_absent_but_keeps_its_version)
{
	struct xkv_item_meta m = {.ver = 5}, got = {.ver = 99};
	const char *k = "gone";
	uint64_t h = xkv_hash(k, 4);
	uint32_t len;

	cr_assert_eq(get_meta(k, &got), -ENOENT);
	cr_assert_eq(got.ver, 0, "no item: no version");
	cr_assert_eq(xkv_store_put_meta(s, k, 4, h, "v", 1, &m), 0);
	cr_assert_eq(xkv_store_tombstone(s, k, 4, h, 7), 0);
	cr_assert_eq(get(k, &len), -ENOENT);
	cr_assert_eq(value_len(k), -ENOENT);
	cr_assert_eq(touch(k, 0, NULL), -ENOENT);
	cr_assert_eq(get_meta(k, &got), -ENOENT);
	cr_assert_eq(got.ver, 7, "the tombstone's version");
	cr_assert_eq(stats().items, 1, "a tombstone is an item");
	m.ver = 8;
	cr_assert_eq(xkv_store_put_meta(s, k, 4, h, "back", 4, &m), 0);
	cr_assert_eq(get_meta(k, &got), 0);
	cr_assert_eq(got.ver, 8);
	cr_assert_eq(memcmp(out, "back", 4), 0);
	/* one for a key never stored; a plain delete takes it, and its version */
	cr_assert_eq(xkv_store_tombstone(s, "never", 5, xkv_hash("never", 5), 3), 0);
	cr_assert_eq(get_meta("never", &got), -ENOENT);
	cr_assert_eq(got.ver, 3);
	cr_assert_eq(xkv_store_delete(s, "never", 5, xkv_hash("never", 5)), -ENOENT);
	cr_assert_eq(get_meta("never", &got), -ENOENT);
	cr_assert_eq(got.ver, 0);
}

/* An expired item is absent for get, get_meta and value_len; delete unlinks it. */
Test(store_meta, expired_items_are_absent_for_every_read)
{
	uint32_t now = xkv_store_now(s), len;
	struct xkv_item_meta m;

	cr_assert_eq(put_meta("k", "v", 1, 1, now + 10, NULL), 0);
	cr_assert_eq(put_meta("forever", "v", 1, 1, 0, NULL), 0);
	xkv_store_clock_shift(s, 9);
	cr_assert_eq(get_meta("k", &m), 0, "a second before it expires");
	cr_assert_eq(m.exptime, now + 10);
	xkv_store_clock_shift(s, 1);
	cr_assert_eq(get("k", &len), -ENOENT);
	cr_assert_eq(get_meta("k", &m), -ENOENT);
	cr_assert_eq(value_len("k"), -ENOENT);
	cr_assert_eq(touch("k", 0, &m), -ENOENT);
	cr_assert_eq(get_meta("forever", &m), 0);
	cr_assert_eq(stats().items, 2, "still linked until the writer meets it");
	cr_assert_eq(del("k"), -ENOENT, "absent for delete too");
	cr_assert_eq(stats().items, 1, "delete unlinked it");
	cr_assert_eq(put_meta("k", "new", 3, 2, 0, NULL), 0);
	assert_value("k", "new", 3);
}

/* touch sets a new exptime and keeps value, flags and CAS, as memcached's does. */
Test(store_meta, touch_moves_the_expiry_only)
{
	uint32_t now = xkv_store_now(s);
	struct xkv_item_meta m;
	uint64_t cas;

	cr_assert_eq(touch("k", now + 100, &m), -ENOENT);
	cr_assert_eq(put_meta("k", "v", 1, 9, now + 5, &cas), 0);
	cr_assert_eq(touch("k", now + 100, &m), 0);
	cr_assert_eq(m.flags, 9);
	cr_assert_eq(m.cas, cas);
	cr_assert_eq(m.exptime, now + 100);
	xkv_store_clock_shift(s, 50);
	cr_assert_eq(get_meta("k", &m), 0, "touched past its first expiry");
	cr_assert_eq(m.cas, cas);
	cr_assert_eq(touch("k", 0, &m), 0);
	xkv_store_clock_shift(s, 1000);
	assert_value("k", "v", 1);
}

/* Everything stored before a flush is absent, whatever wrote it; what follows is not. */
Test(store_meta, flush_hides_what_was_stored_before_it)
{
	struct xkv_item_meta m;
	uint32_t len;

	cr_assert_eq(put("a", "1", 1), 0);
	cr_assert_eq(put_meta("b", "2", 1, 5, 0, NULL), 0);
	cr_assert_eq(install("c", "3", 1, NULL), 0);
	xkv_store_flush(s);
	cr_assert_eq(get("a", &len), -ENOENT);
	cr_assert_eq(get_meta("b", &m), -ENOENT);
	cr_assert_eq(value_len("c"), -ENOENT);
	cr_assert_eq(touch("a", 0, NULL), -ENOENT);
	cr_assert_eq(put("d", "4", 1), 0);
	cr_assert_eq(put("a", "5", 1), 0, "a flushed key in place");
	assert_value("d", "4", 1);
	assert_value("a", "5", 1);
	cr_assert_eq(del("c"), -ENOENT);
	xkv_store_flush(s);
	cr_assert_eq(get("d", &len), -ENOENT);
	cr_assert_eq(get("a", &len), -ENOENT);
}

/*
 * An install over an expired or flushed value reports the key absent, as value_len did
 * before it: minos's owner keeps xkv_large_keys by what install says it replaced.
 */
Test(store_meta, install_over_a_dead_value_replaced_nothing)
{
	static uint8_t big[3000];
	uint32_t now = xkv_store_now(s);
	int64_t old_len = 0;

	cr_assert_eq(put_meta("k", big, sizeof(big), 0, now + 5, NULL), 0);
	xkv_store_clock_shift(s, 5);
	cr_assert_eq(value_len("k"), -ENOENT);
	cr_assert_eq(install("k", "v", 1, &old_len), 0);
	cr_assert_eq(old_len, -1, "an expired value is replaced as if absent");
	xkv_store_flush(s);
	cr_assert_eq(install("k", big, sizeof(big), &old_len), 0);
	cr_assert_eq(old_len, -1, "a flushed value too");
	cr_assert_eq(install("k", "w", 1, &old_len), 0);
	cr_assert_eq(old_len, sizeof(big), "a live one is reported");
}

/* The hand-off path carries meta and gets a CAS when installed. */
Test(store_meta, installed_items_carry_meta)
{
	struct xkv_item *item = xkv_store_item_new("k", 1, "value", 5);
	struct xkv_item_meta m;
	uint64_t cas;

	cr_assert_not_null(item);
	xkv_store_item_set_meta(item, &(struct xkv_item_meta){.flags = 42,
							       .exptime = xkv_store_now(s) + 60});
	cr_assert_eq(xkv_store_install(s, item, xkv_hash("k", 1), NULL), 0);
	cas = xkv_store_item_cas(item);
	cr_assert_neq(cas, 0);
	cr_assert_eq(get_meta("k", &m), 0);
	cr_assert_eq(m.flags, 42);
	cr_assert_eq(m.cas, cas);
	xkv_store_clock_shift(s, 60);
	cr_assert_eq(get_meta("k", &m), -ENOENT);
}

/* CLOCK takes an expired item before any live one, though it was read just now. */
Test(store_modes, clock_evicts_expired_items_first)
{
	const int n = 10;
	char key[16], val[1000] = {0};
	struct xkv_item_meta meta = {0};
	uint32_t len;

	open_store_for(n);
	for (int i = 0; i < n; i++) {
		key_name(key, sizeof(key), i);
		meta.exptime = i == n / 2 ? xkv_store_now(s) + 1 : 0;
		cr_assert_eq(xkv_store_put_meta(s, key, strlen(key), hash_in_partition(3, i), val,
						sizeof(val), &meta),
			     0);
		cr_assert_eq(get_h(key, hash_in_partition(3, i), &len), 0, "referenced");
	}
	xkv_store_clock_shift(s, 1);
	key_name(key, sizeof(key), n);
	cr_assert_eq(put_h(key, hash_in_partition(3, n), val, sizeof(val)), 0);
	cr_assert_eq(stats().evictions, 1);
	for (int i = 0; i < n; i++) {
		int want = i == n / 2 ? -ENOENT : 0;

		key_name(key, sizeof(key), i);
		cr_assert_eq(xkv_store_value_len(s, key, strlen(key), hash_in_partition(3, i), &len),
			     want, "%s", key);
	}
	cr_assert_eq(stats().items, n, "the expired one was unlinked");
	close_store();
}

/* The class counts (stats items, stats slabs): each class's items, bytes and losses. */
static void class_stats(struct xkv_store_class_stats cls[XKV_STORE_CLASSES], uint64_t *items,
			uint64_t *bytes)
{
	xkv_store_get_class_stats(s, cls);
	*items = *bytes = 0;
	for (int c = 0; c < XKV_STORE_CLASSES; c++) {
		*items += cls[c].items;
		*bytes += cls[c].bytes;
	}
}

/* An item's footprint class: 32-byte header, key padded to 8, capacity to 8. */
Test(store, items_are_counted_in_their_footprint_class)
{
	static char val[XKV_VALUE_MAX];
	struct xkv_store_class_stats cls[XKV_STORE_CLASSES];
	uint64_t items, bytes;

	cr_assert_eq(put("a", val, 0), 0);	       /* 32 + 8 + 0: 40 bytes, class 6 */
	cr_assert_eq(put("b", val, 100), 0);	       /* 32 + 8 + 104: 144, class 8 */
	cr_assert_eq(put("c", val, 100), 0);
	cr_assert_eq(put("d", val, XKV_VALUE_MAX), 0); /* 2^20 + 40: class 21 */
	class_stats(cls, &items, &bytes);
	cr_assert_eq(cls[6].items, 1);
	cr_assert_eq(cls[6].bytes, 40);
	cr_assert_eq(cls[8].items, 2);
	cr_assert_eq(cls[8].bytes, 288);
	cr_assert_eq(cls[21].items, 1);
	cr_assert_eq(items, stats().items, "the classes hold every item");
	cr_assert_eq(bytes, stats().bytes_used, "and every byte");

	cr_assert_eq(put("b", val, 2000), 0, "a new item, in another class");
	cr_assert_eq(del("c"), 0);
	class_stats(cls, &items, &bytes);
	cr_assert_eq(cls[8].items, 0, "the replaced and the deleted left their class");
	cr_assert_eq(cls[8].bytes, 0);
	cr_assert_eq(cls[11].items, 1, "32 + 8 + 2000: class 11");
	cr_assert_eq(items, stats().items);
	cr_assert_eq(bytes, stats().bytes_used);
}

/* Evictions and refusals are counted in the class of the item lost or refused. */
Test(store_modes, evictions_and_refusals_by_class)
{
	char key[16], val[1000] = {0};
	struct xkv_store_class_stats cls[XKV_STORE_CLASSES];
	uint64_t items, bytes;
	int refused = 0;

	open_store(50 << 10, XKV_MODE_CACHE, 10, 0);
	for (int i = 0; i < 200; i++) {
		key_name(key, sizeof(key), i);
		cr_assert_eq(put_h(key, hash_in_partition(9, i), val, sizeof(val)), 0);
	}
	class_stats(cls, &items, &bytes);
	/* 32 + 8 + 1000: 1040 bytes, class 11 */
	cr_assert_eq(cls[11].evicted, stats().evictions);
	cr_assert_eq(cls[11].evicted, 200 - cls[11].items);
	cr_assert_eq(items, stats().items);
	close_store();

	open_store(64 << 10, XKV_MODE_STORE, 6, 2);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		refused += put(key, val, sizeof(val)) == -ENOMEM;
	}
	cr_assert_gt(refused, 0);
	cr_assert_eq(put("small", val, 0), -ENOMEM, "16 bytes left: no room for 40");
	class_stats(cls, &items, &bytes);
	cr_assert_eq(cls[11].outofmemory, (uint64_t)refused);
	cr_assert_eq(cls[6].outofmemory, 1, "the small one in its own class");
	close_store();
}

/* memcached's fetched bit: set by the first read, cleared by a new value, in place too. */
Test(store, a_read_reports_whether_the_item_was_read_before)
{
	struct xkv_item_meta meta;
	uint32_t len;

	cr_assert_eq(put("k", "v1", 2), 0);
	cr_assert_eq(xkv_store_get_meta(s, "k", 1, xkv_hash("k", 1), out, sizeof(out), &len, &meta), 0);
	cr_assert(!meta.fetched, "the first read");
	cr_assert_eq(meta.footprint, 32 + 8 + 8);
	cr_assert_eq(xkv_store_value_len(s, "k", 1, xkv_hash("k", 1), &len), 0, "a length alone");
	cr_assert_eq(xkv_store_get_meta(s, "k", 1, xkv_hash("k", 1), out, sizeof(out), &len, &meta), 0);
	cr_assert(meta.fetched, "the second read");
	cr_assert_eq(put("k", "v2", 2), 0, "rewritten in place");
	cr_assert_eq(xkv_store_get_meta(s, "k", 1, xkv_hash("k", 1), out, sizeof(out), &len, &meta), 0);
	cr_assert(!meta.fetched, "a new value is not fetched yet");
}
