/* SPDX-License-Identifier: MIT */
/*
 * memcached over UDP (include/xkv/memcached.h): the frame, then the key of an ASCII
 * or a binary request, read into what steering needs. Each fault is dropped under
 * the xkv protocol's reason for the same fault (docs/PROTOCOL.md, "memcached over
 * UDP"). Included by xkv.bpf.c alone: it defines global functions, which the
 * verifier walks once each, whatever the header layout and command that reach them.
 */
#ifndef XKV_BPF_MEMCACHED_H
#define XKV_BPF_MEMCACHED_H

#include "parse.h"
#include "steer.h"
#include "xkv/memcached.h"

/* The most bytes one scan looks at: a key and its end, or a set's line after its key. */
#define XKV_MC_SCAN_MAX 256

/*
 * Bytes from offset from (counted from ctx->data) to the first that ends an ASCII key
 * (xkv_mc_key_end), or with line set to the first '\n'; reading nothing at or past
 * offset end (the datagram's end) and at most max (up to XKV_MC_SCAN_MAX) bytes.
 * max when none of them ends it, -1 when the datagram ends first.
 */
__noinline int xkv_mc_span(struct xdp_md *ctx, __u32 from, __u32 end, __u32 max, __u32 line)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (from > XKV_KEY_OFF_MAX || max > XKV_MC_SCAN_MAX)
		return -1;
	for (__u32 i = 0; i < XKV_MC_SCAN_MAX; i++) {
		const __u8 *c = data + from + i;

		if (i == max)
			return max;
		if (from + i >= end || (void *)(c + 1) > data_end)
			return -1;
		if (line ? *c == '\n' : xkv_mc_key_end(*c))
			return i;
	}
	return max;
}

/*
 * An ASCII request at offset off, len bytes: "get KEY ...", "gets KEY ...", "delete
 * KEY ..." or "set KEY FLAGS EXPTIME BYTES ...\r\n" and the value with its "\r\n".
 * A get of several keys is steered by its first. A set's value is what the datagram
 * holds after the line: the worker checks it against BYTES.
 */
static __always_inline int xkv_mc_ascii(struct xdp_md *ctx, __u32 off, __u32 len,
					struct xkv_request *req)
{
	void *data_end = (void *)(long)ctx->data_end;
	const __u8 *c = (const __u8 *)(long)ctx->data + off;
	__u32 at, end = off + len, line_end;
	int key_len, tail;

	/* the longest command word, "delete ", is read only once the shorter ones failed */
	if (len < 4 || (void *)(c + 4) > data_end)
		return XKV_R_TRUNCATED;
	if (c[0] == 'g' && c[1] == 'e' && c[2] == 't' && c[3] == ' ') {
		req->op = XKV_OP_GET, at = 4;
	} else if (c[0] == 's' && c[1] == 'e' && c[2] == 't' && c[3] == ' ') {
		req->op = XKV_OP_PUT, at = 4;
	} else if (c[0] == 'g' && c[1] == 'e' && c[2] == 't' && c[3] == 's') {
		if (len < 5 || (void *)(c + 5) > data_end)
			return XKV_R_TRUNCATED;
		if (c[4] != ' ')
			return XKV_R_BAD_OP;
		req->op = XKV_OP_GET, at = 5;
	} else if (c[0] == 'd' && c[1] == 'e' && c[2] == 'l' && c[3] == 'e') {
		if (len < 7 || (void *)(c + 7) > data_end)
			return XKV_R_TRUNCATED;
		if (c[4] != 't' || c[5] != 'e' || c[6] != ' ')
			return XKV_R_BAD_OP;
		req->op = XKV_OP_DELETE, at = 7;
	} else {
		return XKV_R_BAD_OP;
	}
	key_len = xkv_mc_span(ctx, off + at, end, XKV_KEY_MAX + 1, 0);
	if (key_len < 0)
		return XKV_R_TRUNCATED;
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return XKV_R_BAD_KEY_LEN;
	req->key_off = off + at;
	req->key_len = key_len;
	req->value_len = 0;
	if (req->op == XKV_OP_PUT) {
		tail = xkv_mc_span(ctx, off + at + key_len, end, XKV_MC_SCAN_MAX, 1);
		if (tail < 0)
			return XKV_R_TRUNCATED;
		line_end = off + at + key_len + tail + 1; /* past the '\n' */
		/* a line longer than XDP reads, or no "\r\n" after the value */
		if (tail == XKV_MC_SCAN_MAX || end - line_end < 2)
			return XKV_R_BAD_LENGTH;
		req->value_len = end - line_end - 2;
	}
	req->frag_len = req->value_len; /* one datagram holds a memcached request whole */
	return XKV_R_OK;
}

