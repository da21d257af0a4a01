/* SPDX-License-Identifier: MIT */
/* Strict encoder and decoder for one xkv datagram (include/xkv/proto.h). */
#ifndef XKV_CODEC_H
#define XKV_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <xkv/maps.h> /* xkv_reason_name() for every reason */
#include <xkv/proto.h>

/* One datagram in host byte order; key and frag point into the datagram. */
struct xkv_msg {
	uint8_t op;	     /* enum xkv_op, XKV_OP_REPLY set in replies */
	uint8_t status;	     /* enum xkv_status; 0 in requests */
	uint16_t key_len;
	uint32_t request_id;
	uint32_t value_len;  /* bytes of the whole value */
	uint32_t frag_offset;/* where frag goes within the value */
	uint32_t frag_len;
	uint64_t timestamp;
	uint64_t token;	     /* the validation token; 0: none */
	const void *key;
	const void *frag;
};

/*
 * Decodes the datagram buf[0..len) into msg. Returns XKV_R_OK or the reason it is
 * rejected; msg is only valid on XKV_R_OK.
 */
enum xkv_reason xkv_decode(const void *buf, size_t len, struct xkv_msg *msg);

/*
 * Encodes msg into buf. Returns the datagram length, or -EINVAL if msg would not
 * decode (the encoder refuses to send what a receiver must reject), or -ENOSPC if
 * buf is too small.
 */
int xkv_encode(void *buf, size_t cap, const struct xkv_msg *msg);

/*
 * Writes only the header for msg into buf (40 bytes), for a caller that has put
 * the key and value in place after it. Returns the datagram length or -EINVAL.
 */
int xkv_encode_hdr(void *buf, const struct xkv_msg *msg);

/* Reply status for a store error (0 or -errno). */
enum xkv_status xkv_status_from_errno(int err);

#endif /* XKV_CODEC_H */
