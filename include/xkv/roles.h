/* SPDX-License-Identifier: MIT */
/*
 * Minos's roles (docs/DESIGN.md, "Steering policies"): which workers serve small
 * requests, which serve large ones, and which sizes each large worker takes. The
 * server's control loop computes them every epoch (userspace/engine/minos_plan.c) and
 * writes them to the xkv_roles map; the XDP program steers by them and the workers
 * check partition ownership by them. The functions below are the one definition
 * both sides use, so steering and ownership always agree.
 *
 * The map has XKV_ROLES_SLOTS entries, written alternately: the writer fills the
 * slot with the lower gen and stores its gen last; readers take the slot with the
 * higher gen, which is complete.
 */
#ifndef XKV_ROLES_H
#define XKV_ROLES_H

#include <linux/types.h>
#include "hash.h"
#include "maps.h"

#define XKV_ROLES_SLOTS 2

/* The large workers that serve one size class: large[first .. first + count). */
struct xkv_class_workers {
	__u8 first;
	__u8 count; /* 1.. for a class above the threshold; 0 below it */
};

struct xkv_roles {
	__u32 gen;	/* 0: never written; each change writes the other slot, gen + 1 */
	__u8 threshold; /* the largest small size class: a request of a larger one is large */
	__u8 nsmall;	/* workers in small[]: 1..workers */
	__u8 nlarge;	/* workers in large[]: 1..workers */
	__u8 standby;	/* 1: large[0] also takes small reads while it is idle (Minos's standby) */
	__u16 percentile_centi; /* the control loop's Nth percentile, times 100 */
	__u16 pad;
	__u8 small[XKV_WORKERS_MAX]; /* partition p's writes: small[xkv_partition_owner(p, nsmall)] */
	__u8 large[XKV_WORKERS_MAX]; /* in order of the sizes they serve, smallest first */
	struct xkv_class_workers classes[XKV_SIZE_CLASSES]; /* indexed by size class */
};

/*
 * The worker that owns partition's writes: one of the small workers, by the share of
 * partitions xkv_partition_owner gives each of nsmall. partition < XKV_PARTITIONS.
 */
static __always_inline __u32 xkv_roles_owner(const struct xkv_roles *r, __u32 partition)
{
	return r->small[xkv_partition_owner(partition, r->nsmall) & (XKV_WORKERS_MAX - 1)];
}

/* Whether a request whose value has size class cls is served by a large worker. */
static __always_inline int xkv_roles_is_large(const struct xkv_roles *r, __u32 cls)
{
	return cls > r->threshold && cls < XKV_SIZE_CLASSES;
}

/*
 * The large worker for a value of class cls (xkv_roles_is_large) and key hash: a
 * class that more than one worker shares is split by hash, so every piece of one
 * PUT, which carries the same key, reaches the same worker.
 */
static __always_inline __u32 xkv_roles_large_worker(const struct xkv_roles *r, __u32 cls,
						    __u64 hash)
{
	const struct xkv_class_workers *c = &r->classes[cls < XKV_SIZE_CLASSES ? cls : 0];
	__u32 pick = (__u32)(((__u64)(__u32)hash * c->count) >> 32);

	return r->large[(c->first + pick) & (XKV_WORKERS_MAX - 1)];
}

/*
 * The other candidate of a small request, drawn by 32 random bits from `candidates`:
 * a small worker, or past the nsmall of them the standby large worker. The request
 * goes to the less loaded of it and the partition's owner (bpf/steer.h). xkv-sim
 * draws with it too, so the model places as XDP does.
 */
static __always_inline __u32 xkv_roles_other(const struct xkv_roles *r, __u32 nsmall,
					     __u32 candidates, __u32 draw)
{
	__u32 pick = (__u32)(((__u64)draw * candidates) >> 32);

	return pick < nsmall ? r->small[pick & (XKV_WORKERS_MAX - 1)] : r->large[0];
}

#endif /* XKV_ROLES_H */
