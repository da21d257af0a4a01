/* SPDX-License-Identifier: MIT */
/*
 * Write compaction on a worker (docs/DESIGN.md, "Write compaction"): which PUTs go
 * into a window (engine/compact.h keeps them), and what closing one does: its one
 * write, then a reply to every PUT it held, then their EWT holds.
 */
#ifndef XKV_ENGINE_WINDOWS_H
#define XKV_ENGINE_WINDOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/transport.h"

struct xkv_worker;

/*
 * A write m from `from` that this worker would apply now (writer: it is its writer)
 * joins its key's open window, or opens one when another PUT to the key comes next
 * in the batch (C-4's look-ahead). True: it is held, and answered when the window
 * closes; its EWT hold, if any, goes with it.
 */
bool xkv_windows_take(struct xkv_worker *w, const struct xkv_origin *from,
		      const struct xkv_msg *m, uint64_t hash, bool writer);

/* A write to a key whose window is open goes after the window's: this worker's order. */
void xkv_windows_close_key(struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m);

/* Closes the windows whose time is up at now_ns. */
void xkv_windows_close_due(struct xkv_worker *w, uint64_t now_ns);

/* Closes every open window: the rings ran dry, or the roles they were opened by change. */
void xkv_windows_close_all(struct xkv_worker *w);

#endif /* XKV_ENGINE_WINDOWS_H */