/*
 * A binary request at offset off, len bytes: the 24-byte header, extras, key and
 * value, with the extras its opcode takes and a body length that is the datagram's.
 */
static __always_inline int xkv_mc_binary(struct xdp_md *ctx, __u32 off, __u32 len,
					 struct xkv_request *req)
{
	void *data_end = (void *)(long)ctx->data_end;
	const struct xkv_mc_bin_hdr *h = (const void *)(long)ctx->data + off;
	__u32 extras = 0, key_len, body_len, value_len;

	if (len < sizeof(*h) || (void *)(h + 1) > data_end)
		return XKV_R_TRUNCATED;
	switch (h->opcode) {
	case XKV_MC_BIN_GET:
	case XKV_MC_BIN_GETQ:
	case XKV_MC_BIN_GETK:
	case XKV_MC_BIN_GETKQ:
		req->op = XKV_OP_GET;
		break;
	case XKV_MC_BIN_SET:
	case XKV_MC_BIN_SETQ:
		req->op = XKV_OP_PUT;
		extras = XKV_MC_SET_EXTRAS;
		break;
	case XKV_MC_BIN_DELETE:
	case XKV_MC_BIN_DELETEQ:
		req->op = XKV_OP_DELETE;
		break;
	default:
		return XKV_R_BAD_OP;
	}
	key_len = xkv_be16(h->key_len);
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return XKV_R_BAD_KEY_LEN;
	body_len = xkv_be32(h->body_len);
	if (h->extras_len != extras || body_len != len - sizeof(*h) || body_len < extras + key_len)
		return XKV_R_BAD_LENGTH;
	value_len = body_len - extras - key_len;
	/* only a SET carries a value */
	if (value_len && req->op != XKV_OP_PUT)
		return XKV_R_BAD_LENGTH;
	req->key_off = off + sizeof(*h) + extras;
	req->key_len = key_len;
	req->value_len = req->frag_len = value_len;
	return XKV_R_OK;
}

/*
 * The memcached request in the UDP payload at offset off (from ctx->data), len bytes
 * by the UDP length, into *req: XKV_R_OK, or the reason to drop it. The frame must
 * say one datagram, the first; the next byte picks the dialect as memcached does.
 */
__noinline int xkv_mc_parse(struct xdp_md *ctx, __u32 off, __u32 len, struct xkv_request *req)
{
	void *data_end = (void *)(long)ctx->data_end;
	const struct xkv_mc_frame *f = (const void *)(long)ctx->data + off;
	const __u8 *first = (const __u8 *)(f + 1);

	if (!req) /* the verifier checks a global function for any argument, NULL too */
		return XKV_R_BAD_CONFIG;
	if (off > XKV_KEY_OFF_MAX)
		return XKV_R_TRUNCATED;
	if (len < sizeof(*f) + 1 || (void *)(first + 1) > data_end)
		return XKV_R_TRUNCATED;
	/* a request in several datagrams: xkv takes memcached's requests whole */
	if (f->seq != 0 || f->total != bpf_htons(1))
		return XKV_R_BAD_FRAGMENT;
	if (f->reserved)
		return XKV_R_BAD_FLAGS;
	off += sizeof(*f);
	len -= sizeof(*f);
	if (*first == XKV_MC_BIN_REQUEST)
		return xkv_mc_binary(ctx, off, len, req);
	if (*first == XKV_MC_BIN_RESPONSE)
		return XKV_R_REPLY_TO_SERVER;
	return xkv_mc_ascii(ctx, off, len, req);
}

#endif /* XKV_BPF_MEMCACHED_H */
