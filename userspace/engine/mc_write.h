/* SPDX-License-Identifier: MIT */
/*
 * memcached writes from a worker's TCP connections (server/memcached.c): applied by
 * their partition's writer as every write is (invariant 1); when that is another
 * worker, handed to it with key and value copied, its result coming back the same
 * way to the worker whose connection waits.
 */
#ifndef XKV_ENGINE_MC_WRITE_H
#define XKV_ENGINE_MC_WRITE_H

#include <stdint.h>

#include "proto/codec.h"
#include "proto/mc_cmd.h"
#include "engine/handoff.h"

struct xkv_worker;

/*
 * Memcached writes from this worker's connections: done(ctx, tag, result) is called,
 * from xkv_worker_handoffs, with the result of one that xkv_worker_mc_write handed to
 * another worker.
 */
void xkv_worker_mc(struct xkv_worker *w,
		   void (*done)(void *ctx, uint64_t tag, const struct xkv_mc_result *r), void *ctx);

/*
 * A memcached write m of hash (XKV_DIALECT_MC_TCP, its command in m->mc.cmd), under
 * invariant 1: applied here when this worker is its partition's
 * writer (under dcrew and xkv the EWT's holder, which it joins as XDP would), else
 * handed to the writer. Returns 0 with *r filled (XKV_MC_NO_MEMORY when no hand-off
 * was possible: counted, the client may retry), or -EINPROGRESS: the result comes to
 * done with tag.
 */
int xkv_worker_mc_write(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash,
			struct xkv_mc_result *r, uint64_t tag);

/* A memcached hand-off taken: a write to apply, or the result of one handed over. */
void xkv_mc_write_take(struct xkv_worker *w, struct xkv_handoff *m);

/* Sends the results whose ring back was full before, in order. */
void xkv_mc_write_flush(struct xkv_worker *w);

#endif /* XKV_ENGINE_MC_WRITE_H */
