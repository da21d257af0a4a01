// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "proto/codec.h"

enum xkv_reason xkv_decode(const void *buf, size_t len, struct xkv_msg *msg)
{
	enum xkv_reason reason;
	struct xkv_hdr h;

	if (len > UINT32_MAX)
		return XKV_R_BAD_LENGTH;
	if (len < sizeof(h))
		return XKV_R_TRUNCATED;
	/* a copy: in a frame the header sits at any alignment (offset 42 behind Ethernet/IPv4/UDP) */
	memcpy(&h, buf, sizeof(h));
	reason = xkv_hdr_check(&h, (uint32_t)len);
	if (reason != XKV_R_OK)
		return reason;

	msg->op = h.op;
	msg->status = h.status;
	msg->key_len = xkv_be16(h.key_len);
	msg->request_id = xkv_be32(h.request_id);
	msg->value_len = xkv_be32(h.value_len);
	msg->frag_offset = xkv_be32(h.frag_offset);
	msg->frag_len = xkv_be32(h.frag_len);
	msg->timestamp = xkv_be64(h.timestamp);
	msg->token = xkv_be64(h.token);
	msg->mc = (struct xkv_mc_req){.dialect = XKV_DIALECT_XKV};
	msg->dir = h.version == XKV_DIR_VERSION;
	if (msg->dir)
		memcpy(&msg->ext, (const uint8_t *)buf + sizeof(h), sizeof(msg->ext));
	msg->key = (const uint8_t *)buf + xkv_msg_hdr_len(msg);
	msg->frag = (const uint8_t *)msg->key + msg->key_len;
	return XKV_R_OK;
}

int xkv_encode_hdr(void *buf, const struct xkv_msg *msg)
{
	size_t len = xkv_msg_hdr_len(msg) + (size_t)msg->key_len + msg->frag_len;
	struct xkv_hdr h = {
		.magic = xkv_be16(XKV_MAGIC),
		.version = msg->dir ? XKV_DIR_VERSION : XKV_VERSION,
		.op = msg->op,
		.status = msg->status,
		.flags = msg->dir ? XKV_F_DIR : 0,
		.key_len = xkv_be16(msg->key_len),
		.request_id = xkv_be32(msg->request_id),
		.value_len = xkv_be32(msg->value_len),
		.frag_offset = xkv_be32(msg->frag_offset),
		.frag_len = xkv_be32(msg->frag_len),
		.timestamp = xkv_be64(msg->timestamp),
		.token = xkv_be64(msg->token),
	};

	/* the receiver's rules, applied to the header as it would arrive */
	if (len > UINT32_MAX || xkv_hdr_check(&h, (uint32_t)len) != XKV_R_OK)
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (msg->dir)
		memcpy((uint8_t *)buf + sizeof(h), &msg->ext, sizeof(msg->ext));
	return (int)len;
}

int xkv_encode(void *buf, size_t cap, const struct xkv_msg *msg)
{
	uint8_t hdr[sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN], *p = buf;
	size_t hdr_len = xkv_msg_hdr_len(msg);
	int len;

	len = xkv_encode_hdr(hdr, msg);
	if (len < 0)
		return len;
	if ((size_t)len > cap)
		return -ENOSPC;
	memcpy(p, hdr, hdr_len);
	if (msg->key_len)
		memcpy(p + hdr_len, msg->key, msg->key_len);
	if (msg->frag_len)
		memcpy(p + hdr_len + msg->key_len, msg->frag, msg->frag_len);
	return len;
}

enum xkv_status xkv_status_from_errno(int err)
{
	switch (err) {
	case 0:
		return XKV_S_OK;
	case -ENOENT:
		return XKV_S_NOT_FOUND;
	case -E2BIG:
		return XKV_S_TOO_LARGE;
	case -ENOMEM:
		return XKV_S_NO_MEMORY;
	case -EBUSY:
	case -EAGAIN:
		return XKV_S_BUSY;
	default:
		return XKV_S_BAD_REQUEST;
	}
}
