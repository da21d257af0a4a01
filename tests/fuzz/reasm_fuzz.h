/* SPDX-License-Identifier: MIT */
/* What the two reassembly harnesses share: a reassembler under test and its limits. */
#ifndef XKV_REASM_FUZZ_H
#define XKV_REASM_FUZZ_H

#include "proto/reassembly.h"

#define REASM_FUZZ_PEERS 4

#define REASM_FUZZ_DROPS 64 /* messages one call may drop that are remembered */

struct reasm_fuzz {
	struct xkv_reasm *r;
	struct xkv_reasm_config cfg;
	uint64_t dropped; /* messages the dropped hook was told of */
	/* the latest ones, for a harness to clear before a call and read after it */
	struct xkv_peer drop_peer[REASM_FUZZ_DROPS];
	uint32_t drop_id[REASM_FUZZ_DROPS];
	uint32_t ndrops;
};

void reasm_fuzz_open(struct reasm_fuzz *f, uint32_t max_messages, size_t memory_limit,
		     uint64_t timeout_ns);

/*
 * Checks the limits after a call: bytes charged within the budget, messages in
 * flight within the limit, every message dropped unfinished (timeout, too scattered,
 * evicted) told to the hook. Returns the stats.
 */
struct xkv_reasm_stats reasm_fuzz_check(const struct reasm_fuzz *f);

/* Closes f, adding its stats to the totals a replay checks. */
void reasm_fuzz_close(struct reasm_fuzz *f);

/* The totals over every input so far. */
const struct xkv_reasm_stats *reasm_fuzz_totals(void);

/* For fuzz_replay_done: 0 if the inputs completed, duplicated, expired, found no room,
 * contradicted and came late at least once each, else 1. */
int reasm_fuzz_reached(void);

/* Peer i of REASM_FUZZ_PEERS: two that differ only in the port, two only in the address. */
const struct xkv_peer *reasm_fuzz_peer(unsigned i);

/* The status a harness gives a message of request id before releasing it: the one a
 * late piece of it must be told. */
int reasm_fuzz_status(uint32_t request_id);

#endif /* XKV_REASM_FUZZ_H */
