// SPDX-License-Identifier: MIT
/*
 * Invariant 2 under load: readers on many threads against one writer per
 * partition. Every value carries its key, its own length and a checksum, so a torn
 * or mixed read cannot pass unnoticed; freed memory read by a reader is caught by
 * AddressSanitizer in `make test-asan`. The first STEADY keys are never deleted, so
 * a reader that misses one has lost an item: the second test has the writers fill
 * the store meanwhile, so that every partition's table doubles under the readers.
 * The third has each write built on one thread and installed by the owner on
 * another, as Minos's large and small workers split a large PUT. The cache-mode
 * variants keep the store over its limit, so that CLOCK, the referenced bit and
 * borrowing run under the readers; the moving-owner ones hand each partition from
 * writer to writer as dcrew does. `make test-tsan` runs them all under
 * ThreadSanitizer too, at a fifth of the work. Each write's flags and exptime are
 * drawn from its value (value_meta), so that a reader also sees whether the meta it
 * copied belongs to the value it copied. Readers also read the store's stats now and
 * then, as the server's main thread does, so that TSan sees the writers' counts (the
 * spares a chain borrows among them) read while they change.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/options.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "store/store.h"
#include "util/spsc.h"

/*
 * ThreadSanitizer runs 5 to 15 times slower: a fifth of the writes, and a filler every
 * write so that tables still double twice.
 */
#ifdef __SANITIZE_THREAD__
#define WORK_SCALE 5
#define FILL_EVERY 1
#else
#define WORK_SCALE 1
#define FILL_EVERY 3
#endif

/*
 * One test at a time: each runs five or six threads, on two cores. And two at once
 * make Criterion 2.4.1's runner leak 48 bytes now and then (LeakSanitizer fails
 * `make test-asan` on it; its own bug, not the store's).
 */
ReportHook(PRE_ALL)(struct criterion_test_set *tests)
{
	(void)tests;
	criterion_options.jobs = 1;
}

#define KEYS	      64
#define WRITERS	      2
#define MOVERS	      3 /* writers that take partitions in turn */
#define READERS	      3
#define WRITES	      (300000 / WORK_SCALE)
#define MOVER_WRITES  (WRITES / 3) /* as many in all as two static writers, who skip half */
#define VALUE_MAX     6000
#define QUIESCE_EVERY 64
#define STEADY	      8 /* keys 0..STEADY-1: written before the readers start, never deleted */

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
static atomic_ulong reads_during_writes, bad_reads, fillers;
static bool fill; /* writers also add new keys, one every FILL_EVERY writes */
static bool cache; /* cache mode: any key may be evicted, and a put may find no memory */

/* Thread-local bytes only: not worth ThreadSanitizer's time (nor are value_make's). */
__attribute__((no_sanitize("thread"))) static uint32_t value_check(const uint8_t *v,
								       uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		if (i < offsetof(struct value_head, check) || i >= sizeof(struct value_head))
			h = (h ^ v[i]) * 16777619u;
	return h;
}

__attribute__((no_sanitize("thread"))) static uint32_t value_make(uint8_t *v, uint32_t key,
								      uint32_t seq, uint64_t *rng)
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

/* Far in the future (2038), so that no item expires: plus the write's sequence number. */
#define EXPTIME_BASE 0x80000000u

/* What a value's writes carry as meta: its checksum and sequence number. */
static struct xkv_item_meta value_meta(const uint8_t *v, uint32_t len)
{
	struct value_head head = {0};

	if (len >= sizeof(head))
		memcpy(&head, v, sizeof(head));
	return (struct xkv_item_meta){.flags = head.check,
				      .exptime = EXPTIME_BASE + head.seq,
				      .ver = (uint64_t)head.seq << 32 | head.check};
}

