/* SPDX-License-Identifier: MIT */
/*
 * A lock-free ring of pointers from one producer thread to one consumer thread, for
 * hand-offs between workers (one ring per ordered pair).
 *
 * Lamport's ring with cached indices: each side owns its index, on its own cache
 * line beside its copy of the other side's index, and reads the other's line only
 * when its copy says the ring is full (producer) or empty (consumer). The slots are
 * plain pointers ordered by the indices' release stores and acquire loads.
 *
 * Indices run free in 64 bits and are reduced by the mask only to index a slot: they
 * never wrap in practice (2^64 pushes at 10^9 a second take 584 years), so tail -
 * head is always the fill.
 */
#ifndef XKV_SPSC_H
#define XKV_SPSC_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define XKV_SPSC_LINE 64

/* Embeddable; memory that holds one must be 64-byte aligned (aligned_alloc, not malloc). */
struct xkv_spsc {
	alignas(XKV_SPSC_LINE) _Atomic uint64_t tail; /* next slot to push: the producer's */
	uint64_t head_cache;			      /* the producer's copy of head */
	alignas(XKV_SPSC_LINE) _Atomic uint64_t head; /* next slot to pop: the consumer's */
	uint64_t tail_cache;			      /* the consumer's copy of tail */
	alignas(XKV_SPSC_LINE) void **slots;	      /* read-only after init, as is mask */
	uint64_t mask;
};

/* capacity: a power of two. Allocates the slots; 0, -EINVAL or -ENOMEM. */
int xkv_spsc_init(struct xkv_spsc *q, uint32_t capacity);

void xkv_spsc_fini(struct xkv_spsc *q);

/* Producer only. item must not be NULL (pop's answer for empty). False: full. */
static inline bool xkv_spsc_push(struct xkv_spsc *q, void *item)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	if (tail - q->head_cache > q->mask) {
		/* acquire: the consumer has read the slot we are about to reuse */
		q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
		if (tail - q->head_cache > q->mask)
			return false;
	}
	q->slots[tail & q->mask] = item;
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	return true;
}

/* Consumer only. NULL: empty. */
static inline void *xkv_spsc_pop(struct xkv_spsc *q)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	void *item;

	if (head == q->tail_cache) {
		/* acquire: the slot's pointer, and what it points to, are the producer's */
		q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
		if (head == q->tail_cache)
			return NULL;
	}
	item = q->slots[head & q->mask];
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
	return item;
}

/* Consumer only: whether pop would find nothing; reads the producer's line only if so. */
static inline bool xkv_spsc_empty(const struct xkv_spsc *q)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);

	return head == q->tail_cache &&
	       head == atomic_load_explicit(&q->tail, memory_order_acquire);
}

#endif /* XKV_SPSC_H */
