// SPDX-License-Identifier: MIT
/*
 * Invariant 2 under load: readers on many threads against one writer per
 * partition. Every value carries its key, its own length and a checksum, so a torn
 * or mixed read cannot pass unnoticed; freed memory read by a reader is caught by
 * AddressSanitizer in `make test-asan`.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <xkv/hash.h>
#include "store/store.h"

#define KEYS	      64
#define WRITERS	      2
#define READERS	      3
#define WRITES	      300000
#define VALUE_MAX     6000
#define QUIESCE_EVERY 64

struct value_head {
	uint32_t key;	/* index of the key the value belongs to */
	uint32_t seq;	/* the writer's sequence number for this write */
	uint32_t len;	/* the whole value's length */
	uint32_t check; /* FNV-1a over everything else */
};

static struct xkv_store *s;
static char keys[KEYS][16];
static uint16_t key_lens[KEYS];
static uint64_t hashes[KEYS];
static atomic_bool writing;
static atomic_ulong reads_during_writes, bad_reads;

static uint32_t value_check(const uint8_t *v, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		if (i < offsetof(struct value_head, check) || i >= sizeof(struct value_head))
			h = (h ^ v[i]) * 16777619u;
	return h;
}

static uint32_t value_make(uint8_t *v, uint32_t key, uint32_t seq, uint64_t *rng)
{
	/* lengths that rewrite in place and lengths that need a new item */
	static const uint32_t lens[] = {16, 24, 64, 1500, VALUE_MAX, VALUE_MAX, VALUE_MAX};
	uint32_t len = lens[*rng % (sizeof(lens) / sizeof(lens[0]))];
	struct value_head head = {.key = key, .seq = seq, .len = len};

	for (uint32_t i = sizeof(head); i < len; i++)
		v[i] = (uint8_t)(seq * 31 + i);
	memcpy(v, &head, sizeof(head));
	head.check = value_check(v, len);
	memcpy(v, &head, sizeof(head));
	return len;
}

static bool value_ok(const uint8_t *v, uint32_t len, uint32_t key)
{
	struct value_head head;

	if (len < sizeof(head))
		return false;
	memcpy(&head, v, sizeof(head));
	return head.key == key && head.len == len && head.check == value_check(v, len);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *writer(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg, seq = 0;
	static _Thread_local uint8_t v[VALUE_MAX];
	uint64_t rng = 88172645463325252ULL + me;

	xkv_store_thread_online();
	for (int n = 0; n < WRITES; n++) {
		uint32_t k = xorshift(&rng) % KEYS;

		/* invariant 1 is the caller's: this writer owns every partition p % WRITERS == me */
		if (xkv_partition(hashes[k]) % WRITERS != me)
			continue;
		if (xorshift(&rng) % 16 == 0) {
			xkv_store_delete(s, keys[k], key_lens[k], hashes[k]);
		} else {
			uint32_t len = value_make(v, k, ++seq, &rng);

			cr_assert_eq(xkv_store_put(s, keys[k], key_lens[k], hashes[k], v, len), 0);
		}
		if (n % QUIESCE_EVERY == 0)
			xkv_store_quiescent();
	}
	xkv_store_thread_offline();
	return NULL;
}

static void *reader(void *arg)
{
	static _Thread_local uint8_t v[VALUE_MAX];
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)arg;
	unsigned long reads = 0;

	xkv_store_thread_online();
	for (uint64_t n = 0; atomic_load(&writing); n++) {
		uint32_t k = xorshift(&rng) % KEYS, len;
		int err = xkv_store_get(s, keys[k], key_lens[k], hashes[k], v, sizeof(v), &len);

		if (err == 0) {
			reads++;
			if (!value_ok(v, len, k))
				atomic_fetch_add(&bad_reads, 1);
		} else if (err != -ENOENT) {
			atomic_fetch_add(&bad_reads, 1);
		}
		if (n % QUIESCE_EVERY == 0)
			xkv_store_quiescent();
	}
	atomic_fetch_add(&reads_during_writes, reads);
	xkv_store_thread_offline();
	return NULL;
}

Test(store_concurrency, readers_never_see_torn_or_freed_values, .timeout = 120)
{
	struct xkv_store_config cfg = {
		.memory_limit = 256 << 20,
		.mode = XKV_MODE_STORE,
		.bucket_bits = 2, /* few buckets: readers and writers meet in the same chains */
		.overflow_buckets = 8,
	};
	pthread_t writers[WRITERS], readers[READERS];
	uint64_t reclaimed_before = xkv_store_reclaimed();

	for (int k = 0; k < KEYS; k++) {
		key_lens[k] = (uint16_t)snprintf(keys[k], sizeof(keys[k]), "ck:%d", k);
		hashes[k] = xkv_hash(keys[k], key_lens[k]);
	}
	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s);

	/* main holds nothing while it waits: without this no grace period ends, nothing is freed */
	xkv_store_thread_sleep();
	atomic_store(&writing, true);
	for (int i = 0; i < READERS; i++)
		pthread_create(&readers[i], NULL, reader, (void *)(uintptr_t)i);
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&writers[i], NULL, writer, (void *)(uintptr_t)i);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(writers[i], NULL);
	atomic_store(&writing, false);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	xkv_store_thread_wake();

	cr_assert_eq(atomic_load(&bad_reads), 0, "%lu torn, mixed or failed reads",
		     atomic_load(&bad_reads));
	/* ASan only proves invariant 2 if items really were freed under the readers */
	cr_assert_gt(xkv_store_reclaimed() - reclaimed_before, 10000,
		     "only %lu items reclaimed during the run",
		     xkv_store_reclaimed() - reclaimed_before);
	cr_assert_gt(atomic_load(&reads_during_writes), 10000,
		     "readers found only %lu values while writers ran",
		     atomic_load(&reads_during_writes));
	xkv_store_destroy(s);
	xkv_store_thread_offline();
}
