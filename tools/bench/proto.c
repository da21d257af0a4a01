// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

static int xkv_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	bool put = req->op == XKV_OP_PUT;
	struct xkv_msg msg = {
		.op = req->op,
		.key_len = (uint16_t)req->key_len,
		.request_id = req->request_id,
		.value_len = put ? req->value_len : 0,
		.frag_offset = put ? req->frag_offset : 0,
		.frag_len = put ? req->frag_len : 0,
		.timestamp = req->timestamp,
		.key = req->key,
		.frag = put ? req->frag : NULL,
	};

	return xkv_encode(buf, cap, &msg);
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

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int mc_encode_request(void *buf, size_t cap, const struct bench_request *req)
{
	uint8_t *p = buf;
	bool put = req->op == XKV_OP_PUT;
	char tail[32];
	int tail_len;
	size_t len;

	if (req->op != XKV_OP_GET && !put)
		return -EINVAL;
	if (put && (req->frag_offset || req->frag_len != req->value_len))
		return -EINVAL; /* memcached takes a UDP request in one datagram */
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
	put_be16(p, (uint16_t)req->request_id);
	put_be16(p + 2, 0); /* sequence */
	put_be16(p + 4, 1); /* datagrams in this message */
	put_be16(p + 6, 0);
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

	if (len < MC_FRAME_HDR_LEN || get_be16(p + 2) != 0 || get_be16(p + 4) != 1)
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

const struct bench_proto bench_proto_memcached = {
	.name = "memcached",
	.id_mask = UINT16_MAX,
	.echoes_timestamp = false,
	.encode = mc_encode_request,
	.parse = mc_parse_reply,
};

const struct bench_proto *bench_proto_find(const char *name)
{
	static const struct bench_proto *const all[] = {&bench_proto_xkv, &bench_proto_memcached};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}
