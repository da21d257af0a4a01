/* SPDX-License-Identifier: MIT */
/* Layout shared by the store's files; nothing outside userspace/store/ sees it. */
#ifndef XKV_STORE_INTERNAL_H
#define XKV_STORE_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <urcu/urcu-qsbr.h>
#ifdef XKV_CHECKS
#include <stdio.h>
#include <stdlib.h>
#endif

#include <xkv/hash.h>
#include "store/store.h"

#define XKV_CACHE_LINE	 64
#define XKV_BUCKET_SLOTS 7
#define XKV_SLOT_PTR_MASK ((1ULL << 48) - 1)

/*
 * 32 bytes before the key: with a 16-byte key and a 64-byte value an item is 112
 * bytes, which malloc serves from a 128-byte chunk. Items carry no rcu_head: they
 * are freed in batches (item_retire). The meta (flags, exptime, cas, ver) is
 * rewritten in place with the value, under the bucket's version, so readers copy it
 * with relaxed loads and the version says whether it is whole.
 */
struct xkv_item {
	_Atomic uint32_t lengths;   /* key_len << 24 | ITEM_TOMBSTONE? | value_len; in place */
	uint8_t capacity[3];	    /* value bytes allocated, little-endian; set once */
	_Atomic uint8_t access;	    /* ITEM_REFERENCED, ITEM_FETCHED: set by readers */
	_Atomic uint32_t flags;	    /* the client's, opaque */
	_Atomic uint32_t exptime;   /* store clock (xkv_store_now) it expires at; 0: never */
	_Atomic uint64_t cas;	    /* partition_cas_next's; set as the item is linked */
	_Atomic uint64_t ver;	    /* a coherence directory's (xkv_item_meta.ver) */
	uint8_t data[] __attribute__((aligned(8))); /* key, padded to 8, then value */
};

_Static_assert(sizeof(struct xkv_item) == 32, "the item header packs into 32 bytes");
/*
 * lengths: a tombstone (xkv_store_tombstone) holds no value. It reads as absent by its
 * exptime, long past, so that item_dead asks nothing more of every live item.
 */
/*
 * access: REFERENCED is CLOCK's bit (cache mode: the hand clears it, nothing else reads
 * it); FETCHED says the item was read once (memcached's fetched bit: mg's h, me), and
 * stays. A read sets both with one atomic or, unless both are set already, and the hand
 * clears its own with an atomic and, so neither loses the other's bit.
 */
#define ITEM_REFERENCED 1u
#define ITEM_FETCHED	2u
#define ITEM_TOMBSTONE	  (1u << 23)
#define ITEM_TOMBSTONE_EXPTIME 1
#define ITEM_VALUE_LEN_MASK ((1u << 21) - 1)
_Static_assert(XKV_KEY_MAX < 256 && XKV_VALUE_MAX <= ITEM_VALUE_LEN_MASK &&
		       XKV_VALUE_MAX + 8 < (1u << 24),
	       "lengths fit their bits, and so do capacities");

/* One cache line: the chain's version, its link and seven tagged item addresses. */
struct xkv_bucket {
	union {
		_Atomic uint32_t version; /* head bucket: odd while its chain is being written */
		uint32_t head;		  /* overflow bucket: index of its chain's head */
	};
	_Atomic uint32_t next;		       /* next bucket of the chain; 0 ends it */
	_Atomic uint64_t slot[XKV_BUCKET_SLOTS]; /* tag << 48 | item address; 0 is empty */
};
_Static_assert(sizeof(struct xkv_bucket) == XKV_CACHE_LINE, "a bucket is one cache line");

/*
 * One partition's buckets: 2^bits heads, then spares that chains borrow. It starts
 * small and its writer replaces it with one twice as large as items arrive
 * (table_grow), so resident memory follows the items, not the limit. A mapping's
 * pages stay zero pages until written, and zero is an empty bucket.
 */
