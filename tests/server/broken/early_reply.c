// SPDX-License-Identifier: MIT
/*
 * A broken server for the linearizability test that must fail (C-4's execution E1):
 * a compacted PUT is answered OK as soon as its window holds it, before the window's
 * write is applied, and not again when the window closes. Linked into a server with
 * -Wl,--wrap=xkv_compact_hold, so the production objects are unchanged and every
 * hold passes through here first.
 */
#include <stdbool.h>

#include "proto/codec.h"
#include "engine/compact.h"

bool __real_xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
			     const struct xkv_peer *peer, struct xkv_tx *tx,
			     const struct xkv_reply_route *route, uint64_t now_ns);
bool __wrap_xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
			     const struct xkv_peer *peer, struct xkv_tx *tx,
			     const struct xkv_reply_route *route, uint64_t now_ns);

static unsigned char discarded[XKV_DGRAM_MAX];

static void *discard_reserve(struct xkv_tx *tx, size_t *cap)
{
	(void)tx;
	*cap = sizeof(discarded);
	return discarded;
}

static void discard_send(struct xkv_tx *tx, const struct xkv_peer *peer, void *buf, size_t len)
{
	(void)tx, (void)peer, (void)buf, (void)len;
}

static void discard_release(struct xkv_tx *tx, void *buf)
{
	(void)tx, (void)buf;
}

static void discard_route_save(const struct xkv_tx *tx, struct xkv_reply_route *route)
{
	(void)tx, (void)route;
}

static void discard_route_use(struct xkv_tx *tx, const struct xkv_reply_route *route)
{
	(void)tx, (void)route;
}

/* Where the window's own replies go: nowhere, the client has had its answer. */
static struct xkv_tx discard = {.reserve = discard_reserve, .send = discard_send,
				.release = discard_release, .route_save = discard_route_save,
				.route_use = discard_route_use};

bool __wrap_xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
			     const struct xkv_peer *peer, struct xkv_tx *tx,
			     const struct xkv_reply_route *route, uint64_t now_ns)
{
	const struct xkv_msg reply = {.op = req->op | XKV_OP_REPLY, .status = XKV_S_OK,
				      .request_id = req->request_id, .timestamp = req->timestamp};
	size_t cap;
	void *buf = tx->reserve(tx, &cap);
	int len;

	if (buf) {
		len = xkv_encode_hdr(buf, &reply);
		if (len > 0)
			tx->send(tx, peer, buf, (size_t)len);
		else
			tx->release(tx, buf);
	}
	return __real_xkv_compact_hold(win, req, peer, &discard, route, now_ns);
}
