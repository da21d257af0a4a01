/* SPDX-License-Identifier: MIT */
/*
 * Reassembly of values that span several datagrams, per worker (single thread).
 * Bounded: a memory budget for buffered values, a maximum number of messages in
 * flight, at most XKV_REASM_GAPS holes per message, and a timeout after the last
 * piece. Pieces may come in any order and more than once.
 *
 * What a message costs follows what its source sent: a value of XKV_REASM_MAP_MIN
 * bytes or more is mapped, not allocated, and is charged the pages its pieces
 * touched, not its value_len. A source (an address, any port) is held to a fair
 * share when memory or messages run short: a source holding more than the budget
 * divided among the sources present loses its oldest messages (`dropped` is told)
 * to a source under its share. Pieces of a message completed less than the
 * timeout ago are ignored (XKV_REASM_LATE), so a retransmission opens nothing; the
 * status its reply had is kept for the caller to answer a resent PUT again.
 */
#ifndef XKV_REASSEMBLY_H
#define XKV_REASSEMBLY_H

#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/peer.h"

#define XKV_REASM_GAPS	  32	      /* disjoint received ranges kept per message */
#define XKV_REASM_MAP_MIN (16u << 10) /* values this big are mapped and charged by page */

struct xkv_reasm_msg;

struct xkv_reasm_config {
	size_t memory_limit;  /* bytes of values being reassembled */
	uint32_t max_messages;/* messages in flight */
	uint64_t timeout_ns;  /* a message with no new piece for this long is dropped */
	/* Told of each message dropped unfinished (timeout, too scattered, evicted), or NULL. */
	void (*dropped)(void *ctx, const struct xkv_reasm_msg *msg);
	void *ctx;
};

struct xkv_reasm_stats {
	uint64_t in_flight;
	uint64_t bytes;	     /* charged now: whole small values, touched pages of mapped ones */
	uint64_t completed;
	uint64_t duplicates; /* pieces whose bytes had all arrived before */
	uint64_t timeouts;   /* messages dropped unfinished */
	uint64_t no_room;    /* first pieces refused: budget or message limit */
	uint64_t mismatches; /* pieces that contradict their message's earlier pieces */
	uint64_t too_scattered; /* messages dropped for more than XKV_REASM_GAPS holes */
	uint64_t evicted;	/* messages dropped for a source under its fair share */
	uint64_t late;		/* pieces of messages completed recently, ignored */
};

/* A complete message, valid until xkv_reasm_release. */
struct xkv_reasm_msg {
	struct xkv_peer peer;
	struct xkv_msg head; /* the header fields; key points to a copy, frag to the value */
	uint32_t pieces;     /* pieces it took, duplicates included: dcrew holds a write for each */
	int status;	     /* set by the caller before release: its reply's, -1 if not its own */
};

enum xkv_reasm_result {
	XKV_REASM_PENDING = 0,	/* kept; more pieces to come */
	XKV_REASM_COMPLETE = 1, /* *done is the whole message */
	XKV_REASM_LATE = 2,	/* a piece of a message completed recently: ignored */
};

struct xkv_reasm;

struct xkv_reasm *xkv_reasm_create(const struct xkv_reasm_config *cfg);
void xkv_reasm_destroy(struct xkv_reasm *r);

/*
 * Adds one valid piece (xkv_decode accepted it) from peer at time now_ns. Returns
 * XKV_REASM_PENDING, XKV_REASM_COMPLETE with *done set, XKV_REASM_LATE (the piece
 * belongs to no message: whatever the caller holds for it is its own to let go),
 * or -ENOMEM (no room within the source's share: the caller answers NO_MEMORY or
 * BUSY), -EINVAL (the piece contradicts earlier pieces of its message) or -E2BIG
 * (too many holes; the message is dropped, and `dropped` told). On an error the
 * piece is not taken. Making room may drop other sources' messages (`dropped`).
 */
int xkv_reasm_add(struct xkv_reasm *r, const struct xkv_peer *peer, const struct xkv_msg *piece,
		  uint64_t now_ns, struct xkv_reasm_msg **done);

/* Frees msg; its peer, request id and status are kept for the timeout (XKV_REASM_LATE). */
void xkv_reasm_release(struct xkv_reasm *r, struct xkv_reasm_msg *msg);

/* After XKV_REASM_LATE: the status of the late piece's message (-1: none kept). */
int xkv_reasm_late_status(const struct xkv_reasm *r);

/* Drops messages idle since before now_ns - timeout; returns how many. */
unsigned xkv_reasm_expire(struct xkv_reasm *r, uint64_t now_ns);

void xkv_reasm_get_stats(const struct xkv_reasm *r, struct xkv_reasm_stats *stats);

#endif /* XKV_REASSEMBLY_H */
