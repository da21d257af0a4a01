/* SPDX-License-Identifier: MIT */
/*
 * What the load generator says on the wire, apart from how it is sent and what it
 * asks: a protocol turns one request into one datagram and one datagram into a
 * reply, so that the loop and the workload's checks are the same for every server.
 *
 * xkv: the xkv datagram (include/xkv/proto.h); the reply echoes the 32-bit request
 * id and the request's timestamp. xkv-dir: the same in version 3, its extension
 * zero, as a coherence directory's clients send it (docs/DIRECTORY.md).
 *
 * memcached: the ASCII protocol over UDP. Each datagram starts with memcached's
 * 8-byte frame header: request id, sequence number, datagrams in the message,
 * reserved, 16 bits each in network order. The id is the low 16 bits of the loop's
 * request id, which the loop keeps unique among requests outstanding (its depth is
 * at most 4096, so they differ in their low 12 bits); there is no timestamp to echo.
 * Replies must fit one datagram (sequence 0 of 1).
 *
 * memcached-binary: the binary protocol over UDP, in the same frame. After the frame
 * header comes the 24-byte binary header (magic 0x80, opcode, key length, extras
 * length, data type 0, vbucket 0, body length, opaque, cas 0), then extras, key and
 * value: GET (0x00) carries the key, SET (0x01) flags 0 and expiration 0 as extras,
 * the key and the value. The opaque carries the whole 32-bit request id, and a reply
 * counts only when the frame's id is the opaque's low 16 bits: the loop then matches
 * all 32 bits, so a reply 16 generations late is late, not an answer. A reply has
 * magic 0x81: status 0 is a hit (4 bytes of flags, the value) or stored, status 1 a
 * miss, any other status or a body length that disagrees with the datagram an answer
 * that is wrong. A reply too short for both headers, with another magic, or whose
 * two ids differ, is no reply.
 */
#ifndef XKV_BENCH_PROTO_H
#define XKV_BENCH_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

#define MC_FRAME_HDR_LEN 8u
#define MC_BIN_HDR_LEN	 24u /* memcached's binary header, after the frame header */
#define MC_UDP_REPLY_MAX 1400u /* memcached splits a longer UDP reply into datagrams */

struct bench_request {
	uint8_t op; /* XKV_OP_GET or XKV_OP_PUT */
	uint32_t request_id;
	uint64_t timestamp;
	uint64_t token; /* xkv: the server's validation token, 0: none (docs/PROTOCOL.md) */
	const uint8_t *key;
	uint32_t key_len;
	uint32_t value_len;	/* PUT only: the whole value's length */
	uint32_t frag_offset;	/* the piece of it this datagram carries */
	uint32_t frag_len;
	const uint8_t *frag;	/* frag_len bytes at frag_offset */
};

struct bench_proto {
	const char *name;
	uint32_t id_mask;      /* the request id bits a reply carries back */
	bool echoes_timestamp; /* whether a reply's timestamp must be the request's */
	uint32_t ext_len;      /* xkv: bytes between the header and the key */
	/* Writes req into buf; returns the datagram length, -ENOSPC or -EINVAL. */
	int (*encode)(void *buf, size_t cap, const struct bench_request *req);
	/*
	 * Reads a reply into the fields of reply that workload_check_reply judges (op
	 * with XKV_OP_REPLY, status, value_len, frag_offset, frag_len, frag) and its
	 * request_id and timestamp. Returns -EBADMSG when the datagram is no reply
	 * (its id cannot be trusted); a reply whose body makes no sense still names
	 * its request and comes back with op XKV_OP_REPLY alone and XKV_S_BAD_REQUEST.
	 */
	int (*parse)(const void *buf, size_t len, struct xkv_msg *reply);
	/*
	 * The largest value whose request fits a datagram of dgram_max bytes and whose
	 * reply the server sends in one, with keys of key_len bytes; NULL: values of
	 * any size go in pieces.
	 */
	uint32_t (*value_max)(uint32_t key_len, uint32_t dgram_max);
};

extern const struct bench_proto bench_proto_xkv;
/* xkv's version 3, the directory's extension zero: through a coherence directory */
extern const struct bench_proto bench_proto_xkv_dir;
extern const struct bench_proto bench_proto_memcached;
extern const struct bench_proto bench_proto_memcached_binary;

/* The protocol called name ("xkv", "memcached", "memcached-binary"), or NULL. */
const struct bench_proto *bench_proto_find(const char *name);

#endif /* XKV_BENCH_PROTO_H */