/* The meta a reader copied with v: the writer's, and a CAS of the key's partition. */
static bool meta_ok(const struct xkv_item_meta *m, const uint8_t *v, uint32_t len, uint32_t key)
{
	struct xkv_item_meta want = value_meta(v, len);

	return m->flags == want.flags && m->exptime == want.exptime && m->ver == want.ver &&
	       m->cas % XKV_PARTITIONS == xkv_partition(hashes[key]) && m->cas >= XKV_PARTITIONS;
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Cache mode may answer -ENOMEM (store.h); store mode, with room to spare, may not. */
static void put_ok(const void *key, uint16_t key_len, uint64_t hash, const void *v,
		   uint32_t len)
{
	struct xkv_item_meta meta = value_meta(v, len);
	int err = xkv_store_put_meta(s, key, key_len, hash, v, len, &meta);

	cr_assert(err == 0 || (cache && err == -ENOMEM), "put: %d", err);
}

/*
 * dcrew's exclusive writer table, reduced to one word a partition: 0 when free, else
 * its writer's id + 1. A writer takes it with an acquire CAS and drops it with a
 * release store, so each writer of a partition happens-after the one before.
 */
static _Atomic uint32_t slot_owner[XKV_PARTITIONS];
static uint32_t last_writer[XKV_PARTITIONS]; /* plain: only the partition's owner uses it */
static atomic_ulong moves;		     /* takes from another writer than the last */
static bool moving; /* writers take partitions in turn; else p % WRITERS is writer me's */

static void partition_take(uint32_t p, uint32_t me)
{
	uint32_t free_slot = 0;

	while (!atomic_compare_exchange_weak_explicit(&slot_owner[p], &free_slot, me + 1,
						      memory_order_acquire, memory_order_relaxed)) {
		free_slot = 0;
		/* the owner may be growing the table: its grace period needs us quiescent */
		xkv_store_quiescent();
		sched_yield();
	}
	if (last_writer[p] != me + 1) {
		last_writer[p] = me + 1;
		atomic_fetch_add_explicit(&moves, 1, memory_order_relaxed);
	}
}

/*
 * Whether writer me may write partition p now: invariant 1 is the caller's. A moving
 * writer takes any partition, waiting for it; a static one owns p % WRITERS == me.
 */
static bool partition_enter(uint32_t p, uint32_t me)
{
	if (!moving)
		return p % WRITERS == me;
	partition_take(p, me);
	return true;
}

static void partition_leave(uint32_t p)
{
	if (moving)
		atomic_store_explicit(&slot_owner[p], 0, memory_order_release);
}

/* A key never written before, in a partition writer me may write. */
static void fill_one(uint32_t me, uint32_t *next)
{
	char key[24];
	uint64_t hash;
	int len;

	do {
		len = snprintf(key, sizeof(key), "fill:%u:%u", me, (*next)++);
		hash = xkv_hash(key, (uint32_t)len);
	} while (!partition_enter(xkv_partition(hash), me));
	put_ok(key, (uint16_t)len, hash, key, (uint32_t)len);
	partition_leave(xkv_partition(hash));
	atomic_fetch_add(&fillers, 1);
}

/* One write of key k by its partition's writer: now and then a delete, else a put. */
static void write_key(uint32_t k, uint32_t *seq, uint64_t *rng, uint8_t *v)
{
	if (k >= STEADY && xorshift(rng) % 16 == 0) {
		xkv_store_delete(s, keys[k], key_lens[k], hashes[k]);
	} else {
		uint32_t len = value_make(v, k, ++*seq, rng);

		put_ok(keys[k], key_lens[k], hashes[k], v, len);
	}
}

static void *writer(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg, seq = 0, next_filler = 0;
	static _Thread_local uint8_t v[VALUE_MAX];
	uint64_t rng = 88172645463325252ULL + me;

	xkv_store_thread_online();
	for (int n = 0; n < (moving ? MOVER_WRITES : WRITES); n++) {
		uint32_t k = xorshift(&rng) % KEYS, p = xkv_partition(hashes[k]);

		if (fill && n % FILL_EVERY == 0)
			fill_one(me, &next_filler);
		if (!partition_enter(p, me))
			continue;
		write_key(k, &seq, &rng, v);
		partition_leave(p);
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
	struct xkv_store_stats st;

	xkv_store_thread_online();
	for (uint64_t n = 0; atomic_load(&writing); n++) {
		uint32_t k = xorshift(&rng) % KEYS, len;
		struct xkv_item_meta meta;
		int err = xkv_store_get_meta(s, keys[k], key_lens[k], hashes[k], v, sizeof(v), &len,
					     &meta);

		if (err == 0) {
			reads++;
			if (!value_ok(v, len, k) || !meta_ok(&meta, v, len, k))
				atomic_fetch_add(&bad_reads, 1);
		} else if (err != -ENOENT || (k < STEADY && !cache)) {
			atomic_fetch_add(&bad_reads, 1);
		}
		if (n % QUIESCE_EVERY == 0) {
			/* as the server's main thread does: what writers count, read under them */
			xkv_store_get_stats(s, &st);
			xkv_store_quiescent();
		}
	}
	atomic_fetch_add(&reads_during_writes, reads);
	xkv_store_thread_offline();
	return NULL;
}

/* nwriters of write and readers at once on a store made from cfg; returns when all are done. */
static void run(const struct xkv_store_config *cfg, void *(*write)(void *), int nwriters)
{
	pthread_t writers[MOVERS], readers[READERS];
	uint64_t reclaimed_before = xkv_store_reclaimed();
	uint8_t v[VALUE_MAX];
	uint64_t rng = 1;

	for (int k = 0; k < KEYS; k++) {
		key_lens[k] = (uint16_t)snprintf(keys[k], sizeof(keys[k]), "ck:%d", k);
		hashes[k] = xkv_hash(keys[k], key_lens[k]);
	}
	xkv_store_thread_online();
	s = xkv_store_create(cfg);
	cr_assert_not_null(s);
	for (uint32_t k = 0; k < STEADY; k++) {
		uint32_t len = value_make(v, k, 0, &rng);

		put_ok(keys[k], key_lens[k], hashes[k], v, len);
	}

	/* main holds nothing while it waits: without this no grace period ends, nothing is freed */
	xkv_store_thread_sleep();
	atomic_store(&writing, true);
	for (int i = 0; i < READERS; i++)
		pthread_create(&readers[i], NULL, reader, (void *)(uintptr_t)i);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&writers[i], NULL, write, (void *)(uintptr_t)i);
	for (int i = 0; i < nwriters; i++)
		pthread_join(writers[i], NULL);
	atomic_store(&writing, false);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	xkv_store_thread_wake();

	cr_assert_eq(atomic_load(&bad_reads), 0, "%lu torn, mixed, lost or failed reads",
		     atomic_load(&bad_reads));
	/* ASan only proves invariant 2 if items really were freed under the readers */
	cr_assert_gt(xkv_store_reclaimed() - reclaimed_before, 10000 / WORK_SCALE,
		     "only %lu items reclaimed during the run",
		     xkv_store_reclaimed() - reclaimed_before);
	cr_assert_gt(atomic_load(&reads_during_writes), 10000 / WORK_SCALE,
		     "readers found only %lu values while writers ran",
		     atomic_load(&reads_during_writes));
}

static void close_store(void)
{
	xkv_store_destroy(s);
	xkv_store_thread_offline();
}

Test(store_concurrency, readers_never_see_torn_or_freed_values, .timeout = 120)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 256 << 20,
		.mode = XKV_MODE_STORE,
		.bucket_bits = 2, /* few buckets: readers and writers meet in the same chains */
		.overflow_buckets = 8,
	};

	run(&cfg, writer, WRITERS);
	close_store();
}

