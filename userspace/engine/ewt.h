/* SPDX-License-Identifier: MIT */
/*
 * The Exclusive Writer Table from userspace (include/xkv/ewt.h has the word): the
 * xkv_ewt map, mmapped, changed with the same compare-and-swap on the same words
 * as XDP's (bpf/steer.h).
 *
 * Why a new owner sees everything its predecessor wrote: the predecessor lets its
 * last write go with a release CAS (xkv_ewt_release), after its last store call.
 * XDP's CAS that gives the slot to the next owner is a read-modify-write, so it
 * continues that release sequence; the next owner's acquire load in xkv_ewt_holds
 * reads XDP's value (or a later one of the same sequence) and so synchronizes with
 * the release. The packet's path through the XSK ring orders it again; the store
 * relies on this one (userspace/store/store.h, the writer hand-over).
 */
#ifndef XKV_ENGINE_EWT_H
#define XKV_ENGINE_EWT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <xkv/ewt.h>

static inline uint64_t *xkv_ewt_word_of(struct xkv_ewt_slot *ewt, uint32_t partition)
{
	return (uint64_t *)&ewt[xkv_ewt_slot_of(partition)];
}

/* Whether worker holds partition's slot: checked before the first store call of a write. */
static inline bool xkv_ewt_holds(struct xkv_ewt_slot *ewt, uint32_t partition, uint32_t worker)
{
	uint64_t word = __atomic_load_n(xkv_ewt_word_of(ewt, partition), __ATOMIC_ACQUIRE);

	return xkv_ewt_writes(word) && xkv_ewt_owner(word) == worker;
}

/*
 * Lets n of worker's writes to partition go, once applied and answered. Returns 0,
 * or -EPERM (nothing changed) when worker does not hold n writes there.
 */
static inline int xkv_ewt_release(struct xkv_ewt_slot *ewt, uint32_t partition, uint32_t worker,
				  uint32_t n)
{
	uint64_t *word = xkv_ewt_word_of(ewt, partition);
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);

	do {
		if (xkv_ewt_owner(old) != worker || xkv_ewt_writes(old) < n || !n)
			return -EPERM;
	} while (!__atomic_compare_exchange_n(word, &old, xkv_ewt_released(old, n), true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	return 0;
}

/*
 * What XDP does for a write, from userspace (a hand-off between workers, or a test
 * playing XDP): joins the slot's owner, or takes the slot for candidate when it is
 * free. Returns the worker that now holds one more write, or -EBUSY when tries
 * attempts found it full or lost the CAS.
 */
static inline int xkv_ewt_join(struct xkv_ewt_slot *ewt, uint32_t partition, uint32_t candidate,
			       unsigned tries)
{
	uint64_t *word = xkv_ewt_word_of(ewt, partition);
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED), next;

	for (unsigned i = 0; i < tries; i++) {
		next = xkv_ewt_joined(old, candidate);
		if (!next) {
			old = __atomic_load_n(word, __ATOMIC_RELAXED);
			continue;
		}
		/* acquire too, for a taker that writes next; a failed CAS reloads old */
		if (__atomic_compare_exchange_n(word, &old, next, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return (int)xkv_ewt_target(old, candidate);
	}
	return -EBUSY;
}

#endif /* XKV_ENGINE_EWT_H */
