/* SPDX-License-Identifier: MIT */
/*
 * The xkv store: MICA-style partitions of cache-line buckets.
 *
 * Concurrency contract (docs/DESIGN.md invariants 1 and 2):
 *  - At most one thread at a time writes a partition (xkv_partition(hash)): calls
 *    put, install or delete for its keys. The writer may change (dcrew moves a
 *    partition between workers), but a new writer must happen-after the previous
 *    writer's last call: a release by the one paired with an acquire by the other
 *    (static steering is the trivial case). The store does not lock; the caller
 *    guarantees it. That order alone covers the partition's writer state, all read
 *    and written with plain or relaxed accesses: the bucket versions (begin/end are
 *    a load then a store), the table's next spare and a spare's head, the CLOCK hand,
 *    the items and evictions counters, and everything a put does in the partition
 *    on its way: eviction, repaying a loan, growing the table.
 *  - Any thread may call get at any time. Readers never block and never see a torn
 *    value: each bucket has a version that writers make odd while they change it,
 *    and readers retry when it moved.
 *  - Tables grow the same way: a writer publishes a larger copy of its partition's
 *    table, readers of the old one finish undisturbed, and it is freed after them.
 *  - Items carry what memcached clients keep beside a value, and a coherence
 *    directory's version (struct xkv_item_meta), read under the same version as the
 *    value. An item that expired, or was stored
 *    before a flush (xkv_store_flush), is absent for every read; its partition's
 *    writer unlinks it when it meets it (a write to its key, delete, CLOCK).
 *  - Item memory is reclaimed with quiescent-state-based RCU (liburcu QSBR): every
 *    thread that calls into the store must be online (xkv_store_thread_online) and
 *    must announce a quiescent state (xkv_store_quiescent) between requests, and go
 *    offline before it blocks. A freed item stays readable until then.
 */
#ifndef XKV_STORE_H
#define XKV_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <xkv/item.h>

enum xkv_store_mode {
	XKV_MODE_STORE, /* full: a write that needs memory fails with -ENOMEM */
	XKV_MODE_CACHE, /* full: evict (CLOCK) within the writer's partition, see put */
};

struct xkv_store_config {
	size_t memory_limit;	   /* item bytes (header + key + value capacity) */
	enum xkv_store_mode mode;
	uint32_t bucket_bits;	   /* log2 of the head buckets a partition's table grows to */
	uint32_t overflow_buckets; /* spare buckets for chains in a table that large */
	uint32_t start_bits;	   /* log2 of the head buckets a table starts with; 0: 4 */
};

struct xkv_store_stats {
	uint64_t items;
	uint64_t bytes_used;	   /* counted at insert and unlink, see xkv_store_create */
	uint64_t bytes_limit;
	uint64_t evictions;
	uint64_t overflow_used;	   /* spare buckets linked into chains */
	uint64_t bucket_bytes;	   /* the partitions' tables, as large as they have grown */
};

/*
 * Items by their footprint (header, key and value capacity, as bytes_used counts
 * them): class c holds those of 2^(c-1) to 2^c - 1 bytes, as xkv_size_class gives it.
 * memcached's `stats items` and `stats slabs` report them where memcached reports its
 * slab classes (docs/MEMCACHED.md).
 */
#define XKV_STORE_CLASSES 22 /* the largest item, a 1 MiB value and a 250-byte key, is in 21 */

struct xkv_store_class_stats {
	uint64_t items;
	uint64_t bytes;
	uint64_t evicted;
	uint64_t outofmemory; /* items refused for want of memory (or of a slot, store mode) */
};

struct xkv_store;

/*
 * Returns a store or NULL with errno set. Memory is accounted when an item is
 * linked or unlinked; the bytes of an unlinked item go back to the budget at once,
 * though free() waits for the grace period. The overshoot is bounded by what
 * readers hold between two quiescent states.
 */
struct xkv_store *xkv_store_create(const struct xkv_store_config *cfg);

/* No thread may use the store any more. The caller must be online. */
void xkv_store_destroy(struct xkv_store *s);

/*
 * Copies the value of key into buf. Returns 0, -ENOENT, or -ENOBUFS when cap is
 * smaller than the value (nothing copied). *value_len is set on 0 and -ENOBUFS.
 * hash is xkv_hash(key, key_len).
 */
int xkv_store_get(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		  void *buf, size_t cap, uint32_t *value_len);

/*
 * Like xkv_store_get, also filling *meta (unless NULL) on 0 and -ENOBUFS; on -ENOENT,
 * meta->ver only: a tombstone's (xkv_store_tombstone), else 0.
 */
int xkv_store_get_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		       void *buf, size_t cap, uint32_t *value_len, struct xkv_item_meta *meta);

/*
 * Inserts or overwrites. Returns 0, -EINVAL (key length), -E2BIG (value over
 * XKV_VALUE_MAX) or -ENOMEM (store mode full, or bucket chain full).
 *
 * Cache mode evicts only within the key's partition (the writer owns no other).
 * A write to a partition with nothing left to evict borrows up to 1/8 of the
 * limit; while the store is over its limit, every write evicts items of its own
 * partition to pay it back. Only a write that fits neither gets -ENOMEM: its
 * partition, emptied, cannot hold the new item, and the loans outstanding already
 * reach limit / 8. So size the limit against the 256 partitions: a partition's share,
 * limit / 256, should hold two items of the mean size (24 bytes, the key padded to 8,
 * the value rounded up to 8) and the largest item should be well under limit / 8.
 * Below one item a share, puts are refused often: values of 16 B to 1 KiB
 * (~550-byte items) got -ENOMEM on 17 % of puts in 96 KiB, none in 256 KiB
 * (test_store.c, cache_mode_refuses_puts_only_when_partitions_hold_under_two_items).
 *
 * A new key may first double the partition's table (once it holds 5 items per head
 * bucket, or its chain is full), up to 2^bucket_bits heads: the table is rehashed
 * by each item's key (hash must be xkv_hash of it), published, and then the call
 * waits one grace period for readers of the old table. Every other thread must
 * keep announcing quiescent states (or be offline), as the contract says.
 */
