// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include <xkv/hash.h>

#include "engine/mc_serve.h"

#define FRAME	   sizeof(struct xkv_mc_frame)
#define BIN_HDR	   sizeof(struct xkv_mc_bin_hdr)
#define DGRAM_ROOM (XKV_MC_DGRAM_MAX - FRAME) /* reply bytes a datagram carries */

/* Datagrams a reply of len bytes takes: at least one, also when it is empty. */
static size_t datagrams(size_t len)
{
	return len ? (len + DGRAM_ROOM - 1) / DGRAM_ROOM : 1;
}

/* Sends reply[0..len) to peer in datagrams of XKV_MC_DGRAM_MAX, numbered 0..n-1 of n. */
static void send_split(struct xkv_exec *x, const struct xkv_origin *from,
		       const struct xkv_msg *req, const uint8_t *reply, size_t len)
{
	size_t n = datagrams(len), off = 0, cap, chunk;
	uint8_t *buf;

	for (size_t seq = 0; seq < n; seq++) {
		buf = from->tx->reserve(from, &cap);
		chunk = len - off < DGRAM_ROOM ? len - off : DGRAM_ROOM;
		if (buf && cap < FRAME + chunk) {
			from->tx->release(from, buf);
			buf = NULL;
		}
		if (!buf) {
			x->stats.tx_dropped++;
			return;
		}
		xkv_mc_frame(buf, (uint16_t)req->request_id, (uint16_t)seq, (uint16_t)n);
		memcpy(buf + FRAME, reply + off, chunk);
		from->tx->send(from, buf, FRAME + chunk);
		x->stats.reply_datagrams++;
		off += chunk;
	}
}

static void send_text(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		      const char *line)
{
	send_split(x, from, req, (const uint8_t *)line, strlen(line));
}

/*
 * A binary response without a value: status and cas; its body the key when key_len
 * (GETK's miss), else an error's message, as memcached sends them.
 */
static void send_binary(struct xkv_exec *x, const struct xkv_origin *from,
			const struct xkv_msg *req, uint16_t status, uint16_t key_len, uint64_t cas)
{
	const char *text = xkv_mc_bin_status_text(status);
	const void *body = key_len ? req->key : (const void *)text;
	uint16_t body_len = key_len ? key_len : (uint16_t)strlen(text);
	uint8_t reply[BIN_HDR + XKV_KEY_MAX];

	xkv_mc_bin_hdr(reply, &req->mc, status, key_len, 0, body_len, cas);
	if (body_len)
		memcpy(reply + BIN_HDR, body, body_len);
	send_split(x, from, req, reply, BIN_HDR + (size_t)body_len);
}

/*
 * Whether len bytes of reply may go to peer: memcached has no token to show, so over
 * XKV_AMPLIFY_MAX times the request only to a trusted network (docs/PROTOCOL.md).
 */
static bool may_send(const struct xkv_exec *x, const struct xkv_origin *from,
		     const struct xkv_msg *req, size_t len)
{
	uint64_t bytes = len + FRAME * datagrams(len);

	return bytes <= (uint64_t)XKV_AMPLIFY_MAX * req->mc.size ||
	       xkv_validate_trusted(x->validate, &from->peer);
}

/*
 * One key of a get: counted as a GET, its value read into x->scratch at *pos after the
 * room for its VALUE line (or binary header, flags and key: room), then the line
 * written before it. Returns 0, -ENOENT (a miss, nothing written) or -ENOBUFS.
 */
static int get_one(struct xkv_exec *x, size_t *pos, size_t room, const void *key,
		   uint16_t key_len, uint64_t hash, struct xkv_item_meta *meta, uint32_t *len)
{
	int err = -ENOENT;

	x->stats.requests[XKV_OP_GET]++;
	if (*pos + room + sizeof(XKV_MC_END) > XKV_EXEC_SCRATCH)
		return -ENOBUFS;
	if (!x->echo)
		err = xkv_store_get_meta(x->store, key, key_len, hash, x->scratch + *pos + room,
					 XKV_EXEC_SCRATCH - *pos - room - sizeof(XKV_MC_END), len,
					 meta);
	if (err == -ENOENT) {
		x->stats.replies[XKV_S_NOT_FOUND]++;
		return err;
	}
	if (err)
		return err;
	x->stats.replies[XKV_S_OK]++;
	xkv_exec_count_size(x, *len);
	return 0;
}

/* An ASCII get's VALUE block for key at *pos, moved up to end its line; false: no room. */
static bool ascii_get_one(struct xkv_exec *x, const struct xkv_msg *req, size_t *pos,
			  const void *key, uint16_t key_len, uint64_t hash)
{
	char line[XKV_MC_VALUE_LINE_MAX + 1];
	struct xkv_item_meta meta;
	uint32_t len;
	size_t n;
	int err = get_one(x, pos, XKV_MC_VALUE_LINE_MAX, key, key_len, hash, &meta, &len);

	if (err)
		return err == -ENOENT;
	n = xkv_mc_value_line(line, key, key_len, meta.flags, len,
			      req->mc.with_cas ? &meta.cas : NULL);
	memcpy(x->scratch + *pos, line, n);
	memmove(x->scratch + *pos + n, x->scratch + *pos + XKV_MC_VALUE_LINE_MAX, len);
	*pos += n + len;
	memcpy(x->scratch + *pos, "\r\n", 2);
	*pos += 2;
	return true;
}

