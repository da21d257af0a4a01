/* SPDX-License-Identifier: MIT */
/*
 * Which worker serves a request: the policies of docs/LOADER.md over the
 * partition of the key (include/xkv/hash.h) and the shared queue depths.
 */
#ifndef XKV_STEER_H
#define XKV_STEER_H

#include "maps.bpf.h"
#include "xkv/hash.h"
#include "xkv/roles.h"

/*
 * What steering needs of a request, read from an xkv header (xkv.bpf.c) or a
 * memcached one (memcached.h): numbers only, no packet pointers, so that both
 * protocols reach the steering code as states the verifier can merge.
 */
struct xkv_request {
	__u64 key_off;	 /* where the key starts, from ctx->data */
	__u32 key_len;	 /* key bytes, hashed where they lie */
	__u32 value_len; /* the whole value's bytes: a PUT's size class */
	__u32 frag_len;	 /* value bytes this datagram carries: all of them when equal */
	__u32 op;	 /* enum xkv_op */
};

static __always_inline __u64 xkv_depth_of(__u32 worker)
{
	struct xkv_qdepth *qd = bpf_map_lookup_elem(&xkv_qdepth, &worker);

	/* a racy read is fine: the depth is a hint, and workers change it concurrently */
	return qd ? *(volatile __u64 *)&qd->depth : 0;
}

/*
 * other when its queue is shorter than owner's, else owner: without a branch, since
 * under load the comparison is a coin toss the CPU mispredicts half the time. Depths
 * are far below 2^63 apart, so the sign of their difference is the comparison.
 */
static __always_inline __u32 xkv_less_loaded_of(__u32 owner, __u32 other)
{
	__u64 shorter = (xkv_depth_of(other) - xkv_depth_of(owner)) >> 63;

	barrier_var(shorter); /* kept as arithmetic: the compiler would branch on it */
	return owner ^ ((owner ^ other) & (__u32)-shorter);
}

/*
 * A random 32-bit number from this CPU's state: the high half of a 64-bit linear
 * congruential generator (Knuth's MMIX constants), one multiply and an add. Only high
 * bits are used, by a multiply and a shift, and those an LCG spreads well; splitmix64's
 * three multiplies in a row cost a GET under xkv 3 ns, the bpf_get_prandom_u32() helper
 * a third of steering a request.
 */
static __always_inline __u32 xkv_random(void)
{
	__u32 zero = 0;
	__u64 *state = bpf_map_lookup_elem(&xkv_rng, &zero);
	__u64 z;

	if (!state)
		return 0;
	z = *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (__u32)(z >> 32);
}

/* Power of two choices: the owner or one other worker picked at random, whichever is less busy. */
static __always_inline __u32 xkv_less_loaded(__u32 owner, __u32 workers, __u32 draw)
{
	__u32 other;

	if (workers < 2)
		return owner;
	/* one of the workers - 1 others, uniformly: a multiply and a shift, not two divisions */
	other = owner + 1 + (__u32)(((__u64)draw * (workers - 1)) >> 32);
	if (other >= workers)
		other -= workers;
	return xkv_less_loaded_of(owner, other);
}

/* Whether xkv_large_keys may hold hash: its cell of xkv_large_filter counts any key. */
static __always_inline int xkv_large_maybe(__u64 hash)
{
	__u32 cell = xkv_large_cell(hash);
	__u64 *n = bpf_map_lookup_elem(&xkv_large_filter, &cell);

	return n && *(volatile __u64 *)n;
}

/* The live roles: the slot with the higher gen (the control loop writes the other). */
static __always_inline const struct xkv_roles *xkv_roles_live(void)
{
	__u32 first = 0, second = 1;
	const struct xkv_roles *a = bpf_map_lookup_elem(&xkv_roles, &first);
	const struct xkv_roles *b = bpf_map_lookup_elem(&xkv_roles, &second);

	if (!a || !b)
		return NULL;
	return *(volatile const __u32 *)&b->gen > *(volatile const __u32 *)&a->gen ? b : a;
}

