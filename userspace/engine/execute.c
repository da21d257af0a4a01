// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>

#include "engine/execute.h"
#include "engine/mc_exec.h"
#include "engine/mc_serve.h"
#include "engine/versions.h"

static struct xkv_msg reply_to(const struct xkv_msg *req, enum xkv_status status)
{
	return (struct xkv_msg){
		.op = (req->op & ~XKV_OP_REPLY) | XKV_OP_REPLY,
		.status = status,
		.request_id = req->request_id,
		.timestamp = req->timestamp,
		.dir = req->dir, /* the value starts where the request's key did */
	};
}

/* Sends the reply header (and whatever the caller placed after it in buf). */
static void reply_send(struct xkv_exec *x, const struct xkv_origin *from, void *buf,
		       const struct xkv_msg *req, struct xkv_msg *reply)
{
	int len;

	xkv_versions_reply(x, req, reply);
	len = xkv_encode_hdr(buf, reply);

	/* every reply is built from a valid request, so it encodes */
	if (len < 0)
		abort();
	from->tx->send(from, buf, (size_t)len);
	x->stats.reply_datagrams++;
}

static void reply_status(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
			 enum xkv_status status)
{
	struct xkv_msg reply = reply_to(req, status);
	size_t cap;
	void *buf;

	x->stats.replies[status]++;
	buf = from->tx->reserve(from, &cap);
	if (!buf) {
		x->stats.tx_dropped++;
		return;
	}
	reply_send(x, from, buf, req, &reply);
}

void xkv_reply_status(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		      enum xkv_status status)
{
	if (req->mc.dialect != XKV_DIALECT_XKV)
		xkv_mc_reply_status(x, from, req, status);
	else
		reply_status(x, from, req, status);
	xkv_exec_done(x, from, req, (req->op & ~XKV_OP_REPLY) == XKV_OP_PUT ? req->value_len : 0);
}

/* Sends the value in x->scratch in as many pieces as it needs; first is already reserved. */
static void reply_value_pieces(struct xkv_exec *x, const struct xkv_origin *from,
			       const struct xkv_msg *req, struct xkv_msg *reply, uint32_t len,
			       void *first, size_t cap)
{
	size_t hdr = xkv_msg_hdr_len(reply);
	uint32_t off = 0;
	uint8_t *buf = first;

	reply->value_len = len;
	do { /* at least one datagram, also for an empty value */
		if (!buf) {
			buf = from->tx->reserve(from, &cap);
			if (!buf) {
				x->stats.tx_dropped++;
				return;
			}
		}
		reply->frag_offset = off;
		reply->frag_len = len - off < cap - hdr ? len - off : (uint32_t)(cap - hdr);
		memcpy(buf + hdr, x->scratch + off, reply->frag_len);
		reply_send(x, from, buf, req, reply);
		off += reply->frag_len;
		buf = NULL;
	} while (off < len);
}

/*
 * UDP payload bytes of the reply to a GET of a len-byte value in datagrams of cap
 * bytes, each starting with hdr bytes of header.
 */
static uint64_t reply_bytes(uint32_t len, size_t hdr, size_t cap)
{
	uint64_t room = cap - hdr, pieces = len ? (len + room - 1) / room : 1;

	return pieces * hdr + len;
}

/*
 * Whether bytes of reply may go to peer (docs/PROTOCOL.md, "Amplification"): within
 * XKV_AMPLIFY_MAX times the request, to a trusted network, or with a valid token.
 * Sets *token when it checked one: peer's current token, for the reply to carry.
 */
static bool may_send(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		     uint64_t bytes, uint64_t *token)
{
	uint64_t request = xkv_msg_hdr_len(req) + req->key_len + req->frag_len;

	if (bytes <= XKV_AMPLIFY_MAX * request ||
	    xkv_validate_trusted(x->validate, &from->peer))
		return true;
	return xkv_validate_token(x->validate, &from->peer, req->token, x->now_ns, token);
}

/* The store's read for req: with the value's version if the directory steered it. */
static int store_get(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash, void *buf,
		     size_t cap, uint32_t *len)
{
	if (xkv_msg_steered(req))
		return xkv_versions_get(x, req, hash, buf, cap, len);
	return xkv_store_get(x->store, req->key, req->key_len, hash, buf, cap, len);
}