/* Every filler written is there, and no more than the fixed keys besides. */
static void assert_fillers_stored(void)
{
	struct xkv_store_stats st;

	xkv_store_get_stats(s, &st);
	cr_assert(st.items >= atomic_load(&fillers) + STEADY &&
		  st.items <= atomic_load(&fillers) + KEYS,
		  "%lu items: every filler stored, and some of the %d keys", st.items, KEYS);
}

/* The same while every partition's table doubles, again and again, under the readers. */
static const struct xkv_store_config growth_cfg = {
	.memory_limit = 256 << 20,
	.mode = XKV_MODE_STORE,
	.bucket_bits = 10, /* tables start at 16 heads and grow to 64 or more */
	.overflow_buckets = 128,
};

Test(store_concurrency, readers_never_miss_an_item_while_tables_grow, .timeout = 120)
{
	struct xkv_store_stats st;

	fill = true;
	run(&growth_cfg, writer, WRITERS);
	xkv_store_get_stats(s, &st);
	/* 256 tables of 16 heads and 16 spares are 0.5 MiB: 64 heads and more are over 1.5 */
	cr_assert_gt(st.bucket_bytes, 3u << 19, "the tables grew: %lu bytes", st.bucket_bytes);
	assert_fillers_stored();
	close_store();
}

