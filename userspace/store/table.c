// SPDX-License-Identifier: MIT
/* The hash table: partitions of bucket chains, lock-free reads, one writer per partition. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "store/store_internal.h"

#define XKV_BUCKET_BITS_MAX 24
#define XKV_TABLE_START_BITS 4 /* a new partition's table: 16 heads, 1 KiB */

struct xkv_store *xkv_store_create(const struct xkv_store_config *cfg)
{
	uint32_t start = cfg->start_bits ? cfg->start_bits : XKV_TABLE_START_BITS;
	struct xkv_store *s;

	if (start > cfg->bucket_bits)
		start = cfg->bucket_bits;

	if (cfg->bucket_bits > XKV_BUCKET_BITS_MAX ||
	    cfg->overflow_buckets > UINT32_MAX / XKV_BUCKET_SLOTS - (1u << cfg->bucket_bits) ||
	    (cfg->mode != XKV_MODE_STORE && cfg->mode != XKV_MODE_CACHE)) {
		errno = EINVAL;
		return NULL;
	}
	s = aligned_alloc(XKV_CACHE_LINE, sizeof(*s));
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->max_bits = cfg->bucket_bits;
	s->max_spares = cfg->overflow_buckets;
	s->mode = cfg->mode;
	atomic_init(&s->limit, cfg->memory_limit);
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		struct xkv_table *t = table_new(s, start);

		if (!t)
			goto out_free_tables;
		atomic_init(&s->part[p].table, t);
	}
	return s;

out_free_tables:
	for (uint32_t p = 0; p < XKV_PARTITIONS && partition_table(&s->part[p]); p++)
		table_free(partition_table(&s->part[p]));
	free(s);
	errno = ENOMEM;
	return NULL;
}

void xkv_store_destroy(struct xkv_store *s)
{
	if (!s)
		return;
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		struct xkv_table *t = partition_table(&s->part[p]);

		for (uint32_t b = 0; b < t->nbuckets; b++) {
			for (int i = 0; i < XKV_BUCKET_SLOTS; i++) {
				uint64_t entry = atomic_load(&t->buckets[b].slot[i]);

				if (entry)
					item_free(slot_item(entry));
			}
		}
		table_free(t);
	}
	/* items unlinked earlier are still queued for a grace period */
	retire_flush();
	urcu_qsbr_barrier();
	free(s);
}

void xkv_store_prefetch(struct xkv_store *s, uint64_t hash)
{
	struct xkv_table *t = atomic_load_explicit(&s->part[xkv_partition(hash)].table,
						   memory_order_acquire);

	__builtin_prefetch(&t->buckets[hash & t->mask]);
}

