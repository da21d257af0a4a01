/* SPDX-License-Identifier: MIT */
/*
 * Write compaction (C-4; docs/DESIGN.md, "Write compaction"): the compaction windows
 * of one worker. A window collects the PUTs to one key that reach the worker while it
 * is open, keeping the last value and, for each PUT, what its reply needs; the worker
 * (engine/worker.c) applies the last value once when the window closes and only then
 * answers every PUT it holds. This file keeps the windows and their timing rule; it
 * knows nothing of the store, the transport or the EWT.
 *
 * Not thread-safe: one per worker, touched by its thread only.
 */
#ifndef XKV_COMPACT_H
#define XKV_COMPACT_H

#include <stdbool.h>
#include <stdint.h>
#include <xkv/proto.h>

#include "proto/codec.h"
#include "proto/transport.h"

#define XKV_COMPACT_WINDOWS   4	   /* windows one worker keeps open at once */
#define XKV_COMPACT_WRITES    64   /* PUTs one window holds: the next closes it */
#define XKV_COMPACT_AHEAD     32   /* requests looked at for a second PUT to the key */
#define XKV_COMPACT_VALUE_MAX 4096 /* bytes of a value a window keeps: one datagram's */
#define XKV_COMPACT_SLO	      10   /* default SLO, in mean service times (C-4's 10x) */

/* What a held PUT's reply needs once the window's write is applied. */
struct xkv_compact_put {
	struct xkv_origin from; /* the socket it came on answers it, along its route */
	uint32_t request_id;
	uint64_t timestamp;
	struct xkv_mc_req mc; /* a memcached SET's: its reply's format; the last one's flags */
	uint64_t held_ns;     /* when the worker took it into the window */
};

struct xkv_compact_window {
	uint64_t hash;
	uint64_t deadline_ns; /* open + S x (SLO - 1) */
	uint32_t nputs;	      /* held, in arrival order; 0: the window is free */
	uint32_t value_len;   /* of the last PUT: the value the window will write */
	uint16_t key_len;
	uint8_t key[XKV_KEY_MAX];
	_Alignas(8) uint8_t value[XKV_COMPACT_VALUE_MAX];
	struct xkv_compact_put puts[XKV_COMPACT_WRITES];
};

struct xkv_compact {
	uint32_t slo;	   /* the SLO factor: a window lasts S x (slo - 1) */
	uint32_t nopen;	   /* windows holding PUTs */
	uint64_t first_ns; /* the earliest deadline of an open window */
	struct xkv_compact_window windows[XKV_COMPACT_WINDOWS];
};

/* A worker's windows, all free; slo is the SLO factor (2 or more). NULL: no memory. */
struct xkv_compact *xkv_compact_create(uint32_t slo);
void xkv_compact_destroy(struct xkv_compact *c);

/*
 * Whether req is a PUT a window can hold: its whole value in this datagram, small
 * enough, and not a coherence directory's (whose versions order its writes).
 */
bool xkv_compact_fits(const struct xkv_msg *req);

/* The open window collecting req's key, or NULL. */
struct xkv_compact_window *xkv_compact_find(struct xkv_compact *c, uint64_t hash,
					    const struct xkv_msg *req);

/*
 * Opens a window for req's key at now_ns, closing at now_ns + service_ns x (slo - 1);
 * NULL when every window is open. The caller holds req in it next.
 */
struct xkv_compact_window *xkv_compact_open(struct xkv_compact *c, uint64_t hash,
					    const struct xkv_msg *req, uint64_t now_ns,
					    uint64_t service_ns);

/*
 * Holds req (xkv_compact_fits) in win: its value becomes the window's; its reply goes
 * back to where it came from; now_ns is when it was taken. Returns true when win is
 * full now and must close.
 */
bool xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
		      const struct xkv_origin *from, uint64_t now_ns);

/* The PUT a closing window applies: its key, its last value, its last PUT's header and meta. */
struct xkv_msg xkv_compact_final(const struct xkv_compact_window *win);

/* The reply header of held PUT i: as its request would make it. */
struct xkv_msg xkv_compact_request(const struct xkv_compact_window *win, uint32_t i);

/* Frees win once its PUTs are answered. */
void xkv_compact_free(struct xkv_compact *c, struct xkv_compact_window *win);

/* An open window whose deadline is at or before now_ns, or NULL. */
struct xkv_compact_window *xkv_compact_due(struct xkv_compact *c, uint64_t now_ns);

/* Any open window, or NULL: for closing them all when the RX rings run dry. */
struct xkv_compact_window *xkv_compact_any(struct xkv_compact *c);

#endif /* XKV_COMPACT_H */
