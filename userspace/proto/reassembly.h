/* SPDX-License-Identifier: MIT */
/*
 * Reassembly of values that span several datagrams, per worker (single thread).
 * Bounded: a memory budget for buffered values, a maximum number of messages in
 * flight, at most XKV_REASM_GAPS holes per message, and a timeout after the last
 * piece. Pieces may come in any order and more than once.
 */
#ifndef XKV_REASSEMBLY_H
#define XKV_REASSEMBLY_H

#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/peer.h"

#define XKV_REASM_GAPS 32 /* disjoint received ranges kept per message */

struct xkv_reasm_msg;

struct xkv_reasm_config {
	size_t memory_limit;  /* bytes of values being reassembled */
	uint32_t max_messages;/* messages in flight */
	uint64_t timeout_ns;  /* a message with no new piece for this long is dropped */
	/* Told of each message dropped unfinished (timeout, too scattered), or NULL. */
	void (*dropped)(void *ctx, const struct xkv_reasm_msg *msg);
	void *ctx;
};

struct xkv_reasm_stats {
	uint64_t in_flight;
	uint64_t bytes;	     /* buffered now */
	uint64_t completed;
	uint64_t duplicates; /* pieces whose bytes had all arrived before */
	uint64_t timeouts;   /* messages dropped unfinished */
	uint64_t no_room;    /* first pieces refused: budget or message limit */
	uint64_t mismatches; /* pieces that contradict their message's earlier pieces */
	uint64_t too_scattered; /* messages dropped for more than XKV_REASM_GAPS holes */
};

/* A complete message, valid until xkv_reasm_release. */
struct xkv_reasm_msg {
	struct xkv_peer peer;
	struct xkv_msg head; /* the header fields; key points to a copy, frag to the value */
	uint32_t pieces;     /* pieces it took, duplicates included: dcrew holds a write for each */
};

enum xkv_reasm_result {
	XKV_REASM_PENDING = 0,	/* kept; more pieces to come */
	XKV_REASM_COMPLETE = 1, /* *done is the whole message */
};

struct xkv_reasm;

struct xkv_reasm *xkv_reasm_create(const struct xkv_reasm_config *cfg);
void xkv_reasm_destroy(struct xkv_reasm *r);

/*
 * Adds one valid piece (xkv_decode accepted it) from peer at time now_ns. Returns
 * XKV_REASM_PENDING, XKV_REASM_COMPLETE with *done set, or -ENOMEM (no room: the
 * caller answers NO_MEMORY or BUSY), -EINVAL (the piece contradicts earlier pieces
 * of its message) or -E2BIG (too many holes; the message is dropped, and `dropped`
 * told). On an error the piece is not taken.
 */
int xkv_reasm_add(struct xkv_reasm *r, const struct xkv_peer *peer, const struct xkv_msg *piece,
		  uint64_t now_ns, struct xkv_reasm_msg **done);

void xkv_reasm_release(struct xkv_reasm *r, struct xkv_reasm_msg *msg);

/* Drops messages idle since before now_ns - timeout; returns how many. */
unsigned xkv_reasm_expire(struct xkv_reasm *r, uint64_t now_ns);

void xkv_reasm_get_stats(const struct xkv_reasm *r, struct xkv_reasm_stats *stats);

#endif /* XKV_REASSEMBLY_H */