/* get k1 k2 ...: a VALUE block for each hit, in order, then END. */
static size_t ascii_get(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash)
{
	const char *keys = req->mc.keys;
	uint16_t keys_len = req->mc.keys_len, key_len = req->key_len;
	const void *key = req->key;
	size_t pos = 0;

	do {
		if (!ascii_get_one(x, req, &pos, key, key_len, hash)) {
			static const char no_room[] =
				"SERVER_ERROR out of memory writing get response\r\n";

			memcpy(x->scratch, no_room, sizeof(no_room) - 1);
			return sizeof(no_room) - 1;
		}
		if (!xkv_mc_next_key(&keys, &keys_len, &key, &key_len))
			break;
		hash = xkv_hash(key, key_len);
	} while (true);
	memcpy(x->scratch + pos, XKV_MC_END, sizeof(XKV_MC_END) - 1);
	return pos + sizeof(XKV_MC_END) - 1;
}

/*
 * A binary GET*: a hit carries flags, the key for GETK*, the value and the CAS; a miss
 * is NOT_FOUND (with the key for GETK), or nothing for GETQ and GETKQ. Returns the
 * reply's length in x->scratch, 0 for none.
 */
static size_t binary_get(struct xkv_exec *x, const struct xkv_origin *from,
			 const struct xkv_msg *req, uint64_t hash)
{
	uint16_t key_len = req->mc.with_key ? req->key_len : 0;
	size_t room = BIN_HDR + 4 + key_len, pos = 0;
	struct xkv_item_meta meta;
	uint32_t len;
	uint8_t *p = x->scratch;

	if (get_one(x, &pos, room, req->key, req->key_len, hash, &meta, &len)) {
		if (!req->mc.quiet)
			send_binary(x, from, req, XKV_MC_BIN_S_NOT_FOUND, key_len, 0);
		return 0;
	}
	xkv_mc_bin_hdr(p, &req->mc, XKV_MC_BIN_S_OK, key_len, 4, (uint32_t)(4 + key_len + len),
		    meta.cas);
	p[BIN_HDR] = (uint8_t)(meta.flags >> 24);
	p[BIN_HDR + 1] = (uint8_t)(meta.flags >> 16);
	p[BIN_HDR + 2] = (uint8_t)(meta.flags >> 8);
	p[BIN_HDR + 3] = (uint8_t)meta.flags;
	memcpy(p + BIN_HDR + 4, req->key, key_len);
	return room + len;
}

size_t xkv_mc_execute_get(struct xkv_exec *x, const struct xkv_origin *from,
			  const struct xkv_msg *req, uint64_t hash)
{
	size_t len;

	if (req->mc.dialect == XKV_DIALECT_MC_BINARY)
		len = binary_get(x, from, req, hash);
	else
		len = ascii_get(x, req, hash);
	if (!len)
		return 0;
	if (may_send(x, from, req, len)) {
		send_split(x, from, req, x->scratch, len);
		return len;
	}
	x->stats.mc_amplify_refused++;
	if (req->mc.dialect == XKV_DIALECT_MC_BINARY)
		send_binary(x, from, req, XKV_MC_BIN_S_INTERNAL, 0, 0);
	else
		send_text(x, from, req, "SERVER_ERROR reply too large\r\n");
	return 0;
}

static const char *ascii_status_line(const struct xkv_msg *req, enum xkv_status status)
{
	switch (status) {
	case XKV_S_OK:
		return req->op == XKV_OP_DELETE ? "DELETED\r\n" : "STORED\r\n";
	case XKV_S_NOT_FOUND:
		return "NOT_FOUND\r\n";
	case XKV_S_TOO_LARGE:
		return "SERVER_ERROR object too large for cache\r\n";
	case XKV_S_NO_MEMORY:
		return "SERVER_ERROR out of memory storing object\r\n";
	case XKV_S_BUSY:
		return "SERVER_ERROR busy\r\n";
	default:
		return "CLIENT_ERROR bad command line format\r\n";
	}
}

static uint16_t binary_status(enum xkv_status status)
{
	switch (status) {
	case XKV_S_OK:
		return XKV_MC_BIN_S_OK;
	case XKV_S_NOT_FOUND:
		return XKV_MC_BIN_S_NOT_FOUND;
	case XKV_S_TOO_LARGE:
		return XKV_MC_BIN_S_TOO_LARGE;
	case XKV_S_NO_MEMORY:
		return XKV_MC_BIN_S_NO_MEMORY;
	case XKV_S_BUSY:
		return XKV_MC_BIN_S_BUSY;
	default:
		return XKV_MC_BIN_S_EINVAL;
	}
}

void xkv_mc_reply_status(struct xkv_exec *x, const struct xkv_origin *from,
			 const struct xkv_msg *req, enum xkv_status status)
{
	x->stats.replies[status]++;
	/* noreply silences every ASCII reply; a quiet binary opcode only its success */
	if (req->mc.quiet && (status == XKV_S_OK || req->mc.dialect == XKV_DIALECT_MC_ASCII))
		return;
	if (req->mc.dialect == XKV_DIALECT_MC_ASCII)
		send_text(x, from, req, ascii_status_line(req, status));
	else
		send_binary(x, from, req, binary_status(status), 0,
			    status == XKV_S_OK && req->op == XKV_OP_PUT ? x->cas : 0);
}

void xkv_mc_reply_error(struct xkv_exec *x, const struct xkv_origin *from,
			const struct xkv_msg *req, enum xkv_mc_verdict v)
{
	x->stats.mc_errors++;
	if (req->mc.dialect == XKV_DIALECT_MC_ASCII)
		send_text(x, from, req, xkv_mc_error_line(v));
	else
		send_binary(x, from, req, xkv_mc_bin_error_status(v), 0, 0);
	xkv_exec_done(x, from, req, 0);
}
