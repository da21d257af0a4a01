// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

/* version 2, or 3 with the directory's extension zero (dir) */
static int xkv_encode_version(void *buf, size_t cap, const struct bench_request *req, bool dir)
{
	bool put = req->op == XKV_OP_PUT;
	struct xkv_msg msg = {
		.dir = dir,
		.op = req->op,
		.key_len = (uint16_t)req->key_len,
		.request_id = req->request_id,
		.value_len = put ? req->value_len : 0,
		.frag_offset = put ? req->frag_offset : 0,
		.frag_len = put ? req->frag_len : 0,
		.timestamp = req->timestamp,
		.token = req->token,
		.key = req->key,
		.frag = put ? req->frag : NULL,
	};

	return xkv_encode(buf, cap, &msg);
}

static int xkv_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	return xkv_encode_version(buf, cap, req, false);
}

static int xkv_dir_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	return xkv_encode_version(buf, cap, req, true);
}

static int xkv_parse_reply(const void *buf, size_t len, struct xkv_msg *reply)
{
	if (xkv_decode(buf, len, reply) != XKV_R_OK || !(reply->op & XKV_OP_REPLY))
		return -EBADMSG;
	return 0;
}

const struct bench_proto bench_proto_xkv = {
	.name = "xkv",
	.id_mask = UINT32_MAX,
	.echoes_timestamp = true,
	.encode = xkv_encode_request,
	.parse = xkv_parse_reply,
};

const struct bench_proto bench_proto_xkv_dir = {
	.name = "xkv-dir",
	.id_mask = UINT32_MAX,
	.echoes_timestamp = true,
	.ext_len = XKV_DIR_EXT_LEN,
	.encode = xkv_dir_encode_request,
	.parse = xkv_parse_reply,
};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)get_be16(p) << 16 | get_be16(p + 2);
}

/* memcached's UDP frame header: id, sequence 0 of 1 datagram, reserved. */
static void mc_put_frame(uint8_t *p, uint32_t request_id)
{
	put_be16(p, (uint16_t)request_id);
	put_be16(p + 2, 0); /* sequence */
	put_be16(p + 4, 1); /* datagrams in this message */
	put_be16(p + 6, 0);
}

/* Whether p[0..len) starts with the frame header of a one-datagram reply. */
static bool mc_frame_ok(const uint8_t *p, size_t len)
{
	return len >= MC_FRAME_HDR_LEN && get_be16(p + 2) == 0 && get_be16(p + 4) == 1;
}

/* A GET, or a PUT of its whole value: memcached takes a UDP request in one datagram. */
static bool mc_request_whole(const struct bench_request *req)
{
	if (req->op == XKV_OP_PUT)
		return !req->frag_offset && req->frag_len == req->value_len;
	return req->op == XKV_OP_GET;
}

static int mc_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	uint8_t *p = buf;
	bool put = req->op == XKV_OP_PUT;
	char tail[32];
	int tail_len;
	size_t len;

	if (!mc_request_whole(req))
		return -EINVAL;
	if (!req->key_len || req->key_len > XKV_KEY_MAX ||
	    memchr(req->key, ' ', req->key_len) || memchr(req->key, '\r', req->key_len) ||
	    memchr(req->key, '\n', req->key_len))
		return -EINVAL;
	tail_len = put ? snprintf(tail, sizeof(tail), " 0 0 %u\r\n", req->value_len)
		       : snprintf(tail, sizeof(tail), "\r\n");
	len = MC_FRAME_HDR_LEN + 4 + req->key_len + (size_t)tail_len +
	      (put ? req->value_len + 2 : 0);
	if (len > cap)
		return -ENOSPC;
	mc_put_frame(p, req->request_id);
	p += MC_FRAME_HDR_LEN;
	memcpy(p, put ? "set " : "get ", 4);
	memcpy(p + 4, req->key, req->key_len);
	p += 4 + req->key_len;
	memcpy(p, tail, (size_t)tail_len);
	p += tail_len;
	if (put) {
		memcpy(p, req->frag, req->value_len);
		memcpy(p + req->value_len, "\r\n", 2);
	}
	return (int)len;
}

/* Whether body[0..len) is exactly s. */
static bool is(const char *body, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(body, s, len);
}

