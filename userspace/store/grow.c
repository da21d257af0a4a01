// SPDX-License-Identifier: MIT
/*
 * A partition's table: mapped small, and replaced by its writer with one twice as
 * large once it holds XKV_GROW_LOAD items per head bucket or a chain runs out of
 * spares, up to the size the store was created for.
 */
#include <errno.h>
#include <sys/mman.h>

#include "store/store_internal.h"

#define XKV_GROW_LOAD 5 /* items per head bucket (of 7 slots) before a table doubles */

#define XKV_SPARES_MIN 16 /* a small table still lets a few chains grow long */

/* Spares in proportion to the heads, as the config gives them at full size; a few at least. */
static uint32_t spares_for(const struct xkv_store *s, uint32_t bits)
{
	uint32_t spares = s->max_spares >> (s->max_bits - bits);

	if (spares < XKV_SPARES_MIN)
		spares = s->max_spares < XKV_SPARES_MIN ? s->max_spares : XKV_SPARES_MIN;
	return spares;
}

struct xkv_table *table_new(const struct xkv_store *s, uint32_t bits)
{
	uint32_t heads = 1u << bits, nbuckets = heads + spares_for(s, bits);
	size_t bytes = sizeof(struct xkv_table) + (size_t)nbuckets * sizeof(struct xkv_bucket);
	struct xkv_table *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	t->bits = bits;
	t->mask = heads - 1;
	t->nbuckets = nbuckets;
	atomic_init(&t->overflow_next, heads); /* 0 ends a chain: a spare is never bucket 0 */
	t->bytes = bytes;
	return t;
}

void table_free(struct xkv_table *t)
{
	munmap(t, t->bytes);
}

bool table_due(const struct xkv_store *s, struct xkv_partition *p, const struct xkv_table *t)
{
	return t->bits < s->max_bits &&
	       atomic_load_explicit(&p->items, memory_order_relaxed) >= (uint64_t)XKV_GROW_LOAD
									  << t->bits;
}

int table_grow(struct xkv_store *s, struct xkv_partition *p)
{
	struct xkv_table *old = atomic_load_explicit(&p->table, memory_order_relaxed), *t;

	if (old->bits == s->max_bits)
		return -ENOSPC;
	t = table_new(s, old->bits + 1);
	if (!t)
		return -ENOMEM;
	/* the new table is the writer's alone until published: no versions needed */
	for (uint32_t b = 0; b < old->nbuckets; b++) {
		for (int i = 0; i < XKV_BUCKET_SLOTS; i++) {
			uint64_t entry = atomic_load_explicit(&old->buckets[b].slot[i],
							      memory_order_relaxed);
			struct xkv_item *item = slot_item(entry);
			_Atomic uint64_t *slot;
			uint64_t hash;

			if (!entry)
				continue;
			hash = xkv_hash(item_key(item), item_key_len(item));
			slot = chain_free_slot(t, &t->buckets[hash & t->mask]);
			if (!slot) { /* a chain longer than the spares allow: stay as we are */
				table_free(t);
				return -ENOSPC;
			}
			atomic_store_explicit(slot, entry, memory_order_relaxed);
		}
	}
	atomic_store_explicit(&p->table, t, memory_order_release);
	/*
	 * Readers that loaded the old table go on reading it, unchanged, until their
	 * next quiescent state; an item rewritten in place now would tear under a
	 * version they do not watch, so wait for them before going on.
	 */
	grace_period_wait();
	table_free(old);
	return 0;
}