struct xkv_table {
	uint32_t bits;		/* log2 of the heads */
	uint32_t mask;		/* heads - 1 */
	uint32_t nbuckets;	/* heads + spares */
	_Atomic uint32_t overflow_next; /* next spare to hand out: the writer's; stats read it */
	uint32_t clock_hand;	/* flat slot index of the CLOCK hand: the writer's */
	size_t bytes;		/* of the mapping, this header included */
	alignas(XKV_CACHE_LINE) struct xkv_bucket buckets[];
};

/* One footprint class's counts in a partition (struct xkv_store_class_stats). */
struct xkv_class_counts {
	_Atomic uint64_t items, bytes, evicted, outofmemory;
};

/*
 * State only a partition's writer changes, whichever thread that is now (store.h);
 * one line each so writers never share.
 */
struct xkv_partition {
	alignas(XKV_CACHE_LINE) _Atomic(struct xkv_table *) table; /* readers load it */
	_Atomic uint64_t items;					     /* read by stats */
	_Atomic uint64_t evictions;
	_Atomic uint64_t cas_last; /* the last CAS handed out here, less its partition */
	/* items with a CAS up to this are flushed: raised by xkv_store_flush, read by readers */
	_Atomic uint64_t flushed;
	/* by footprint class (store.h), each as the store's total above: read by stats */
	struct xkv_class_counts classes[XKV_STORE_CLASSES];
};

struct xkv_store {
	uint32_t max_bits;	/* the largest a table grows: log2 of its heads */
	uint32_t max_spares;	/* spares of a table of max_bits; smaller ones get fewer */
	enum xkv_store_mode mode;
	_Atomic size_t limit;	/* xkv_store_set_limit may change it */
	alignas(XKV_CACHE_LINE) _Atomic size_t used; /* the one counter all writers share */
	struct xkv_partition part[XKV_PARTITIONS];
};

static inline struct xkv_item *slot_item(uint64_t slot)
{
	return (struct xkv_item *)(uintptr_t)(slot & XKV_SLOT_PTR_MASK);
}

static inline uint64_t slot_pack(uint16_t tag, const struct xkv_item *item)
{
	return (uint64_t)tag << 48 | (uintptr_t)item;
}

static inline uint16_t slot_tag(uint64_t slot)
{
	return (uint16_t)(slot >> 48);
}

/*
 * The tag of a key's slot: its hash's, its low bit set, so that a slot whose tag
 * matches is full (an empty one is 0) without a test of its own. 15 bits still leave
 * a key compare to one slot in 32,768 that is not the key's.
 */
static inline uint16_t store_tag(uint64_t hash)
{
	return xkv_tag(hash) | 1;
}

static inline uint16_t item_key_len(const struct xkv_item *item)
{
	return atomic_load_explicit(&item->lengths, memory_order_relaxed) >> 24;
}

/* A reader's copy of the value can still be torn by an in-place rewrite: the version says. */
static inline uint32_t item_value_len(const struct xkv_item *item)
{
	return atomic_load_explicit(&item->lengths, memory_order_relaxed) & ITEM_VALUE_LEN_MASK;
}

static inline bool item_tombstone(const struct xkv_item *item)
{
	return atomic_load_explicit(&item->lengths, memory_order_relaxed) & ITEM_TOMBSTONE;
}

static inline void item_set_lengths(struct xkv_item *item, uint16_t key_len, uint32_t value_len)
{
	atomic_store_explicit(&item->lengths, (uint32_t)key_len << 24 | value_len,
			      memory_order_relaxed);
}

static inline uint32_t item_capacity(const struct xkv_item *item)
{
	return item->capacity[0] | item->capacity[1] << 8 | (uint32_t)item->capacity[2] << 16;
}

static inline const uint8_t *item_key(const struct xkv_item *item)
{
	return item->data;
}

/*
 * Every CAS a partition hands out is its own counter << 8 | the partition: unique
 * store-wide, never 0, and written by the partition's writer alone.
 */