/* Returns the bytes of the value it answered with (0: none), or -1: handed elsewhere. */
static int64_t execute_get(struct xkv_exec *x, const struct xkv_origin *from,
			   const struct xkv_msg *req, uint64_t hash)
{
	struct xkv_msg reply = reply_to(req, XKV_S_OK);
	size_t cap, hdr = xkv_msg_hdr_len(&reply);
	bool in_scratch = false, allowed;
	uint32_t len = 0;
	uint8_t *buf;
	int err;

	buf = from->tx->reserve(from, &cap);
	if (!buf) {
		x->stats.requests[XKV_OP_GET]++;
		x->stats.tx_dropped++;
		return 0;
	}
	/* the common case: the value fits one datagram and is copied straight into it */
	err = store_get(x, req, hash, buf + hdr, cap - hdr, &len);
	if (err == -ENOBUFS && xkv_size_class(len) > x->small_class_max && x->handoff_get &&
	    x->handoff_get(x->handoff_ctx, from, req, hash, len)) {
		from->tx->release(from, buf);
		x->vouch.valid = false; /* the worker that serves it reads again */
		return -1; /* counted where it is served */
	}
	x->stats.requests[XKV_OP_GET]++;
	/* ENOBUFS set len: checked before a large value is copied for a spoofed source */
	allowed = (err && err != -ENOBUFS) ||
		  may_send(x, from, req, reply_bytes(len, hdr, cap), &reply.token);
	if (err == -ENOBUFS && allowed) {
		err = store_get(x, req, hash, x->scratch, XKV_VALUE_MAX, &len);
		in_scratch = true;
		/* a PUT between the two looks may have made it larger */
		allowed = err || may_send(x, from, req, reply_bytes(len, hdr, cap), &reply.token);
	}
	if (!allowed) {
		/* a GET is idempotent: not served, the client asks again with the token */
		reply.status = XKV_S_VALIDATE;
		x->stats.replies[reply.status]++;
		reply_send(x, from, buf, req, &reply);
		return 0;
	}
	if (err) {
		reply.status = xkv_status_from_errno(err);
		x->stats.replies[reply.status]++;
		reply_send(x, from, buf, req, &reply);
		return 0;
	}
	x->stats.replies[XKV_S_OK]++;
	xkv_exec_count_size(x, len);
	if (in_scratch) {
		reply_value_pieces(x, from, req, &reply, len, buf, cap);
		return len;
	}
	reply.value_len = len;
	reply.frag_len = len;
	reply_send(x, from, buf, req, &reply);
	return len;
}

void xkv_reply_scratch(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		       uint32_t len)
{
	struct xkv_msg reply = reply_to(req, XKV_S_OK);
	size_t cap;
	uint8_t *buf = from->tx->reserve(from, &cap);

	if (!buf) {
		x->stats.tx_dropped++;
		return;
	}
	if (!may_send(x, from, req, reply_bytes(len, xkv_msg_hdr_len(&reply), cap), &reply.token)) {
		reply.status = XKV_S_VALIDATE;
		len = 0;
	}
	x->stats.replies[reply.status]++;
	if (reply.status == XKV_S_OK)
		reply_value_pieces(x, from, req, &reply, len, buf, cap);
	else
		reply_send(x, from, buf, req, &reply);
	xkv_exec_done(x, from, req, 0);
}

void xkv_exec_count_write(struct xkv_exec *x, const struct xkv_msg *req)
{
	uint8_t op = req->op & ~XKV_OP_REPLY;

	x->stats.requests[op]++;
	if (op == XKV_OP_PUT && !x->echo)
		xkv_exec_count_size(x, req->value_len);
}

/*
 * A memcached SET or DELETE over UDP: run by memcached's executor (engine/mc_exec.h),
 * as one over TCP is; the SET's new CAS in x->cas, for a binary reply.
 */
static enum xkv_status apply_mc(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash)
{
	struct xkv_mc_result r;

	xkv_mc_apply(x->store, req, hash, x->scratch, &r);
	x->cas = r.status == XKV_MC_STORED ? r.cas : 0;
	switch (r.status) {
	case XKV_MC_STORED:
	case XKV_MC_DELETED:
		return XKV_S_OK;
	case XKV_MC_NOT_FOUND:
		return XKV_S_NOT_FOUND;
	case XKV_MC_TOO_LARGE:
		return XKV_S_TOO_LARGE;
	default:
		return XKV_S_NO_MEMORY;
	}
}

enum xkv_status xkv_apply_write(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash)
{
	uint8_t op = req->op & ~XKV_OP_REPLY;
	int err;

	if (x->echo)
		return XKV_S_OK;
	x->stats.store_writes++;
	if (req->mc.dialect != XKV_DIALECT_XKV && (op == XKV_OP_PUT || op == XKV_OP_DELETE))
		return apply_mc(x, req, hash);
	if (xkv_msg_steered(req) && (op == XKV_OP_PUT || op == XKV_OP_DELETE))
		return xkv_versions_apply(x, req, hash);
	switch (op) {
	case XKV_OP_PUT:
		err = xkv_store_put(x->store, req->key, req->key_len, hash, req->frag,
				    req->value_len);
		break;
	case XKV_OP_DELETE:
		err = xkv_store_delete(x->store, req->key, req->key_len, hash);
		break;
	default:
		err = -EINVAL;
		break;
	}
	return xkv_status_from_errno(err);
}

enum xkv_status xkv_execute_write(struct xkv_exec *x, const struct xkv_origin *from,
				  const struct xkv_msg *req, uint64_t hash)
{
	enum xkv_status status;

	xkv_exec_count_write(x, req);
	status = xkv_apply_write(x, req, hash);
	xkv_reply_status(x, from, req, status);
	return status;
}

void xkv_execute(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		 uint64_t hash)
{
	int64_t len;

	if ((req->op & ~XKV_OP_REPLY) != XKV_OP_GET) {
		xkv_execute_write(x, from, req, hash);
	} else if (req->mc.dialect != XKV_DIALECT_XKV) {
		xkv_exec_done(x, from, req, (uint32_t)xkv_mc_execute_get(x, from, req, hash));
	} else if (x->echo) {
		x->stats.requests[XKV_OP_GET]++;
		xkv_reply_status(x, from, req, XKV_S_NOT_FOUND);
	} else if ((len = execute_get(x, from, req, hash)) >= 0) {
		xkv_exec_done(x, from, req, (uint32_t)len);
	}
}