static inline uint64_t load8(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

static inline uint32_t load4(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/*
 * Whether a and b, len bytes each, are equal. Up to 16 bytes, in place: two words that
 * overlap when the key is shorter than both, where a call to memcmp cost a GET some 19
 * instructions (callgrind). A key is never rewritten.
 */
static inline bool key_equal(const uint8_t *a, const uint8_t *b, uint32_t len)
{
	/* 8 to 16 bytes first, in one compare: the commonest keys */
	if (len - 8 <= 8)
		return ((load8(a) ^ load8(b)) | (load8(a + len - 8) ^ load8(b + len - 8))) == 0;
	if (len > 16)
		return memcmp(a, b, len) == 0;
	if (len >= 4)
		return ((load4(a) ^ load4(b)) | (load4(a + len - 4) ^ load4(b + len - 4))) == 0;
	for (uint32_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static inline __attribute__((always_inline)) bool
item_has_key(const struct xkv_item *item, const void *key, uint16_t key_len)
{
	return item_key_len(item) == key_len && key_equal(item_key(item), key, key_len);
}

/*
 * The slot holding key (tag: store_tag's, never 0) in the chain from head, or NULL.
 * Readers and the writer share it; inlined, as it is most of a GET.
 */
static inline __attribute__((always_inline)) _Atomic uint64_t *
chain_find(struct xkv_bucket *buckets, struct xkv_bucket *head, uint16_t tag, const void *key,
	   uint16_t key_len)
{
	for (struct xkv_bucket *b = head;;) {
		uint32_t next;

		for (int i = 0; i < XKV_BUCKET_SLOTS; i++) {
			uint64_t entry = atomic_load_explicit(&b->slot[i], memory_order_acquire);

			if (slot_tag(entry) == tag &&
			    item_has_key(slot_item(entry), key, key_len))
				return &b->slot[i];
		}
		next = atomic_load_explicit(&b->next, memory_order_acquire);
		if (!next)
			return NULL;
		b = &buckets[next];
	}
}

/*
 * A value a writer may rewrite in place while readers copy it: relaxed atomics on
 * the item's side, 8 bytes at a time (values are 8-byte aligned), so that a torn
 * copy is one the version rejects rather than a data race. The buffer's side is
 * plain. into_item is a constant wherever this is inlined.
 */
static inline void word_copy(uint8_t *item, uint8_t *buf, bool into_item)
{
	uint64_t w;

	if (into_item) {
		memcpy(&w, buf, 8);
		__atomic_store_n((uint64_t *)item, w, __ATOMIC_RELAXED);
	} else {
		w = __atomic_load_n((const uint64_t *)item, __ATOMIC_RELAXED);
		memcpy(buf, &w, 8);
	}
}

/* Inlined, into_item a constant: a call that tested it per word cost a GET 48 instructions. */
static inline __attribute__((always_inline)) void value_copy(uint8_t *value, uint8_t *buf,
							      uint32_t len, bool into_item)
{
	uint32_t i = 0;

	/* eight words a round: a 64-byte value in one */
	for (; i + 64 <= len; i += 64) {
#pragma GCC unroll 8
		for (uint32_t w = 0; w < 64; w += 8)
			word_copy(value + i + w, buf + i + w, into_item);
	}
	for (; i + 8 <= len; i += 8)
		word_copy(value + i, buf + i, into_item);
	for (; i < len; i++) {
		if (into_item)
			__atomic_store_n(value + i, buf[i], __ATOMIC_RELAXED);
		else
			buf[i] = __atomic_load_n(value + i, __ATOMIC_RELAXED);
	}
}

/*
 * get, and with copy false value_len: the same seqlock read, less the copy. Inlined,
 * so that get's copy is a constant.
 */
static inline __attribute__((always_inline)) int
lookup(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash, bool copy, void *buf,
       size_t cap, uint32_t *value_len, struct xkv_item_meta *meta)
{
	struct xkv_partition *p = &s->part[xkv_partition(hash)];
	uint16_t tag = store_tag(hash);

	for (;;) {
		/* a table replaced while we read stays whole until our next quiescent state */
		struct xkv_table *t = atomic_load_explicit(&p->table, memory_order_acquire);
		struct xkv_bucket *buckets = t->buckets, *head = &buckets[hash & t->mask];
		uint32_t version = atomic_load_explicit(&head->version, memory_order_acquire);
		_Atomic uint64_t *slot;
		struct xkv_item *item;
		uint32_t len;
		uint8_t access;
		int err;

		if (version & 1) { /* a writer is in this chain */
			caa_cpu_relax();
			continue;
		}

		slot = chain_find(buckets, head, tag, key, key_len);
		if (!slot) {
			if (meta)
				meta->ver = 0;
			err = -ENOENT;
			goto validate;
		}
		item = slot_item(atomic_load_explicit(slot, memory_order_acquire));
		if (!item) /* unlinked since chain_find: the version will have moved */
			continue;
		if (item_dead_in(s, p, item)) {
			/* a tombstone's version stays, for the directory's next write */
			if (meta)
				meta->ver = item_tombstone(item)
						    ? atomic_load_explicit(&item->ver,
									   memory_order_relaxed)
						    : 0;
			err = -ENOENT;
			goto validate;
		}
		access = atomic_load_explicit(&item->access, memory_order_relaxed);
		if (meta) {
			meta->flags = atomic_load_explicit(&item->flags, memory_order_relaxed);
			meta->exptime = atomic_load_explicit(&item->exptime, memory_order_relaxed);
			meta->cas = atomic_load_explicit(&item->cas, memory_order_relaxed);
			meta->ver = atomic_load_explicit(&item->ver, memory_order_relaxed);
			meta->fetched = access & ITEM_FETCHED;
			meta->footprint = (uint32_t)item_footprint(item);
		}
		/*
		 * Never beyond the capacity: set before the item was published, rewritten
		 * only to lengths that fit it (item_fits), in one store.
		 */
		len = item_value_len(item);
		*value_len = len;
		if (!copy) {
			err = 0;
			goto validate;
		}
		if (len > cap) {
			err = -ENOBUFS;
			goto validate;
		}
		/* too large to be rewritten in place: immutable since its slot's release */
		if (item_capacity(item) > XKV_REWRITE_MAX)
			memcpy(buf, item_value(item), len);
		else
			value_copy(item_value(item), buf, len, false);
		/* both bits in every mode: one compare with a constant, CLOCK or not */
		if (access != (ITEM_FETCHED | ITEM_REFERENCED))
			atomic_fetch_or_explicit(&item->access, ITEM_FETCHED | ITEM_REFERENCED,
						 memory_order_relaxed);
		err = 0;
validate:
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&head->version, memory_order_relaxed) == version)
			return err;
	}
}

int xkv_store_get(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		  void *buf, size_t cap, uint32_t *value_len)
{
	return lookup(s, key, key_len, hash, true, buf, cap, value_len, NULL);
}

int xkv_store_get_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		       void *buf, size_t cap, uint32_t *value_len, struct xkv_item_meta *meta)
{
	return lookup(s, key, key_len, hash, true, buf, cap, value_len, meta);
}

int xkv_store_value_len(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint32_t *value_len)
{
	return lookup(s, key, key_len, hash, false, NULL, 0, value_len, NULL);
}

int xkv_store_peek_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint32_t *value_len, struct xkv_item_meta *meta)
{
	return lookup(s, key, key_len, hash, false, NULL, 0, value_len, meta);
}

