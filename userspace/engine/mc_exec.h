/* SPDX-License-Identifier: MIT */
/*
 * memcached's write semantics on the store, run by the key's partition writer
 * (docs/MEMCACHED.md): set, add, replace, append, prepend, cas, delete, incr, decr,
 * touch, and what the meta commands add (autovivify, CAS compare on any write).
 */
#ifndef XKV_MC_EXEC_H
#define XKV_MC_EXEC_H

#include "proto/codec.h"
#include "store/store.h"

/*
 * Executes the memcached write m (its command in m->mc.cmd, its whole value in m->frag;
 * hash is its key's) on the partition's writer (the caller guarantees it: invariant 1)
 * and fills *r. scratch is XKV_VALUE_MAX bytes, for append, prepend, incr and decr.
 */
void xkv_mc_apply(struct xkv_store *s, const struct xkv_msg *m, uint64_t hash, void *scratch,
		  struct xkv_mc_result *r);

/* memcached's exptime rule (xkv_mc_exptime_at) at the store's clock now. */
uint32_t xkv_mc_exptime(const struct xkv_store *s, int64_t exptime);

#endif /* XKV_MC_EXEC_H */