int xkv_store_put(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		  const void *value, uint32_t value_len);

/*
 * Like xkv_store_put, with flags, exptime and ver from *meta (NULL: 0, 0, 0); sets
 * meta->cas to the new version's CAS on 0. Every write gives its item a new CAS,
 * put's too.
 */
int xkv_store_put_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		       const void *value, uint32_t value_len, struct xkv_item_meta *meta);

/*
 * The writer only: sets key's exptime, keeping its value, flags, CAS and ver (as memcached's
 * touch does); fills *meta (unless NULL) with the result. 0 or -ENOENT.
 */
int xkv_store_touch(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		    uint32_t exptime, struct xkv_item_meta *meta);

/*
 * Any thread: every item stored so far becomes absent (memcached's flush_all). It
 * unlinks nothing, so it writes no partition: it raises each partition's floor to the
 * last CAS the partition handed out, and reads compare an item's CAS against it.
 */
void xkv_store_flush(struct xkv_store *s);

/*
 * Any thread: the memory limit (xkv_store_config.memory_limit) becomes bytes from the
 * next write on (memcached's cache_memlimit). Lowered below what items hold, nothing is
 * freed at once: in cache mode each write evicts in its partition until the store is
 * under the limit, in store mode writes are refused until deletes bring it there. The
 * tables stay as large as they were made: their bucket_bits bound the items they hold.
 */
void xkv_store_set_limit(struct xkv_store *s, size_t bytes);

/*
 * The store's clock, in seconds of CLOCK_REALTIME: exptimes are compared with it. It
 * is alone in store/clock.c, so that a test can move it (tests/unit/store_clock.h).
 */
uint32_t xkv_store_now(const struct xkv_store *s);

/*
 * A write in two halves, for a thread that is not the partition's writer: it builds
 * the item (the copy of a large value), and the writer only links it in.
 */
struct xkv_item;

/*
 * Any thread, online or not, no partition needed: allocates an item holding key and
 * value. NULL with errno EINVAL (key length), E2BIG (value over XKV_VALUE_MAX) or
 * ENOMEM. Nothing is accounted against the memory limit until it is installed.
 */
struct xkv_item *xkv_store_item_new(const void *key, uint16_t key_len, const void *value,
				    uint32_t value_len);

/* Before install: the item's flags, exptime and ver (item_new leaves them 0). */
void xkv_store_item_set_meta(struct xkv_item *item, const struct xkv_item_meta *meta);

/*
 * The CAS install gave item: the writer, after install returned 0 and before its next
 * quiescent state (the item may be retired, but not freed, by then).
 */
uint64_t xkv_store_item_cas(const struct xkv_item *item);

/* Frees an item that was never installed. */
void xkv_store_item_free(struct xkv_item *item);

/*
 * The partition's writer only: links item under its key, as put links a new item
 * (memory, eviction, growth and errors alike; hash is xkv_hash of the item's key).
 * It never rewrites the old item in place, which would keep the bucket's version odd
 * for the whole copy: the old item is unlinked and retired. Takes item in every case,
 * freeing it on -ENOMEM. On 0, *old_len (unless NULL) is the replaced value's length,
 * or -1 if the key was absent (an expired or flushed value was).
 */
int xkv_store_install(struct xkv_store *s, struct xkv_item *item, uint64_t hash,
		      int64_t *old_len);

/*
 * The length of key's value, for a writer's bookkeeping: 0 or -ENOENT. Any thread,
 * like get, but copies nothing and does not count as a read (CLOCK, fetched).
 */
int xkv_store_value_len(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint32_t *value_len);
/* The same, with the item's meta as xkv_store_get_meta fills it (memcached's me). */
int xkv_store_peek_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint32_t *value_len, struct xkv_item_meta *meta);

/*
 * Starts loading the head bucket of hash's chain into the cache, for a caller that
 * knows a batch's keys before it serves them (MICA's prefetch). Never faults.
 */
void xkv_store_prefetch(struct xkv_store *s, uint64_t hash);

/*
 * The writer only: key becomes absent for every read, as after delete, but keeps an
 * item without a value that remembers ver, a coherence directory's version of the
 * deletion (docs/DIRECTORY.md), so that an older write arriving later is known for one
 * (xkv_store_get_meta reports it). It counts as an item, and CLOCK takes it first, as
 * it takes expired ones. 0, or -ENOMEM as put.
 */
int xkv_store_tombstone(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint64_t ver);

/* Returns 0 or -ENOENT (an expired or flushed item is unlinked, and -ENOENT too). */
int xkv_store_delete(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash);

void xkv_store_get_stats(struct xkv_store *s, struct xkv_store_stats *stats);
/* Each class's counts now, summed over the partitions as their writers left them. */
void xkv_store_get_class_stats(struct xkv_store *s,
			       struct xkv_store_class_stats cls[XKV_STORE_CLASSES]);

/* Items freed after their grace period so far, in this process (every store). */
uint64_t xkv_store_reclaimed(void);

/* Reclamation: see the contract above. */
void xkv_store_thread_online(void);  /* once per thread, before its first call */
void xkv_store_thread_offline(void); /* once per thread, after its last call */
void xkv_store_quiescent(void);	     /* between requests: holds no item pointer */
void xkv_store_thread_sleep(void);   /* before blocking: grace periods go on without us */
void xkv_store_thread_wake(void);    /* after blocking, before the next call */

#endif /* XKV_STORE_H */