static bool key_len_valid(uint16_t key_len)
{
	return key_len >= XKV_KEY_MIN && key_len <= XKV_KEY_MAX;
}

/* 0, -EINVAL or -E2BIG: what put and item_new refuse alike. */
static int lengths_check(uint16_t key_len, uint32_t value_len)
{
	if (!key_len_valid(key_len))
		return -EINVAL;
	if (value_len > XKV_VALUE_MAX)
		return -E2BIG;
	return 0;
}

_Atomic uint64_t *chain_free_slot(struct xkv_table *t, struct xkv_bucket *head)
{
	struct xkv_bucket *b = head, *spare;
	uint32_t spare_index;

	for (;;) {
		for (int i = 0; i < XKV_BUCKET_SLOTS; i++)
			if (!atomic_load_explicit(&b->slot[i], memory_order_relaxed))
				return &b->slot[i];
		if (!b->next)
			break;
		b = &t->buckets[b->next];
	}
	/* the writer's alone (a load and a store), read by stats meanwhile: relaxed */
	spare_index = atomic_load_explicit(&t->overflow_next, memory_order_relaxed);
	if (spare_index == t->nbuckets)
		return NULL;
	atomic_store_explicit(&t->overflow_next, spare_index + 1, memory_order_relaxed);
	spare = &t->buckets[spare_index];
	spare->head = (uint32_t)(head - t->buckets);
	/* the spare is empty, so readers may see it linked before the item is stored */
	atomic_store_explicit(&b->next, spare_index, memory_order_release);
	return &spare->slot[0];
}

/* After a table doubled: where hash's chain starts now. */
static void table_follow(struct xkv_partition *p, uint64_t hash, struct xkv_table **t,
			 struct xkv_bucket **head)
{
	*t = partition_table(p);
	*head = &(*t)->buckets[hash & (*t)->mask];
}

/*
 * A slot for a new key in hash's chain, or NULL: the table doubles first when it is
 * due, and once more when the chain has no room left; *t and *head follow it.
 */