/* "VALUE KEY FLAGS BYTES\r\n<data>\r\nEND\r\n": 0 with the data, or -EBADMSG. */
static int mc_parse_value(const char *body, size_t len, struct xkv_msg *reply)
{
	const char *eol = memchr(body, '\n', len), *p;
	unsigned long bytes = 0;
	int field = 0;

	if (len < 6 || memcmp(body, "VALUE ", 6) || !eol || eol[-1] != '\r')
		return -EBADMSG;
	/* KEY FLAGS BYTES, one space apart; BYTES is decimal */
	for (p = body + 6; p < eol - 1; p++) {
		if (*p == ' ') {
			if (p[-1] == ' ' || ++field > 2)
				return -EBADMSG;
		} else if (field == 2) {
			if (*p < '0' || *p > '9' || bytes > XKV_VALUE_MAX)
				return -EBADMSG;
			bytes = bytes * 10 + (unsigned long)(*p - '0');
		}
	}
	if (field != 2 || p[-1] == ' ' || bytes > XKV_VALUE_MAX)
		return -EBADMSG;
	p = eol + 1;
	if ((size_t)(body + len - p) != bytes + 7 || memcmp(p + bytes, "\r\nEND\r\n", 7))
		return -EBADMSG;
	reply->key = body + 6;
	reply->key_len = (uint16_t)((const char *)memchr(body + 6, ' ', len - 6) - (body + 6));
	reply->value_len = reply->frag_len = (uint32_t)bytes;
	reply->frag = p;
	return 0;
}

static int mc_parse_reply(const void *buf, size_t len, struct xkv_msg *reply)
{
	const uint8_t *p = buf;
	const char *body = (const char *)p + MC_FRAME_HDR_LEN;
	size_t body_len;

	if (!mc_frame_ok(p, len))
		return -EBADMSG;
	body_len = len - MC_FRAME_HDR_LEN;
	*reply = (struct xkv_msg){.request_id = get_be16(p), .op = XKV_OP_REPLY};
	if (is(body, body_len, "STORED\r\n")) {
		reply->op |= XKV_OP_PUT;
	} else if (is(body, body_len, "END\r\n")) {
		reply->op |= XKV_OP_GET;
		reply->status = XKV_S_NOT_FOUND;
	} else if (!mc_parse_value(body, body_len, reply)) {
		reply->op |= XKV_OP_GET;
	} else { /* ERROR, SERVER_ERROR ..., or garbled: an answer, and a wrong one */
		*reply = (struct xkv_msg){.request_id = get_be16(p), .op = XKV_OP_REPLY,
					  .status = XKV_S_BAD_REQUEST};
	}
	return 0;
}

/* "VALUE KEY 0 BYTES\r\n" DATA "\r\nEND\r\n" in one reply, with BYTES of 4 digits */
static uint32_t mc_value_max(uint32_t key_len, uint32_t dgram_max)
{
	/* the request, "set KEY 0 0 BYTES\r\n" DATA "\r\n", is the shorter one */
	(void)dgram_max;
	return MC_UDP_REPLY_MAX - MC_FRAME_HDR_LEN - (6 + key_len + 3 + 4 + 2) - 7;
}

const struct bench_proto bench_proto_memcached = {
	.name = "memcached",
	.id_mask = UINT16_MAX,
	.echoes_timestamp = false,
	.encode = mc_encode_request,
	.parse = mc_parse_reply,
	.value_max = mc_value_max,
};

/* memcached's binary header (its protocol_binary.h): byte offsets, network order */
enum {
	MCB_MAGIC = 0,
	MCB_OPCODE = 1,
	MCB_KEY_LEN = 2,    /* 16 bits */
	MCB_EXTRAS_LEN = 4,
	MCB_DATA_TYPE = 5,
	MCB_STATUS = 6,	    /* 16 bits; the vbucket in a request */
	MCB_BODY_LEN = 8,   /* 32 bits: extras + key + value */
	MCB_OPAQUE = 12,    /* 32 bits, echoed */
	MCB_CAS = 16,	    /* 64 bits */
};

enum {
	MCB_REQUEST = 0x80,
	MCB_RESPONSE = 0x81,
	MCB_OP_GET = 0x00,
	MCB_OP_SET = 0x01,
	MCB_OP_GETK = 0x0c,
	MCB_SET_EXTRAS_LEN = 8, /* flags, expiration */
	MCB_GET_EXTRAS_LEN = 4, /* flags */
	MCB_S_OK = 0x0000,
	MCB_S_KEY_NOT_FOUND = 0x0001,
};

static int mcb_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	uint8_t *p = buf, *h = p + MC_FRAME_HDR_LEN;
	bool put = req->op == XKV_OP_PUT;
	uint32_t extras_len = put ? MCB_SET_EXTRAS_LEN : 0;
	uint32_t body_len;
	size_t len;

	if (!mc_request_whole(req))
		return -EINVAL;
	if (put && req->value_len > XKV_VALUE_MAX)
		return -EINVAL;
	/* binary keys may hold any byte; the length limit is memcached's */
	if (!req->key_len || req->key_len > XKV_KEY_MAX)
		return -EINVAL;
	body_len = extras_len + req->key_len + (put ? req->value_len : 0);
	len = MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN + (size_t)body_len;
	if (len > cap)
		return -ENOSPC;
	mc_put_frame(p, req->request_id);
	memset(h, 0, MC_BIN_HDR_LEN); /* data type, vbucket and cas are 0 */
	h[MCB_MAGIC] = MCB_REQUEST;
	h[MCB_OPCODE] = put ? MCB_OP_SET : MCB_OP_GET;
	put_be16(h + MCB_KEY_LEN, (uint16_t)req->key_len);
	h[MCB_EXTRAS_LEN] = (uint8_t)extras_len;
	put_be32(h + MCB_BODY_LEN, body_len);
	/* the whole id: the frame's 16 bits alone would accept a reply 16 generations late */
	put_be32(h + MCB_OPAQUE, req->request_id);
	p = h + MC_BIN_HDR_LEN;
	memset(p, 0, extras_len); /* flags 0, no expiration */
	memcpy(p + extras_len, req->key, req->key_len);
	if (put)
		memcpy(p + extras_len + req->key_len, req->frag, req->value_len);
	return (int)len;
}