/*
 * Cache mode far over its limit: 64 values of up to 6 KB and the fillers in 128 KiB,
 * short chains, so that the CLOCK hand, the referenced bits readers set, full chains,
 * borrowing and repaying all run under the readers.
 */
static const struct xkv_store_config cache_cfg = {
	.memory_limit = 128 << 10,
	.mode = XKV_MODE_CACHE,
	.bucket_bits = 2,
	.overflow_buckets = 8,
};

static void assert_evicted(void)
{
	struct xkv_store_stats st;

	xkv_store_get_stats(s, &st);
	cr_assert_gt(st.evictions, 1000 / WORK_SCALE, "only %lu evictions", st.evictions);
}

Test(store_concurrency, cache_mode_readers_never_see_torn_or_freed_values, .timeout = 120)
{
	cache = fill = true;
	run(&cache_cfg, writer, WRITERS);
	assert_evicted();
	close_store();
}

static void assert_moved(void)
{
	cr_assert_gt(atomic_load(&moves), 10000 / WORK_SCALE,
		     "partitions changed writer only %lu times", atomic_load(&moves));
}

/* Writers take each partition in turn, as dcrew hands it over, while its table grows. */
Test(store_concurrency, moving_writers_hand_partitions_over, .timeout = 120)
{
	fill = moving = true;
	run(&growth_cfg, writer, MOVERS);
	assert_moved();
	assert_fillers_stored();
	close_store();
}

/* The same in cache mode: the CLOCK hand, the counters and the loans move with the partition. */
Test(store_concurrency, moving_writers_in_cache_mode, .timeout = 120)
{
	cache = fill = moving = true;
	run(&cache_cfg, writer, MOVERS);
	assert_moved();
	assert_evicted();
	close_store();
}

/* A built write on its way to the owner. */
struct handoff {
	struct xkv_item *item;
	uint32_t key;
	uint32_t len;
};

#define HANDOFFS (100000 / WORK_SCALE)

static struct xkv_spsc ring; /* builder to owner */
static atomic_bool built;    /* the builder has pushed its last handoff */

/* Builds items on a thread that owns no partition and is not even online. */
static void *builder(void *arg)
{
	static _Thread_local uint8_t v[VALUE_MAX];
	uint64_t rng = 0x2545f4914f6cdd1dULL;

	(void)arg;
	for (uint32_t n = 1; n <= HANDOFFS; n++) {
		struct handoff *h = malloc(sizeof(*h));

		cr_assert_not_null(h);
		h->key = xorshift(&rng) % KEYS;
		h->len = value_make(v, h->key, n, &rng);
		struct xkv_item_meta meta = value_meta(v, h->len);

		h->item = xkv_store_item_new(keys[h->key], key_lens[h->key], v, h->len);
		cr_assert_not_null(h->item);
		xkv_store_item_set_meta(h->item, &meta);
		while (!xkv_spsc_push(&ring, h))
			sched_yield();
	}
	atomic_store(&built, true);
	return NULL;
}

/* The owner's view of a key: its value's length, or -1 if absent. */
static int64_t length_now(uint32_t k)
{
	uint32_t len;

	return xkv_store_value_len(s, keys[k], key_lens[k], hashes[k], &len) == 0 ? (int64_t)len : -1;
}

/*
 * The one writer of every partition: installs what the builder sends, and puts and
 * deletes in between (puts that rewrite in place among them). Each install's old
 * length and each value_len must be what the owner last wrote.
 */