static _Atomic uint64_t *new_key_slot(struct xkv_store *s, struct xkv_partition *p,
				       uint64_t hash, struct xkv_table **t,
				       struct xkv_bucket **head)
{
	_Atomic uint64_t *slot;

	if (table_due(s, p, *t) && table_grow(s, p) == 0)
		table_follow(p, hash, t, head);
	slot = chain_free_slot(*t, *head);
	if (!slot && table_grow(s, p) == 0) {
		table_follow(p, hash, t, head);
		slot = chain_free_slot(*t, *head);
	}
	return slot;
}

/*
 * Links item, its bytes already reserved, under its key in place of any old item,
 * which it retires; put and install share it. On -ENOMEM (no slot) it frees item and
 * gives its bytes back. *old_len as install says.
 */
static int item_link(struct xkv_store *s, struct xkv_item *item, uint64_t hash,
		     int64_t *old_len)
{
	uint32_t partition = xkv_partition(hash);
	struct xkv_partition *p = &s->part[partition];
	struct xkv_table *t = partition_table(p);
	struct xkv_bucket *head = &t->buckets[hash & t->mask];
	uint16_t tag = store_tag(hash);
	struct xkv_item *old = NULL;
	_Atomic uint64_t *slot;
	int64_t replaced = -1;

	/* after the reservation: eviction may have moved things */
	slot = chain_find(t->buckets, head, tag, item_key(item), item_key_len(item));
	if (slot) {
		old = slot_item(atomic_load_explicit(slot, memory_order_relaxed));
		/* an expired or flushed value was already absent to every read */
		if (!item_dead(s, old))
			replaced = item_value_len(old);
	} else {
		slot = new_key_slot(s, p, hash, &t, &head);
	}
	if (!slot && s->mode == XKV_MODE_CACHE) {
		slot = chain_victim(s, t->buckets, head);
		old = slot_item(atomic_load_explicit(slot, memory_order_relaxed));
		counter_add(&p->evictions, 1);
		counter_add(&class_of(p, item_footprint(old))->evicted, 1);
	}
	if (!slot) {
		counter_add(&class_of(p, item_footprint(item))->outofmemory, 1);
		memory_release(s, item_footprint(item));
		item_free(item);
		return -ENOMEM;
	}

	atomic_store_explicit(&item->cas, partition_cas_next(s, partition), memory_order_relaxed);
	bucket_write_begin(head);
	/* release: a reader that finds the item sees it whole (item_new's plain copies) */
	atomic_store_explicit(slot, slot_pack(tag, item), memory_order_release);
	bucket_write_end(head);
	counter_add(&p->items, 1);
	class_count(p, item, 1);
	if (old)
		item_retire(s, partition, old);
	if (old_len)
		*old_len = replaced;
	return 0;
}

/*
 * put, put_meta and tombstone, inlined into each: put's meta is a constant NULL, and
 * tomb a constant, ITEM_TOMBSTONE for a tombstone (value_len 0), else 0.
 */
