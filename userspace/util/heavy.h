/* SPDX-License-Identifier: MIT */
/*
 * Heavy hitters of a stream of keys, as a server finds its hot keys for a directory's
 * controller (Pegasus Sec. 7.3; docs/DIRECTORY.md, "Hot keys"): a count-min sketch
 * with conservative update (Estan and Varghese, SIGCOMM'02), and the XKV_HEAVY_TOP keys
 * of highest estimate, kept whole so that they can be reported. One writer; where an
 * epoch ends is the caller's (xkv_heavy_reset).
 *
 * An estimate is never below the key's true count since the last reset, and exceeds
 * it by more than e N / XKV_HEAVY_WIDTH (N: the keys counted since) with probability at
 * most e^-XKV_HEAVY_DEPTH: 0.07 % of N, for 1.8 % of keys, at this size.
 */
#ifndef XKV_HEAVY_H
#define XKV_HEAVY_H

#include <stddef.h>
#include <stdint.h>
#include <xkv/proto.h>

#define XKV_HEAVY_DEPTH 4    /* rows: each key's estimate is the least of 4 counters */
#define XKV_HEAVY_WIDTH 4096 /* counters a row, a power of two: 64 KiB in all */
#define XKV_HEAVY_TOP	32   /* keys kept: Pegasus replicates O(n log n) of n servers */
/*
 * A key under 1/2^10 of the requests counted so far is not one to report: it enters
 * the top, or has its count there follow it, only at that share or more. Counting a
 * cold key then costs its 4 counters alone, the top untouched.
 */
#define XKV_HEAVY_SHARE_SHIFT 10

struct xkv_heavy_key {
	uint64_t hash;	/* xkv_hash of the key */
	uint64_t count; /* its estimate (xkv_heavy_top: as it reads it) */
	uint16_t len;
	uint8_t key[XKV_KEY_MAX];
};

struct xkv_heavy {
	uint32_t cell[XKV_HEAVY_DEPTH][XKV_HEAVY_WIDTH];
	struct xkv_heavy_key top[XKV_HEAVY_TOP];
	uint32_t ntop;	/* entries of top in use */
	uint32_t least; /* the entry of top with the lowest count, once it is full */
	uint64_t total; /* keys counted since the last reset */
};

/* Forgets every count: a new epoch. */
void xkv_heavy_reset(struct xkv_heavy *h);

/* One more request for key (len bytes, 1 to XKV_KEY_MAX), whose xkv_hash is hash. */
void xkv_heavy_count(struct xkv_heavy *h, const void *key, uint32_t len, uint64_t hash);

/* The estimate of the key whose xkv_hash is hash. */
uint64_t xkv_heavy_estimate(const struct xkv_heavy *h, uint64_t hash);

/* keys[0 .. n), highest count first. */
void xkv_heavy_sort(struct xkv_heavy_key *keys, size_t n);

/* Up to cap keys of the top, highest count first, into out: how many. */
size_t xkv_heavy_top(const struct xkv_heavy *h, struct xkv_heavy_key *out, size_t cap);

#endif /* XKV_HEAVY_H */
