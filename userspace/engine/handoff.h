/* SPDX-License-Identifier: MIT */
/*
 * Requests one worker passes to another under minos (docs/DESIGN.md): a GET for a
 * large value a small worker met, to the large worker of its class; a large PUT's
 * item, built by the large worker, to the partition's owner, which links it in;
 * a write that steering sent by other roles, to its owner. One lock-free
 * single-producer ring per ordered pair of workers carries them; a message is
 * allocated by its sender and freed by its receiver, off the small requests' path.
 */
#ifndef XKV_ENGINE_HANDOFF_H
#define XKV_ENGINE_HANDOFF_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/mc_cmd.h"
#include "proto/codec.h"
#include "proto/transport.h"
#include "store/store.h"
#include "util/spsc.h"

#define XKV_HANDOFF_RING 256 /* messages in flight from one worker to another */

enum xkv_handoff_kind {
	XKV_HANDOFF_GET,     /* serve the GET: the value is large */
	XKV_HANDOFF_WRITE,   /* execute the write: you own its partition */
	XKV_HANDOFF_INSTALL, /* link the item in and answer the PUT: you own its partition */
	XKV_HANDOFF_MC_WRITE, /* apply the memcached write: you are its partition's writer */
	XKV_HANDOFF_MC_DONE,  /* ... its result, back to the worker whose connection waits */
};

struct xkv_handoff {
	enum xkv_handoff_kind kind;
	struct xkv_origin from; /* a datagram's: the answer goes back the way it came */
	struct xkv_msg req;	/* its key, and a write's value, point into data */
	uint64_t hash;
	struct xkv_item *item; /* INSTALL: built, not yet linked */
	/* MC_WRITE, MC_DONE: a TCP session's write's result, and who waits for it */
	struct xkv_mc_result mc_result;
	uint32_t origin;
	uint64_t tag;		    /* the origin's, to find the waiting connection again */
	struct xkv_handoff *next;   /* MC_DONE not yet pushed: the ring back was full */
	uint64_t started_ns;	    /* when the sender started the request: timed requests only */
	uint8_t data[];
};

/* How a worker asleep in poll(2) learns of a message: an eventfd among what it polls. */
struct xkv_handoff_bell {
	alignas(64) _Atomic bool asleep;
	int fd;
};

/* The rings between n workers, ring[from * n + to], and each worker's bell. */
struct xkv_handoffs {
	uint32_t n;
	struct xkv_spsc *ring;
	struct xkv_handoff_bell *bell;
};

int xkv_handoffs_init(struct xkv_handoffs *h, uint32_t n);
/* Frees the messages still queued, and their items. No worker may use h any more. */
void xkv_handoffs_fini(struct xkv_handoffs *h);

/*
 * A message for req, answered to where it came from (a datagram's origin; NULL for a
 * TCP session's write, whose sender sets origin and tag); a WRITE or MC_WRITE carries
 * the request's value with it. NULL when memory is short.
 */
struct xkv_handoff *xkv_handoff_new(enum xkv_handoff_kind kind, const struct xkv_origin *from,
				    const struct xkv_msg *req, uint64_t hash);
/* Frees a message, and its item if it still holds one. */
void xkv_handoff_free(struct xkv_handoff *m);

/*
 * False: the ring from `from` to `to` is full; the message stays the caller's. Rings
 * the bell of a receiver asleep.
 */
bool xkv_handoffs_push(struct xkv_handoffs *h, uint32_t from, uint32_t to,
		       struct xkv_handoff *m);

/* The next message from `from` to `to`, or NULL. */
static inline struct xkv_handoff *xkv_handoffs_pop(struct xkv_handoffs *h, uint32_t from,
						   uint32_t to)
{
	return xkv_spsc_pop(&h->ring[from * h->n + to]);
}

/*
 * Worker id is about to block in poll(2) on its bell's fd (xkv_handoffs_bell_fd)
 * among others, and is done when it wakes. A message pushed in between rings it.
 */
void xkv_handoffs_sleep(struct xkv_handoffs *h, uint32_t id);
void xkv_handoffs_wake(struct xkv_handoffs *h, uint32_t id);

static inline int xkv_handoffs_bell_fd(const struct xkv_handoffs *h, uint32_t id)
{
	return h->bell[id].fd;
}

#endif /* XKV_ENGINE_HANDOFF_H */
