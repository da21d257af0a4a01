/* SPDX-License-Identifier: MIT */
/*
 * memcached's UDP frame and binary header, defined once for the XDP program (which
 * steers memcached requests as it steers xkv's) and the workers (which answer them).
 * docs/PROTOCOL.md, "memcached over UDP", says what XDP accepts and drops.
 *
 * A UDP datagram starts with the 8-byte frame; then comes the request, in the
 * dialect its first byte names, as memcached picks it: XKV_MC_BIN_REQUEST for the
 * binary protocol, anything else for the ASCII one.
 */
#ifndef XKV_MEMCACHED_H
#define XKV_MEMCACHED_H

#include <linux/types.h>

#define XKV_MC_DEFAULT_PORT 11211
#define XKV_MC_DGRAM_MAX    1400 /* memcached splits a longer reply, frame included */

/* memcached's UDP frame header, network order. */
struct xkv_mc_frame {
	__be16 request_id; /* chosen by the client, echoed in every reply datagram */
	__be16 seq;	   /* this datagram's number in its message, from 0 */
	__be16 total;	   /* datagrams in the message: 1 for every request */
	__be16 reserved;   /* 0 */
};

_Static_assert(sizeof(struct xkv_mc_frame) == 8, "memcached's UDP frame is 8 bytes");

#define XKV_MC_BIN_REQUEST  0x80 /* magic of a binary request */
#define XKV_MC_BIN_RESPONSE 0x81 /* and of a reply */

/* memcached's binary header (its protocol_binary.h), network order. */
struct xkv_mc_bin_hdr {
	__u8 magic;	 /* XKV_MC_BIN_REQUEST or XKV_MC_BIN_RESPONSE */
	__u8 opcode;	 /* enum xkv_mc_bin_op */
	__be16 key_len;	 /* key bytes, after the extras */
	__u8 extras_len; /* bytes between this header and the key */
	__u8 data_type;	 /* 0: raw bytes */
	__be16 status;	 /* a reply's status; a request's vbucket */
	__be32 body_len; /* extras + key + value */
	__be32 opaque;	 /* chosen by the client, echoed */
	__be64 cas;
};

_Static_assert(sizeof(struct xkv_mc_bin_hdr) == 24, "memcached's binary header is 24 bytes");

/*
 * memcached's binary opcodes. Over UDP xkv serves GET, GETQ, GETK, GETKQ, SET, SETQ,
 * DELETE and DELETEQ; over TCP all but SASL's. A Q opcode answers only what a client
 * must hear.
 */
enum xkv_mc_bin_op {
	XKV_MC_BIN_GET = 0x00,
	XKV_MC_BIN_SET = 0x01,
	XKV_MC_BIN_ADD = 0x02,
	XKV_MC_BIN_REPLACE = 0x03,
	XKV_MC_BIN_DELETE = 0x04,
	XKV_MC_BIN_INCREMENT = 0x05,
	XKV_MC_BIN_DECREMENT = 0x06,
	XKV_MC_BIN_QUIT = 0x07,
	XKV_MC_BIN_FLUSH = 0x08,
	XKV_MC_BIN_GETQ = 0x09,
	XKV_MC_BIN_NOOP = 0x0a,
	XKV_MC_BIN_VERSION = 0x0b,
	XKV_MC_BIN_GETK = 0x0c,
	XKV_MC_BIN_GETKQ = 0x0d,
	XKV_MC_BIN_APPEND = 0x0e,
	XKV_MC_BIN_PREPEND = 0x0f,
	XKV_MC_BIN_STAT = 0x10,
	XKV_MC_BIN_SETQ = 0x11,
	XKV_MC_BIN_ADDQ = 0x12,
	XKV_MC_BIN_REPLACEQ = 0x13,
	XKV_MC_BIN_DELETEQ = 0x14,
	XKV_MC_BIN_INCREMENTQ = 0x15,
	XKV_MC_BIN_DECREMENTQ = 0x16,
	XKV_MC_BIN_QUITQ = 0x17,
	XKV_MC_BIN_FLUSHQ = 0x18,
	XKV_MC_BIN_APPENDQ = 0x19,
	XKV_MC_BIN_PREPENDQ = 0x1a,
	XKV_MC_BIN_TOUCH = 0x1c,
	XKV_MC_BIN_GAT = 0x1d,
	XKV_MC_BIN_GATQ = 0x1e,
	XKV_MC_BIN_GATK = 0x23,
	XKV_MC_BIN_GATKQ = 0x24,
};

#define XKV_MC_SET_EXTRAS 8 /* a SET's extras: flags, expiration; GET and DELETE have none */

/*
 * Where an ASCII key ends: at a space, or at the line's end ("\r\n" or "\n"). XDP
 * hashes the bytes before it and the worker must read the same key, so both ask this.
 */
static inline int xkv_mc_key_end(__u8 c)
{
	return c == ' ' || c == '\r' || c == '\n';
}

#endif /* XKV_MEMCACHED_H */
