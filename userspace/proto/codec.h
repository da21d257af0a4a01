/* SPDX-License-Identifier: MIT */
/* Strict encoder and decoder for one xkv datagram (include/xkv/proto.h). */
#ifndef XKV_CODEC_H
#define XKV_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xkv/maps.h> /* xkv_reason_name() for every reason */
#include <xkv/proto.h>

#include "proto/mc_cmd.h"

/* The protocol a request came in; xkv's own is 0, what xkv_decode leaves. */
enum xkv_dialect {
	XKV_DIALECT_XKV,
	XKV_DIALECT_MC_ASCII,  /* memcached's text protocol over UDP (proto/mc_udp.h) */
	XKV_DIALECT_MC_BINARY, /* memcached's binary protocol over UDP */
	XKV_DIALECT_MC_TCP,    /* a write from a TCP session (proto/mc_text.h), which answers it */
};

/* What a memcached request carries beside xkv's fields, for its execution and its reply. */
struct xkv_mc_req {
	uint8_t dialect;    /* enum xkv_dialect */
	uint8_t opcode;	    /* binary: the request's, echoed in its reply */
	bool quiet;	    /* noreply, or a quiet binary opcode: nothing sent on success */
	bool with_cas;	    /* gets, binary GET*: the reply carries the item's CAS */
	bool with_key;	    /* binary GETK, GETKQ: the reply carries the key */
	uint16_t size;	    /* the request datagram's bytes, frame included: amplification */
	uint32_t opaque;    /* binary: echoed in its reply */
	struct xkv_mc_cmd cmd; /* a write's */
	const char *keys;   /* ASCII get: the keys after the first, in the datagram */
	uint16_t keys_len;
};

/*
 * One request in host byte order: a datagram's, or a write a memcached session made
 * (XKV_DIALECT_MC_TCP); key and frag point into what it came in.
 */
struct xkv_msg {
	uint8_t op;	     /* enum xkv_op, XKV_OP_REPLY set in replies */
	uint8_t status;	     /* enum xkv_status; 0 in requests */
	uint16_t key_len;
	uint32_t request_id; /* memcached: the UDP frame's 16-bit request id */
	uint32_t value_len;  /* bytes of the whole value */
	uint32_t frag_offset;/* where frag goes within the value */
	uint32_t frag_len;
	uint64_t timestamp;
	uint64_t token;	     /* the validation token; 0: none */
	bool dir;	     /* version 3: the directory's extension in ext, as on the wire */
	struct xkv_dir_ext ext; /* what the directory filled in; a reply echoes it */
	const void *key;
	const void *frag;
	struct xkv_mc_req mc; /* memcached's; dialect XKV_DIALECT_XKV for xkv's requests */
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
 * Writes only the header for msg into buf (xkv_msg_hdr_len bytes: the extension too,
 * in version 3), for a caller that has put the key and value in place after it.
 * Returns the datagram length or -EINVAL.
 */
int xkv_encode_hdr(void *buf, const struct xkv_msg *msg);

/* Whether a coherence directory steered msg: its extension carries the key's hash, a version. */
static inline bool xkv_msg_steered(const struct xkv_msg *msg)
{
	return msg->dir && (msg->ext.dflags & XKV_DIR_STEERED);
}

/* The bytes before msg's key: the header, and the directory's extension if it has one. */
static inline size_t xkv_msg_hdr_len(const struct xkv_msg *msg)
{
	return sizeof(struct xkv_hdr) + (msg->dir ? XKV_DIR_EXT_LEN : 0);
}

/* Reply status for a store error (0 or -errno). */
enum xkv_status xkv_status_from_errno(int err);

#endif /* XKV_CODEC_H */