/*
 * The less loaded of the partition's owner and one of `candidates` others drawn at
 * random: a small worker, or past the nsmall of them the standby large worker.
 */
static __always_inline __u32 xkv_small_pick(const struct xkv_roles *r, __u32 owner, __u32 nsmall,
					    __u32 candidates, __u32 draw)
{
	__u32 other;

	if (candidates < 2)
		return owner;
	other = xkv_roles_other(r, nsmall, candidates, draw);
	return xkv_less_loaded_of(owner, other);
}

/*
 * A small read goes to the less loaded of the partition's owner and another small
 * worker; the standby large worker counts among them while nothing is queued on it.
 */
static __always_inline __u32 xkv_small_read(const struct xkv_roles *r, __u32 owner, __u32 nsmall,
					    __u32 draw)
{
	__u32 standby = r->large[0], candidates = nsmall;

	if (r->standby && standby != owner && xkv_depth_of(standby) == 0)
		candidates++;
	return xkv_small_pick(r, owner, nsmall, candidates, draw);
}

/*
 * Minos: a request for a value above the threshold class goes to the large worker
 * of its class. A PUT's class is its value_len, which every piece carries; a GET's
 * is the recorded length of its key's value, if a worker recorded one. Everything
 * else is small: writes to the partition's owner, reads balanced over small workers.
 * xkv: a write the EWT claims (claimed) is small whatever its size, and its candidate
 * for a free slot is the less loaded of the owner and another small worker, never a
 * large one. XKV_WORKERS_MAX when there are no roles yet.
 */
static __always_inline __u32 xkv_minos_worker(__u8 op, __u32 value_len, __u64 hash, __u32 draw,
					      int claimed)
{
	const struct xkv_roles *r = xkv_roles_live();
	__u32 nsmall, owner, cls = 0;
	__u32 *recorded;

	if (!r || !r->gen)
		return XKV_WORKERS_MAX;
	nsmall = r->nsmall;
	if (nsmall < 1 || nsmall > XKV_WORKERS_MAX)
		return XKV_WORKERS_MAX;
	if (op == XKV_OP_PUT && !claimed) {
		cls = xkv_size_class(value_len);
	} else if (op == XKV_OP_GET && xkv_large_maybe(hash)) {
		recorded = bpf_map_lookup_elem(&xkv_large_keys, &hash);
		if (recorded)
			cls = xkv_size_class(*recorded);
	}
	if (xkv_roles_is_large(r, cls))
		return xkv_roles_large_worker(r, cls, hash);
	owner = xkv_roles_owner(r, xkv_partition(hash));
	if (op == XKV_OP_GET)
		return xkv_small_read(r, owner, nsmall, draw);
	return claimed ? xkv_small_pick(r, owner, nsmall, nsmall, draw) : owner;
}

/*
 * cfg->workers is 1..XKV_WORKERS_MAX and cfg->policy a known one: the caller checked.
 * The caller checks the result against cfg->workers too: roles come from a map.
 * claimed (xkv_ewt_claimed): the result is the candidate that takes the write's EWT
 * slot if it is free (xkv_ewt_claim).
 */
static __always_inline __u32 xkv_choose_worker(const struct xkv_config *cfg, __u8 op,
					       __u32 value_len, __u64 hash, __u32 draw, int claimed)
{
	__u32 owner;

	if (xkv_policy_roles(cfg->policy))
		return xkv_minos_worker(op, value_len, hash, draw, claimed);
	owner = xkv_partition_owner(xkv_partition(hash), cfg->workers);
	/* dcrew's claimed writes are balanced as reads are, unless their slot is held */
	if ((cfg->policy == XKV_POLICY_CREW || cfg->policy == XKV_POLICY_DCREW) &&
	    (op == XKV_OP_GET || claimed))
		return xkv_less_loaded(owner, cfg->workers, draw);
	return owner;
}