static inline __attribute__((always_inline)) int
put(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash, const void *value,
    uint32_t value_len, struct xkv_item_meta *meta, uint32_t tomb)
{
	uint32_t partition = xkv_partition(hash);
	uint32_t flags = meta ? meta->flags : 0, exptime = meta ? meta->exptime : 0;
	uint64_t ver = meta ? meta->ver : 0;
	struct xkv_table *t;
	struct xkv_bucket *head;
	_Atomic uint64_t *slot;
	struct xkv_item *item;
	size_t bytes;
	int err;

	err = lengths_check(key_len, value_len);
	if (err)
		return err;

	memory_repay(s, partition);
	t = partition_table(&s->part[partition]);
	head = &t->buckets[hash & t->mask];
	slot = chain_find(t->buckets, head, store_tag(hash), key, key_len);
	if (slot) {
		struct xkv_item *old = slot_item(atomic_load_explicit(slot, memory_order_relaxed));

		if (item_fits(old, value_len)) {
			bucket_write_begin(head);
			/* the caller's value is only read: into_item copies from it */
			value_copy(item_value(old), (uint8_t *)value, value_len, true);
			item_set_lengths(old, key_len, value_len | tomb);
			item_set_meta(old, flags, exptime, ver, partition_cas_next(s, partition));
			/* a new value, as if a new item: not fetched yet */
			atomic_fetch_and_explicit(&old->access, (uint8_t)~ITEM_FETCHED,
						  memory_order_relaxed);
			bucket_write_end(head);
			if (meta)
				meta->cas = atomic_load_explicit(&old->cas, memory_order_relaxed);
			return 0;
		}
	}

	/* reserved before the copy: a write that cannot be stored copies nothing */
	bytes = item_bytes(key_len, item_capacity_for(value_len));
	err = memory_reserve(s, partition, bytes);
	if (err)
		return err;
	item = item_new(key, key_len, value, value_len);
	if (!item) {
		memory_release(s, bytes);
		return -ENOMEM;
	}
	item_set_meta(item, flags, exptime, ver, 0);
	if (tomb) /* not published yet */
		item_set_lengths(item, key_len, tomb);
	err = item_link(s, item, hash, NULL);
	/* ours until our next quiescent state, even if replaced meanwhile */
	if (!err && meta)
		meta->cas = atomic_load_explicit(&item->cas, memory_order_relaxed);
	return err;
}

int xkv_store_put(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		  const void *value, uint32_t value_len)
{
	return put(s, key, key_len, hash, value, value_len, NULL, 0);
}

int xkv_store_put_meta(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		       const void *value, uint32_t value_len, struct xkv_item_meta *meta)
{
	return put(s, key, key_len, hash, value, value_len, meta, 0);
}

int xkv_store_tombstone(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
			uint64_t ver)
{
	struct xkv_item_meta meta = {.exptime = ITEM_TOMBSTONE_EXPTIME, .ver = ver};

	return put(s, key, key_len, hash, NULL, 0, &meta, ITEM_TOMBSTONE);
}

struct xkv_item *xkv_store_item_new(const void *key, uint16_t key_len, const void *value,
				    uint32_t value_len)
{
	int err = lengths_check(key_len, value_len);

	if (err) {
		errno = -err;
		return NULL;
	}
	return item_new(key, key_len, value, value_len);
}

void xkv_store_item_set_meta(struct xkv_item *item, const struct xkv_item_meta *meta)
{
	item_set_meta(item, meta->flags, meta->exptime, meta->ver, 0);
}

uint64_t xkv_store_item_cas(const struct xkv_item *item)
{
	return atomic_load_explicit(&item->cas, memory_order_relaxed);
}

void xkv_store_item_free(struct xkv_item *item)
{
	item_free(item);
}

int xkv_store_install(struct xkv_store *s, struct xkv_item *item, uint64_t hash,
		      int64_t *old_len)
{
	uint32_t partition = xkv_partition(hash);
	int err;

	memory_repay(s, partition);
	err = memory_reserve(s, partition, item_footprint(item));
	if (err) {
		item_free(item);
		return err;
	}
	return item_link(s, item, hash, old_len);
}

/* The writer's lookup of key for delete and touch: 0 with *head and *slot, -EINVAL, -ENOENT. */
static int writer_find(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		       struct xkv_bucket **head, _Atomic uint64_t **slot)
{
	struct xkv_table *t = partition_table(&s->part[xkv_partition(hash)]);

	if (!key_len_valid(key_len))
		return -EINVAL;
	*head = &t->buckets[hash & t->mask];
	*slot = chain_find(t->buckets, *head, store_tag(hash), key, key_len);
	return *slot ? 0 : -ENOENT;
}

int xkv_store_delete(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash)
{
	struct xkv_bucket *head;
	_Atomic uint64_t *slot;
	struct xkv_item *item;
	bool dead;
	int err = writer_find(s, key, key_len, hash, &head, &slot);

	if (err)
		return err;
	item = slot_item(atomic_load_explicit(slot, memory_order_relaxed));
	dead = item_dead(s, item);
	bucket_write_begin(head);
	atomic_store_explicit(slot, 0, memory_order_relaxed);
	bucket_write_end(head);
	item_retire(s, xkv_partition(hash), item);
	return dead ? -ENOENT : 0;
}

