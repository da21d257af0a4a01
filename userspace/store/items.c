// SPDX-License-Identifier: MIT
/* Item memory: allocation, the memory budget, and reclamation after readers let go. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

_Static_assert(sizeof(struct xkv_item) + XKV_KEY_MAX + 8 + XKV_VALUE_MAX + 8 <
		       1u << (XKV_STORE_CLASSES - 1),
	       "every item's footprint has its class");

uint32_t item_capacity_for(uint32_t value_len)
{
	return (value_len + 7) & ~7u;
}

size_t item_bytes(uint16_t key_len, uint32_t capacity)
{
	return sizeof(struct xkv_item) + item_key_space(key_len) + capacity;
}

struct xkv_item *item_new(const void *key, uint16_t key_len, const void *value,
			  uint32_t value_len)
{
	uint32_t capacity = item_capacity_for(value_len);
	struct xkv_item *item = malloc(item_bytes(key_len, capacity));

	if (!item)
		return NULL;
	/* a slot keeps 48 address bits next to the tag */
	if ((uintptr_t)item & ~XKV_SLOT_PTR_MASK) {
		free(item);
		errno = ENOMEM;
		return NULL;
	}
	item_set_lengths(item, key_len, value_len);
	item->capacity[0] = (uint8_t)capacity;
	item->capacity[1] = (uint8_t)(capacity >> 8);
	item->capacity[2] = (uint8_t)(capacity >> 16);
	atomic_init(&item->access, 0);
	item_set_meta(item, 0, 0, 0, 0); /* item_link gives it its CAS */
	memcpy(item->data, key, key_len);
	/* not published yet: plain copies, ordered before readers by the slot's release */
	if (value_len)
		memcpy(item_value(item), value, value_len);
	return item;
}

void item_free(struct xkv_item *item)
{
	free(item);
}

#define XKV_RETIRE_BATCH 64

/*
 * Items a thread has unlinked, freed together after one grace period: one rcu_head
 * for many items, so that items need none. A thread holds at most one batch; it
 * goes to liburcu when full, and before the thread blocks or leaves.
 */
struct retire_batch {
	struct rcu_head rcu;
	uint32_t n;
	struct xkv_item *items[XKV_RETIRE_BATCH];
};

#ifdef __SANITIZE_THREAD__
char grace_period_token;
#endif

static _Thread_local struct retire_batch *retiring;
static _Atomic uint64_t reclaimed; /* items freed so far */

static void batch_free_rcu(struct rcu_head *head)
{
	struct retire_batch *b = caa_container_of(head, struct retire_batch, rcu);

	tsan_grace_period_ended();
	for (uint32_t i = 0; i < b->n; i++)
		item_free(b->items[i]);
	atomic_fetch_add_explicit(&reclaimed, b->n, memory_order_relaxed);
	free(b);
}

void retire_flush(void)
{
	if (!retiring)
		return;
	urcu_qsbr_call_rcu(&retiring->rcu, batch_free_rcu);
	retiring = NULL;
}

uint64_t xkv_store_reclaimed(void)
{
	return atomic_load_explicit(&reclaimed, memory_order_relaxed);
}

/*
 * Takes bytes from the shared budget. In cache mode a full budget makes the
 * partition's own CLOCK hand evict: a writer only ever unlinks items of the
 * partition it writes, so eviction is part of that partition's write and needs no
 * more than the contract's hand-over (store.h) to see the hand and counters the
 * previous writer left. A partition with nothing left to evict may borrow up to
 * 1/XKV_CACHE_SLACK of the limit; writers of other partitions pay it back
 * (memory_repay) on their next writes, each evicting in its own partition. The
 * budget itself is the one word all partitions share: a CAS.
 */
int memory_reserve(struct xkv_store *s, uint32_t partition, size_t bytes)
{
	size_t used = atomic_load_explicit(&s->used, memory_order_relaxed);
	bool can_evict = s->mode == XKV_MODE_CACHE;

	for (;;) {
		size_t limit = atomic_load_explicit(&s->limit, memory_order_relaxed);

		if (used + bytes > limit && can_evict) {
			can_evict = clock_evict(s, partition) == 0;
			if (can_evict) {
				used = atomic_load_explicit(&s->used, memory_order_relaxed);
				continue;
			}
		}
		if (used + bytes > limit && s->mode == XKV_MODE_CACHE)
			limit += limit / XKV_CACHE_SLACK;
		if (used + bytes > limit) {
			counter_add(&class_of(&s->part[partition], bytes)->outofmemory, 1);
			return -ENOMEM;
		}
		if (atomic_compare_exchange_weak_explicit(&s->used, &used, used + bytes,
							  memory_order_relaxed, memory_order_relaxed))
			return 0;
	}
}

void memory_repay(struct xkv_store *s, uint32_t partition)
{
	if (s->mode != XKV_MODE_CACHE)
		return;
	while (atomic_load_explicit(&s->used, memory_order_relaxed) >
	       atomic_load_explicit(&s->limit, memory_order_relaxed))
		if (clock_evict(s, partition))
			return;
}

void memory_release(struct xkv_store *s, size_t bytes)
{
	atomic_fetch_sub_explicit(&s->used, bytes, memory_order_relaxed);
}

/* The item is already unlinked; readers that found it before keep it until they pass a quiescent state. */
void item_retire(struct xkv_store *s, uint32_t partition, struct xkv_item *item)
{
	memory_release(s, item_footprint(item));
	counter_add(&s->part[partition].items, -1);
	class_count(&s->part[partition], item, -1);
	if (!retiring) {
		retiring = malloc(sizeof(*retiring));
		if (!retiring) { /* no batch to wait in: wait here */
			grace_period_wait();
			item_free(item);
			atomic_fetch_add_explicit(&reclaimed, 1, memory_order_relaxed);
			return;
		}
		retiring->n = 0;
	}
	retiring->items[retiring->n++] = item;
	if (retiring->n == XKV_RETIRE_BATCH)
		retire_flush();
}