static void *owner(void *arg)
{
	static _Thread_local uint8_t v[VALUE_MAX];
	uint64_t rng = 0x853c49e6748fea9bULL;
	int64_t last[KEYS];
	uint32_t seq = 0;
	pthread_t b;

	(void)arg;
	xkv_store_thread_online();
	for (uint32_t k = 0; k < KEYS; k++)
		last[k] = length_now(k);
	cr_assert_eq(pthread_create(&b, NULL, builder, NULL), 0);
	for (uint64_t n = 0;; n++) {
		struct handoff *h = xkv_spsc_pop(&ring);
		uint32_t k = xorshift(&rng) % KEYS;
		int64_t old_len;

		if (!h) {
			if (atomic_load(&built) && xkv_spsc_empty(&ring))
				break;
			sched_yield(); /* two shared cores: let the builder run */
			continue;
		}
		cr_assert_eq(xkv_store_install(s, h->item, hashes[h->key], &old_len), 0);
		cr_assert_eq(old_len, last[h->key], "key %u", h->key);
		last[h->key] = h->len;
		free(h);
		/* and a write of its own between two installs */
		cr_assert_eq(length_now(k), last[k], "key %u", k);
		if (k >= STEADY && xorshift(&rng) % 16 == 0) {
			xkv_store_delete(s, keys[k], key_lens[k], hashes[k]);
			last[k] = -1;
		} else {
			last[k] = value_make(v, k, ++seq, &rng);
			put_ok(keys[k], key_lens[k], hashes[k], v, (uint32_t)last[k]);
		}
		if (n % QUIESCE_EVERY == 0)
			xkv_store_quiescent();
	}
	pthread_join(b, NULL);
	xkv_store_thread_offline();
	return NULL;
}

/* Items built on one thread, installed by the owner on another, read by three more. */
Test(store_concurrency, installed_items_are_never_torn_for_readers, .timeout = 120)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 256 << 20,
		.mode = XKV_MODE_STORE,
		.bucket_bits = 2,
		.overflow_buckets = 8,
	};

	cr_assert_eq(xkv_spsc_init(&ring, 64), 0);
	run(&cfg, owner, 1);
	cr_assert(xkv_spsc_empty(&ring));
	xkv_spsc_fini(&ring);
	close_store();
}

static atomic_bool grown;

/* The 81st key of partition 0 makes its 16-head table double: it holds 5 items a head. */
static void *grow_partition_zero(void *arg)
{
	const char *key = arg;

	xkv_store_thread_online();
	cr_assert_eq(xkv_store_put(s, key, (uint16_t)strlen(key), xkv_hash(key, strlen(key)), "v",
				   1),
		     0);
	atomic_store(&grown, true);
	xkv_store_thread_offline();
	return NULL;
}

/*
 * A writer that doubles a table goes on only once every reader of the old table has
 * passed a quiescent state: until then it may neither rewrite an item in place (the
 * old table's readers watch other versions) nor free the table. This thread plays a
 * reader that still holds the old table.
 */
Test(store_concurrency, growth_waits_for_readers_of_the_old_table, .timeout = 30)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 64 << 20, .mode = XKV_MODE_STORE, .bucket_bits = 6,
		.overflow_buckets = 16,
	};
	static char keys0[81][16];
	struct xkv_store_stats before, after;
	pthread_t writer_thread;
	int n = 0;

	for (uint32_t i = 0; n < 81; i++) {
		int len = snprintf(keys0[n], sizeof(keys0[n]), "z%u", i);

		n += xkv_partition(xkv_hash(keys0[n], (uint32_t)len)) == 0;
	}
	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s);
	for (int i = 0; i < 80; i++)
		cr_assert_eq(xkv_store_put(s, keys0[i], (uint16_t)strlen(keys0[i]),
					   xkv_hash(keys0[i], strlen(keys0[i])), "v", 1),
			     0);
	xkv_store_get_stats(s, &before);

	/* online and not quiescent since the stats read: we may hold the old table */
	pthread_create(&writer_thread, NULL, grow_partition_zero, keys0[80]);
	usleep(300000);
	cr_assert_not(atomic_load(&grown), "the writer went on while a reader held the old table");
	xkv_store_quiescent();
	xkv_store_thread_sleep();
	pthread_join(writer_thread, NULL);
	xkv_store_thread_wake();
	cr_assert(atomic_load(&grown));
	xkv_store_get_stats(s, &after);
	cr_assert_gt(after.bucket_bytes, before.bucket_bytes, "partition 0's table doubled");
	close_store();
}