/*
 * The binary reply h[0..len) whose ids are trusted: 0 with the xkv op, status and value
 * in reply, or -EBADMSG when it makes no sense (lengths that disagree, an error
 * status, an opcode not asked for).
 */
static int mcb_parse_body(const uint8_t *h, size_t len, struct xkv_msg *reply)
{
	uint32_t extras_len = h[MCB_EXTRAS_LEN], key_len = get_be16(h + MCB_KEY_LEN);
	uint32_t body_len = get_be32(h + MCB_BODY_LEN);
	uint16_t status = get_be16(h + MCB_STATUS);
	const uint8_t *body = h + MC_BIN_HDR_LEN;
	bool get = h[MCB_OPCODE] == MCB_OP_GET || h[MCB_OPCODE] == MCB_OP_GETK;

	if (body_len != len - MC_BIN_HDR_LEN || extras_len + key_len > body_len ||
	    h[MCB_DATA_TYPE] != 0)
		return -EBADMSG;
	if (!get && h[MCB_OPCODE] != MCB_OP_SET)
		return -EBADMSG;
	reply->op |= get ? XKV_OP_GET : XKV_OP_PUT;
	if (status == MCB_S_KEY_NOT_FOUND) {
		/* the body is a message ("Not found") or, for GETK, the key: not a value */
		reply->status = XKV_S_NOT_FOUND;
		return 0;
	}
	if (status != MCB_S_OK)
		return -EBADMSG;
	if (!get) /* a SET is stored: nothing comes back but the header (and a cas) */
		return body_len ? -EBADMSG : 0;
	if (extras_len != MCB_GET_EXTRAS_LEN)
		return -EBADMSG;
	reply->key = body + extras_len;
	reply->key_len = (uint16_t)key_len;
	reply->value_len = reply->frag_len = body_len - extras_len - key_len;
	reply->frag = body + extras_len + key_len;
	return 0;
}

static int mcb_parse_reply(const void *buf, size_t len, struct xkv_msg *reply)
{
	const uint8_t *p = buf, *h = p + MC_FRAME_HDR_LEN;
	uint32_t opaque;

	if (!mc_frame_ok(p, len) || len < MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN ||
	    h[MCB_MAGIC] != MCB_RESPONSE)
		return -EBADMSG;
	/* the id is in both headers: when they disagree neither can be trusted */
	opaque = get_be32(h + MCB_OPAQUE);
	if ((uint16_t)opaque != get_be16(p))
		return -EBADMSG;
	*reply = (struct xkv_msg){.request_id = opaque, .op = XKV_OP_REPLY};
	if (mcb_parse_body(h, len - MC_FRAME_HDR_LEN, reply))
		*reply = (struct xkv_msg){.request_id = opaque, .op = XKV_OP_REPLY,
					  .status = XKV_S_BAD_REQUEST};
	return 0;
}

/* A SET carries the key and 8 bytes of extras, a GET hit's reply 4 bytes of flags */
static uint32_t mcb_value_max(uint32_t key_len, uint32_t dgram_max)
{
	uint32_t reply = MC_UDP_REPLY_MAX - MC_FRAME_HDR_LEN - MC_BIN_HDR_LEN - MCB_GET_EXTRAS_LEN;
	uint32_t request = dgram_max - MC_FRAME_HDR_LEN - MC_BIN_HDR_LEN - MCB_SET_EXTRAS_LEN -
			   key_len;

	return request < reply ? request : reply;
}

const struct bench_proto bench_proto_memcached_binary = {
	.name = "memcached-binary",
	.id_mask = UINT32_MAX,
	.echoes_timestamp = false,
	.encode = mcb_encode_request,
	.parse = mcb_parse_reply,
	.value_max = mcb_value_max,
};

const struct bench_proto *bench_proto_find(const char *name)
{
	static const struct bench_proto *const all[] = {&bench_proto_xkv, &bench_proto_xkv_dir,
							&bench_proto_memcached,
							&bench_proto_memcached_binary};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}
