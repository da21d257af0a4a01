/* SPDX-License-Identifier: MIT */
/*
 * Look-ahead over a batch (MICA's prefetch; C-4's look for a second write): before a
 * batch is served, each request's key is hashed and its bucket starts loading; the
 * hashes are kept for when each request is served, and compaction asks whether
 * another PUT to a key comes next.
 */
#ifndef XKV_ENGINE_AHEAD_H
#define XKV_ENGINE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

struct xkv_worker;

/* A request of the batch, xkv's or (mc) memcached's over UDP. */
void xkv_ahead_look(struct xkv_worker *w, const void *data, size_t len, bool mc);

/* A datagram is served: the hash look-ahead kept for it, or one computed now. */
uint64_t xkv_ahead_hash(struct xkv_worker *w, const void *data, const struct xkv_msg *m);

/* Whether another PUT to m's key waits among the next requests of this batch. */
bool xkv_ahead_put(const struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m);

#endif /* XKV_ENGINE_AHEAD_H */