static inline uint64_t partition_cas_next(struct xkv_store *s, uint32_t partition)
{
	_Atomic uint64_t *last = &s->part[partition].cas_last;
	uint64_t cas = atomic_load_explicit(last, memory_order_relaxed) +
		       (1u << XKV_PARTITION_BITS);

	atomic_store_explicit(last, cas, memory_order_relaxed);
	return cas | partition;
}

static inline void item_set_meta(struct xkv_item *item, uint32_t flags, uint32_t exptime,
				 uint64_t ver, uint64_t cas)
{
	atomic_store_explicit(&item->flags, flags, memory_order_relaxed);
	atomic_store_explicit(&item->exptime, exptime, memory_order_relaxed);
	atomic_store_explicit(&item->ver, ver, memory_order_relaxed);
	atomic_store_explicit(&item->cas, cas, memory_order_relaxed);
}

/*
 * Expired (a tombstone too), or stored before a flush of its partition p (the one its
 * key hashes to, whose writer gave its CAS): no read returns it, and the writer unlinks
 * it when it meets it (a write to its key, delete, CLOCK). Readers call it between
 * their version loads; exptime is compared only when set, sparing the clock.
 */
static inline bool item_dead_in(const struct xkv_store *s, const struct xkv_partition *p,
				const struct xkv_item *item)
{
	uint64_t cas = atomic_load_explicit(&item->cas, memory_order_relaxed);
	uint32_t exptime = atomic_load_explicit(&item->exptime, memory_order_relaxed);

	return cas <= atomic_load_explicit(&p->flushed, memory_order_relaxed) ||
	       (exptime && exptime <= xkv_store_now(s));
}

/* item_dead_in, the partition named by the item's CAS. */
static inline bool item_dead(const struct xkv_store *s, const struct xkv_item *item)
{
	uint64_t cas = atomic_load_explicit(&item->cas, memory_order_relaxed);

	return item_dead_in(s, &s->part[cas & (XKV_PARTITIONS - 1)], item);
}

/* The key's bytes padded to a multiple of 8, so that the value is 8-byte aligned. */
static inline uint32_t item_key_space(uint16_t key_len)
{
	return (key_len + 7u) & ~7u;
}

static inline uint8_t *item_value(struct xkv_item *item)
{
	return item->data + item_key_space(item_key_len(item));
}

/*
 * Above this capacity an item is never rewritten in place (item_fits): a new value
 * goes into a new item, so a reader may copy such a value with plain memcpy.
 */
#define XKV_REWRITE_MAX 4096

static inline void counter_add(_Atomic uint64_t *c, int64_t delta)
{
	/* one writer, ordered after the last (store.h): atomic only so stats may read it */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + delta,
			      memory_order_relaxed);
}

/*
 * Writer side of the seqlock: the version is odd between begin and end. A load then a
 * store, not an atomic increment: the one writer of the partition happens-after the
 * previous one (store.h), so it always sees the last end. An atomic RMW would not
 * make two overlapping writers safe either: each would still change slots the
 * other's readers trust, and the second begin would make the version even.
 */
