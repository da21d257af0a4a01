/* SPDX-License-Identifier: MIT */
/*
 * A worker passes a request to another (engine/handoff.h has the rings): a GET for a
 * large value, a write for another's partition, a large PUT's item built here.
 */
#ifndef XKV_ENGINE_HANDOFF_SEND_H
#define XKV_ENGINE_HANDOFF_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/handoff.h"

struct xkv_worker;

/*
 * Passes req from `from` to worker `to`, answered along the current route from the
 * request's rx queue; a ring that is full, or no memory for the message, answers
 * busy (the client retries) and returns false. Takes item (INSTALL's, else NULL).
 */
bool xkv_handoff_send(struct xkv_worker *w, enum xkv_handoff_kind kind, uint32_t to,
		      const struct xkv_origin *from, const struct xkv_msg *req, uint64_t hash,
		      struct xkv_item *item);

/*
 * A large PUT for `to` to link in: the item is built here, off the writer's path.
 * False when it was answered here instead (no memory for the item, or no room to hand).
 */
bool xkv_handoff_send_item(struct xkv_worker *w, const struct xkv_origin *from,
			   const struct xkv_msg *m, uint64_t hash, uint32_t to);

#endif /* XKV_ENGINE_HANDOFF_SEND_H */
