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
			     const struct xkv_origin *from, uint64_t now_ns);
bool __wrap_xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
			     const struct xkv_origin *from, uint64_t now_ns);

static unsigned char discarded[XKV_DGRAM_MAX];

static void *discard_reserve(const struct xkv_origin *to, size_t *cap)
{
	(void)to;
	*cap = sizeof(discarded);
	return discarded;
}

static void discard_send(const struct xkv_origin *to, void *buf, size_t len)
{
	(void)to, (void)buf, (void)len;
}

static void discard_release(const struct xkv_origin *to, void *buf)
{
	(void)to, (void)buf;
}

/* Where the window's own replies go: nowhere, the client has had its answer. */
static struct xkv_tx discard = {
	.reserve = discard_reserve, .send = discard_send, .release = discard_release};

bool __wrap_xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
			     const struct xkv_origin *from, uint64_t now_ns)
{
	const struct xkv_msg reply = {.op = req->op | XKV_OP_REPLY, .status = XKV_S_OK,
				      .request_id = req->request_id, .timestamp = req->timestamp};
	struct xkv_origin nowhere = *from;
	size_t cap;
	void *buf = from->tx->reserve(from, &cap);
	int len;

	if (buf) {
		len = xkv_encode_hdr(buf, &reply);
		if (len > 0)
			from->tx->send(from, buf, (size_t)len);
		else
			from->tx->release(from, buf);
	}
	nowhere.tx = &discard;
	return __real_xkv_compact_hold(win, req, &nowhere, now_ns);
}