static inline void bucket_write_begin(struct xkv_bucket *head)
{
	uint32_t v = atomic_load_explicit(&head->version, memory_order_relaxed);

#ifdef XKV_CHECKS
	/* the checked build: odd here means another writer is between its begin and end */
	if (v & 1) {
		fprintf(stderr,
			"xkv store: bucket version %u is odd as a write begins: two writers in "
			"one partition (see the contract in store.h)\n",
			v);
		abort();
	}
#endif
	atomic_store_explicit(&head->version, v + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static inline void bucket_write_end(struct xkv_bucket *head)
{
	uint32_t v = atomic_load_explicit(&head->version, memory_order_relaxed);

	atomic_store_explicit(&head->version, v + 1, memory_order_release);
}

/*
 * ThreadSanitizer cannot see that a grace period orders every access made before
 * a thread's quiescent state before the frees that follow it: liburcu is not
 * instrumented. So each quiescent state releases a token, and whatever frees after
 * a grace period acquires it first.
 */
#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
extern char grace_period_token;
static inline void tsan_quiescent_state(void)
{
	__tsan_release(&grace_period_token);
}

static inline void tsan_grace_period_ended(void)
{
	__tsan_acquire(&grace_period_token);
}
#else
static inline void tsan_quiescent_state(void)
{
}

static inline void tsan_grace_period_ended(void)
{
}
#endif

/* Waits for a grace period: the caller is quiescent meanwhile, as liburcu makes it. */
static inline void grace_period_wait(void)
{
	tsan_quiescent_state();
	urcu_qsbr_synchronize_rcu();
	tsan_grace_period_ended();
}

/*
 * Rewriting in place saves an allocation, unless it would strand much of the old
 * space, or the item is large: its readers copy it plainly (XKV_REWRITE_MAX), and a
 * long copy would hold the bucket's version odd. Inline: every overwrite asks.
 */
static inline bool item_fits(const struct xkv_item *item, uint32_t value_len)
{
	uint32_t capacity = item_capacity(item);

	return value_len <= capacity && capacity <= 8 + value_len + value_len / 4 &&
	       capacity <= XKV_REWRITE_MAX;
}

/* items.c: allocation, accounting and deferred reclamation */
size_t item_bytes(uint16_t key_len, uint32_t capacity);
uint32_t item_capacity_for(uint32_t value_len);
struct xkv_item *item_new(const void *key, uint16_t key_len, const void *value,
			  uint32_t value_len);
void item_free(struct xkv_item *item);
/* What an item counts against the memory limit, from reserve to retire. */
static inline size_t item_footprint(const struct xkv_item *item)
{
	return item_bytes(item_key_len(item), item_capacity(item));
}

/* The counts of the footprint class (store.h) of an item of that many bytes. */
static inline struct xkv_class_counts *class_of(struct xkv_partition *p, size_t bytes)
{
	return &p->classes[xkv_size_class((uint32_t)bytes)];
}

/* item linked (sign 1) or unlinked (-1) in partition p, by its writer */
static inline void class_count(struct xkv_partition *p, const struct xkv_item *item, int sign)
{
	size_t bytes = item_footprint(item);
	struct xkv_class_counts *c = class_of(p, bytes);

	counter_add(&c->items, sign);
	counter_add(&c->bytes, sign * (int64_t)bytes);
}
#define XKV_CACHE_SLACK 8 /* cache mode may overshoot the limit by 1/8 while it evicts */
int memory_reserve(struct xkv_store *s, uint32_t partition, size_t bytes);
void memory_repay(struct xkv_store *s, uint32_t partition); /* evicts while over the limit */
void memory_release(struct xkv_store *s, size_t bytes);
void item_retire(struct xkv_store *s, uint32_t partition, struct xkv_item *item);
/* Hands this thread's retired items to a grace period now, however few. */
void retire_flush(void);

/* evict.c: CLOCK over one partition */
int clock_evict(struct xkv_store *s, uint32_t partition);
_Atomic uint64_t *chain_victim(const struct xkv_store *s, struct xkv_bucket *buckets,
			       struct xkv_bucket *head);

/* The partition's table, as its writer sees it (writers alone replace it, in turn). */
static inline struct xkv_table *partition_table(struct xkv_partition *p)
{
	return atomic_load_explicit(&p->table, memory_order_relaxed);
}

/* An empty slot in the chain from head, linking a spare when every slot is taken; or NULL. */
_Atomic uint64_t *chain_free_slot(struct xkv_table *t, struct xkv_bucket *head);

/* grow.c: tables of 2^bits heads; whether one is due to double; doubling it. */
struct xkv_table *table_new(const struct xkv_store *s, uint32_t bits);
void table_free(struct xkv_table *t);
bool table_due(const struct xkv_store *s, struct xkv_partition *p, const struct xkv_table *t);
/* 0, or -ENOSPC (at its largest, or a chain would not fit) or -ENOMEM: the old table stays. */
int table_grow(struct xkv_store *s, struct xkv_partition *p);

#endif /* XKV_STORE_INTERNAL_H */
