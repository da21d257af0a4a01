/* SPDX-License-Identifier: MIT */
/*
 * The Exclusive Writer Table (C-4's EWT; docs/DESIGN.md, "The Exclusive Writer
 * Table"): which worker may write a partition right now under `dcrew`, and how
 * many of its writes are outstanding. XDP takes or joins a slot when it steers a
 * write; the worker releases it once the write is applied and answered. Both sides
 * change a slot only by compare-and-swap on its one 64-bit word, so that owner and
 * count always move together: XDP can never add a write to a worker that is just
 * letting the slot go.
 *
 * Direct-mapped (slot = partition % XKV_EWT_SLOTS): two partitions that share a
 * slot share its owner, which is always safe. Open addressing is not: two CPUs
 * probing at once could claim two slots for one partition.
 *
 * The functions below compute the next word; the CAS itself is the caller's
 * (bpf/steer.h with BPF's fully ordered __sync builtin, userspace/engine/ewt.h with
 * C11 atomics).
 */
#ifndef XKV_EWT_H
#define XKV_EWT_H

#include <linux/types.h>
#include "hash.h"
#include "maps.h"

#define XKV_EWT_SLOTS	   XKV_PARTITIONS /* one per partition: no partition shares an owner */
#define XKV_EWT_TRIES	   4		  /* CAS attempts XDP makes before a counted drop */
#define XKV_EWT_WRITES_MAX 0xffffu	  /* a slot this full takes no more writes */
#define XKV_EWT_HEALING	   (1ULL << 48)	  /* the word's healing field set */

/*
 * One slot, as bpftool shows it. Empty is all zero: a release that takes the last
 * write clears the owner too. The CAS word is the whole struct, read as a __u64.
 */
struct xkv_ewt_slot {
	__u32 owner;   /* the worker whose writes to the partition are outstanding */
	__u16 writes;  /* steered to it and not yet released; 0: the slot is free */
	__u16 healing; /* 1: its owner counts the holds it never got; no write joins */
};

_Static_assert(sizeof(struct xkv_ewt_slot) == 8, "an EWT slot is one 64-bit CAS word");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xkv_ewt_word packs owner in the low half: the struct's first field on little-endian"
#endif

/* XDP's counters of the table, per CPU (xkv_ewt_stats): what steering did with writes. */
struct xkv_ewt_counters {
	__u64 taken;	 /* writes that found their slot free and took it */
	__u64 joined;	 /* writes that found it held and went to its owner (conflicts) */
	__u64 cas_retry; /* CAS attempts lost to another CPU or a release */
	__u64 dropped;	 /* writes dropped after XKV_EWT_TRIES (also stats' ewt_busy) */
};

static __always_inline __u32 xkv_ewt_slot_of(__u32 partition)
{
	return partition % XKV_EWT_SLOTS;
}

static __always_inline __u64 xkv_ewt_word(__u32 owner, __u32 writes)
{
	return (__u64)writes << 32 | owner;
}

static __always_inline __u32 xkv_ewt_owner(__u64 word)
{
	return (__u32)word;
}

static __always_inline __u32 xkv_ewt_writes(__u64 word)
{
	return (__u32)(word >> 32) & XKV_EWT_WRITES_MAX;
}

static __always_inline int xkv_ewt_healing(__u64 word)
{
	return (word & XKV_EWT_HEALING) != 0;
}

/*
 * The worker a write goes to: the slot's owner while it holds writes, else the
 * candidate steering chose.
 */
static __always_inline __u32 xkv_ewt_target(__u64 word, __u32 candidate)
{
	return xkv_ewt_writes(word) ? xkv_ewt_owner(word) : candidate;
}

/*
 * The word after one more write to xkv_ewt_target(word, candidate); 0 if the slot is
 * full or healing (its owner is counting what it holds: the count must not grow).
 */
static __always_inline __u64 xkv_ewt_joined(__u64 word, __u32 candidate)
{
	__u32 writes = xkv_ewt_writes(word);

	if (!writes)
		return xkv_ewt_word(candidate, 1);
	if (writes >= XKV_EWT_WRITES_MAX || xkv_ewt_healing(word))
		return 0;
	return xkv_ewt_word(xkv_ewt_owner(word), writes + 1);
}

/*
 * Whether XDP claims the slot for a request (a write's op, frag_len and value_len),
 * decided by the request alone, so that its worker knows whether a hold was counted
 * for it (roles may change between the two, and a worker must never release a hold
 * it was not given). dcrew: every write, each piece of a PUT too. xkv: a write in one
 * datagram only; a PUT in pieces claims its slot from userspace once it is whole.
 */
static __always_inline int xkv_ewt_claimed(__u32 policy, __u8 op, __u32 frag_len, __u32 value_len)
{
	if (op != XKV_OP_PUT && op != XKV_OP_DELETE)
		return 0;
	return policy == XKV_POLICY_DCREW || (policy == XKV_POLICY_XKV && frag_len == value_len);
}

/*
 * The word after owner lets n writes go, still healing if it was; the last one
 * empties the slot, and so ends its healing.
 */
static __always_inline __u64 xkv_ewt_released(__u64 word, __u32 n)
{
	__u32 writes = xkv_ewt_writes(word);

	return writes > n ? word - ((__u64)n << 32) : 0;
}

#endif /* XKV_EWT_H */
