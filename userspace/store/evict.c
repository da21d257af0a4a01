// SPDX-License-Identifier: MIT
/* CLOCK eviction for cache mode, always within the writer's own partition. */
#include <errno.h>

#include "store/store_internal.h"

static struct xkv_bucket *chain_head(struct xkv_table *t, uint32_t index)
{
	return index <= t->mask ? &t->buckets[index] : &t->buckets[t->buckets[index].head];
}

/*
 * One referenced bit per item: the hand clears it on its first pass and evicts on the
 * next. An expired or flushed item goes first, referenced or not.
 */
static bool clock_spares(const struct xkv_store *s, struct xkv_item *item)
{
	if (!(atomic_load_explicit(&item->access, memory_order_relaxed) & ITEM_REFERENCED) ||
	    item_dead(s, item))
		return false;
	atomic_fetch_and_explicit(&item->access, (uint8_t)~ITEM_REFERENCED, memory_order_relaxed);
	return true;
}

int clock_evict(struct xkv_store *s, uint32_t partition)
{
	struct xkv_partition *p = &s->part[partition];
	struct xkv_table *t = partition_table(p);
	uint32_t total = t->nbuckets * XKV_BUCKET_SLOTS;

	/* two sweeps: the first may only clear referenced bits */
	for (uint32_t step = 0; step < 2 * total; step++) {
		uint32_t hand = t->clock_hand;
		struct xkv_bucket *b = &t->buckets[hand / XKV_BUCKET_SLOTS];
		_Atomic uint64_t *slot = &b->slot[hand % XKV_BUCKET_SLOTS];
		uint64_t entry = atomic_load_explicit(slot, memory_order_relaxed);
		struct xkv_bucket *head;

		t->clock_hand = hand + 1 == total ? 0 : hand + 1;
		if (!entry || clock_spares(s, slot_item(entry)))
			continue;

		head = chain_head(t, hand / XKV_BUCKET_SLOTS);
		bucket_write_begin(head);
		atomic_store_explicit(slot, 0, memory_order_relaxed);
		bucket_write_end(head);
		counter_add(&p->evictions, 1);
		counter_add(&class_of(p, item_footprint(slot_item(entry)))->evicted, 1);
		item_retire(s, partition, slot_item(entry));
		return 0;
	}
	return -ENOMEM;
}

/* A full chain in cache mode gives up one of its own items: the first not referenced. */
_Atomic uint64_t *chain_victim(const struct xkv_store *s, struct xkv_bucket *buckets,
			       struct xkv_bucket *head)
{
	for (struct xkv_bucket *b = head;; b = &buckets[b->next]) {
		for (int i = 0; i < XKV_BUCKET_SLOTS; i++) {
			uint64_t entry = atomic_load_explicit(&b->slot[i], memory_order_relaxed);

			if (entry && !clock_spares(s, slot_item(entry)))
				return &b->slot[i];
		}
		if (!b->next)
			break;
	}
	/* everything was referenced and is now cleared: take the first */
	return &head->slot[0];
}