int xkv_store_touch(struct xkv_store *s, const void *key, uint16_t key_len, uint64_t hash,
		    uint32_t exptime, struct xkv_item_meta *meta)
{
	struct xkv_bucket *head;
	_Atomic uint64_t *slot;
	struct xkv_item *item;
	int err = writer_find(s, key, key_len, hash, &head, &slot);

	if (err)
		return err;
	item = slot_item(atomic_load_explicit(slot, memory_order_relaxed));
	if (item_dead(s, item))
		return -ENOENT;
	bucket_write_begin(head);
	atomic_store_explicit(&item->exptime, exptime, memory_order_relaxed);
	bucket_write_end(head);
	if (meta) {
		meta->flags = atomic_load_explicit(&item->flags, memory_order_relaxed);
		meta->exptime = exptime;
		meta->cas = atomic_load_explicit(&item->cas, memory_order_relaxed);
		meta->ver = atomic_load_explicit(&item->ver, memory_order_relaxed);
	}
	return 0;
}

void xkv_store_set_limit(struct xkv_store *s, size_t bytes)
{
	atomic_store_explicit(&s->limit, bytes, memory_order_relaxed);
}

void xkv_store_flush(struct xkv_store *s)
{
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		struct xkv_partition *part = &s->part[p];
		uint64_t last = atomic_load(&part->cas_last) | p;
		uint64_t floor = atomic_load(&part->flushed);

		/* a maximum: a concurrent flush that read an older CAS must not lower it */
		while (floor < last && !atomic_compare_exchange_weak(&part->flushed, &floor, last))
			;
	}
}

void xkv_store_get_class_stats(struct xkv_store *s,
			       struct xkv_store_class_stats cls[XKV_STORE_CLASSES])
{
	memset(cls, 0, sizeof(*cls) * XKV_STORE_CLASSES);
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		for (uint32_t c = 0; c < XKV_STORE_CLASSES; c++) {
			const struct xkv_class_counts *k = &s->part[p].classes[c];

			cls[c].items += atomic_load_explicit(&k->items, memory_order_relaxed);
			cls[c].bytes += atomic_load_explicit(&k->bytes, memory_order_relaxed);
			cls[c].evicted += atomic_load_explicit(&k->evicted, memory_order_relaxed);
			cls[c].outofmemory +=
			    atomic_load_explicit(&k->outofmemory, memory_order_relaxed);
		}
	}
}

void xkv_store_get_stats(struct xkv_store *s, struct xkv_store_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		st->items += atomic_load_explicit(&s->part[p].items, memory_order_relaxed);
		st->evictions += atomic_load_explicit(&s->part[p].evictions, memory_order_relaxed);
		struct xkv_table *t = atomic_load_explicit(&s->part[p].table, memory_order_acquire);

		st->overflow_used +=
		    atomic_load_explicit(&t->overflow_next, memory_order_relaxed) - (t->mask + 1);
		st->bucket_bytes += t->bytes;
	}
	st->bytes_used = atomic_load_explicit(&s->used, memory_order_relaxed);
	st->bytes_limit = atomic_load_explicit(&s->limit, memory_order_relaxed);
}

void xkv_store_thread_online(void)
{
	urcu_qsbr_register_thread();
}

void xkv_store_thread_offline(void)
{
	retire_flush();
	tsan_quiescent_state();
	urcu_qsbr_unregister_thread();
}

void xkv_store_quiescent(void)
{
	tsan_quiescent_state();
	urcu_qsbr_quiescent_state();
}

void xkv_store_thread_sleep(void)
{
	retire_flush();
	tsan_quiescent_state();
	urcu_qsbr_thread_offline();
}

void xkv_store_thread_wake(void)
{
	urcu_qsbr_thread_online();
}