/*
 * Redirects to worker's AF_XDP socket on this rx queue, or says why the packet can't go
 * there: a worker beyond the count, or no socket in its slot. The helper looks the slot
 * up itself and, finding no socket, returns the action in its flags (0) instead of
 * XDP_REDIRECT: one lookup, not a lookup before it. Only the program's XDP_REDIRECT
 * acts on it, and a later call replaces it.
 */
static __always_inline __u32 xkv_redirect_to(const struct xkv_config *cfg, __u32 rx_queue,
					     __u32 worker)
{
	if (worker >= cfg->workers)
		return XKV_R_BAD_CONFIG;
	if (bpf_redirect_map(&xkv_xsks, rx_queue * cfg->workers + worker, 0) != XDP_REDIRECT)
		return XKV_R_NO_SOCKET;
	return XKV_R_OK;
}

/*
 * Whether the partition's EWT slot holds writes now, and *owner its owner: the worker a
 * claimed write joins, whoever the candidate. Should the slot be free by the CAS, the
 * owner just seen takes it, a worker that wrote the partition a moment before.
 */
static __always_inline int xkv_ewt_held_by(__u32 partition, __u32 *owner)
{
	__u32 index = xkv_ewt_slot_of(partition);
	struct xkv_ewt_slot *slot = bpf_map_lookup_elem(&xkv_ewt, &index);
	__u64 word;

	if (!slot)
		return 0;
	word = *(volatile __u64 *)slot;
	*owner = xkv_ewt_owner(word);
	return xkv_ewt_writes(word) != 0;
}

/*
 * A write the EWT claims (include/xkv/ewt.h), *worker its candidate from
 * xkv_choose_worker: joins the owner of the partition's EWT slot, or takes the free
 * slot for the candidate; *worker becomes the one it goes to, and the packet is redirected
 * there (xkv_redirect_to).
 * XKV_R_OK, or the reason to drop it. Every check that can drop comes before the
 * CAS: a slot that counts the write must see the packet reach the worker that will
 * release it, so after a won CAS the caller only redirects.
 *
 * Ordering: the BPF CAS is fully ordered, and the owner releases by a C11 release
 * CAS on the same word, so a CAS that hands a free slot to a new owner comes after
 * the old owner's last release in the word's modification order: the old owner has
 * applied and answered every write before the partition is anyone else's. The
 * redirect then carries the packet to the new owner.
 */
static __always_inline __u32 xkv_ewt_claim(const struct xkv_config *cfg, __u32 rx_queue,
					   __u32 partition, __u32 *worker)
{
	__u32 index = xkv_ewt_slot_of(partition), zero = 0, candidate = *worker, target, reason;
	struct xkv_ewt_slot *slot = bpf_map_lookup_elem(&xkv_ewt, &index);
	struct xkv_ewt_counters *count = bpf_map_lookup_elem(&xkv_ewt_stats, &zero);
	__u64 old, new;

	if (!slot || !count) /* never: both arrays hold the index */
		return XKV_R_BAD_CONFIG;
	for (int try = 0; try < XKV_EWT_TRIES; try++) {
		old = *(volatile __u64 *)slot; /* a stale word only fails the CAS */
		target = xkv_ewt_target(old, candidate);
		reason = xkv_redirect_to(cfg, rx_queue, target);
		if (reason != XKV_R_OK)
			return reason;
		new = xkv_ewt_joined(old, candidate);
		if (!new) /* full: a failed try, in case releases make room */
			continue;
		if (__sync_val_compare_and_swap((__u64 *)slot, old, new) == old) {
			/* per-CPU counters: no other writer */
			if (xkv_ewt_writes(old))
				count->joined++;
			else
				count->taken++;
			*worker = target;
			return XKV_R_OK;
		}
		count->cas_retry++;
	}
	count->dropped++;
	return XKV_R_EWT_BUSY;
}

/* Counts the request on its worker's queue depth; the worker subtracts it when done. */
static __always_inline void xkv_depth_add(__u32 worker)
{
	struct xkv_qdepth *qd = bpf_map_lookup_elem(&xkv_qdepth, &worker);

	if (qd)
		__sync_fetch_and_add(&qd->depth, 1);
}

#endif /* XKV_STEER_H */
