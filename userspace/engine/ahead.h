/* SPDX-License-Identifier: MIT */
/*
 * Look-ahead over a batch (MICA's prefetch; C-4's look for a second write): before a
 * batch is served, each request is decoded once, its key hashed and its bucket starts
 * loading; what serving and ordering it needs is kept, and compaction asks whether
 * another PUT to a key waits among the requests not served yet.
 */
#ifndef XKV_ENGINE_AHEAD_H
#define XKV_ENGINE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

struct xkv_worker;
struct xkv_ahead;

/* A new batch: what look-ahead kept of the last one is gone. */
void xkv_ahead_begin(struct xkv_worker *w);

/* A request of the batch, xkv's or (mc) memcached's over UDP, kept while there is room. */
void xkv_ahead_look(struct xkv_worker *w, const void *data, size_t len, bool mc);

/* The next request in arrival order, if it is data's (served from now), else NULL. */
struct xkv_ahead *xkv_ahead_next(struct xkv_worker *w, const void *data);

/* Whether another PUT to m's key waits among the requests of this batch not served yet. */
bool xkv_ahead_put(const struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m);

#endif /* XKV_ENGINE_AHEAD_H */
