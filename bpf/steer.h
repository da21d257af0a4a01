/* SPDX-License-Identifier: MIT */
/*
 * Which worker serves a request: the policies of docs/LOADER.md over the
 * partition of the key (include/xkv/hash.h) and the shared queue depths.
 */
#ifndef XKV_STEER_H
#define XKV_STEER_H

#include "maps.bpf.h"
#include "xkv/hash.h"

static __always_inline __u64 xkv_depth_of(__u32 worker)
{
	struct xkv_qdepth *qd = bpf_map_lookup_elem(&xkv_qdepth, &worker);

	/* a racy read is fine: the depth is a hint, and workers change it concurrently */
	return qd ? *(volatile __u64 *)&qd->depth : 0;
}

/*
 * A random 32-bit number from this CPU's state (splitmix64): a few instructions,
 * where the bpf_get_prandom_u32() helper costs a third of steering a request.
 */
static __always_inline __u32 xkv_random(void)
{
	__u32 zero = 0;
	__u64 *state = bpf_map_lookup_elem(&xkv_rng, &zero);
	__u64 z;

	if (!state)
		return 0;
	z = *state += 0x9E3779B97F4A7C15ULL; /* per-CPU slot: no other writer */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return (__u32)((z ^ (z >> 31)) >> 32);
}

/* Power of two choices: the owner or one other worker picked at random, whichever is less busy. */
static __always_inline __u32 xkv_less_loaded(__u32 owner, __u32 workers)
{
	__u32 other;

	if (workers < 2)
		return owner;
	/* one of the workers - 1 others, uniformly: a multiply and a shift, not two divisions */
	other = owner + 1 + (__u32)(((__u64)xkv_random() * (workers - 1)) >> 32);
	if (other >= workers)
		other -= workers;
	return xkv_depth_of(other) < xkv_depth_of(owner) ? other : owner;
}

/* cfg->workers is 1..XKV_WORKERS_MAX and cfg->policy a known one: the caller checked. */
static __always_inline __u32 xkv_choose_worker(const struct xkv_config *cfg, __u8 op,
					       __u32 partition)
{
	__u32 owner = xkv_partition_owner(partition, cfg->workers);

	if (cfg->policy == XKV_POLICY_CREW && op == XKV_OP_GET)
		return xkv_less_loaded(owner, cfg->workers);
	return owner;
}

/* Counts the request on its worker's queue depth; the worker subtracts it when done. */
static __always_inline void xkv_depth_add(__u32 worker)
{
	struct xkv_qdepth *qd = bpf_map_lookup_elem(&xkv_qdepth, &worker);

	if (qd)
		__sync_fetch_and_add(&qd->depth, 1);
}

#endif /* XKV_STEER_H */
