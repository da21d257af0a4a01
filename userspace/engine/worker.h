/* SPDX-License-Identifier: MIT */
/*
 * A worker's protocol path, whatever the transport: decode, refuse and count what
 * is malformed, reassemble values in pieces, execute. One per worker thread.
 */
#ifndef XKV_WORKER_H
#define XKV_WORKER_H

#include <stdint.h>
#include <time.h>

#include "proto/reassembly.h"
#include "util/clock.h"
#include "engine/compact.h"
#include "engine/execute.h"
#include "engine/ewt.h"
#include "engine/handoff.h"
#include "engine/holds.h"
#include "engine/order.h"
#include "engine/policy.h"
#include "engine/roles_adopt.h"

struct xkv_replicas; /* engine/replicas.h: a worker only passes it on */

#define XKV_WORKER_AHEAD 64 /* requests of a batch whose hashes look-ahead keeps */

/*
 * A request seen by look-ahead: its payload, and what serving and ordering it needs
 * (its key's hash, its op and size) without decoding it again.
 */
struct xkv_ahead {
	const void *data;
	size_t len;
	uint64_t hash;
	const uint8_t *key;
	uint16_t key_len;
	uint8_t op;	    /* enum xkv_op */
	uint32_t value_len; /* a PUT's */
	bool mc;	    /* sent to the memcached port: memcached's frame and dialects */
	bool valid;	    /* decoded: the fields above are set */
	bool served;
};

/*
 * The xkv_large_keys map as minos's workers keep it: the owner of a key records its
 * value's length when it goes in pieces, and forgets it when it no longer does.
 */
struct xkv_large_keys {
	int (*record)(void *ctx, uint64_t hash, uint32_t value_len); /* 0, -E2BIG: full */
	void (*forget)(void *ctx, uint64_t hash);
	void *ctx;
};

struct xkv_worker {
	struct xkv_exec exec; /* and its counters, which are the worker's */
	const struct xkv_policy_ops *policy; /* who writes what (engine/policy.h) */
	struct xkv_reasm *reasm;
	struct xkv_ahead ahead[XKV_WORKER_AHEAD]; /* this batch's, in arrival order */
	uint32_t nahead, next_ahead;		  /* kept; the next in arrival order */
	const struct xkv_order_ops *order;	  /* in which order a batch is served */
	uint64_t rng;				  /* the order's random stream, if it draws */
	bool serving; /* a datagram was handled since the last look-ahead */
	uint64_t now_ns;	/* the time of the batch being handled */
	uint64_t round_start;	/* when this round of polling began (xkv_worker_tick) */
	uint32_t round_served;	/* datagrams, hand-offs and TCP commands served in it */
	uint64_t service_ns;	/* S: the mean busy time per request, measured over rounds */
	struct xkv_compact *compact; /* write compaction (xkv_worker_compaction); NULL: off */
	/* where a request handed to this worker is answered: its socket of the request's rx queue */
	struct xkv_tx *queue_tx[XKV_QUEUES_MAX]; /* xkv_worker_queue */
	struct xkv_tx *tx;			 /* else this, the config's */
	uint64_t next_expiry;	/* when reassembly's timeouts are next looked at */
	uint32_t id, nworkers;	/* static ownership: xkv_partition_owner(p, nworkers) */
	_Atomic uint64_t *depth; /* steering's count of this worker's queued requests, or NULL */
	/* dcrew (xkv_worker_dcrew): the xkv_ewt map, mmapped; NULL otherwise */
	struct xkv_ewt_slot *ewt;
	struct xkv_holds holds; /* every take and release of a slot's hold goes through it */
	/* minos (xkv_worker_minos); NULL otherwise */
	struct xkv_roles_sync *sync;
	struct xkv_handoffs *handoffs;
	struct xkv_large_keys large_keys;
	struct xkv_roles roles; /* as this worker adopted them */
	/* memcached over TCP (xkv_worker_mc): where a handed write's result goes */
	void (*mc_done)(void *ctx, uint64_t tag, const struct xkv_mc_result *r);
	void *mc_ctx;
	struct xkv_handoff *mc_unsent; /* results whose ring back was full, oldest first */
	struct xkv_replicas *replicas; /* the config's */
	struct xkv_hot *hot;	       /* the config's; NULL: no hot keys counted */
};

/* What a worker is made of; the roles and the EWT come after (xkv_worker_minos, _dcrew). */
struct xkv_worker_config {
	uint32_t id, nworkers;
	enum xkv_policy policy;	/* a registered one (engine/policy.h) */
	struct xkv_store *store;
	struct xkv_tx *tx;	/* its socket, answering hand-offs on queues not registered */
	const struct xkv_validate *validate; /* the anti-amplification bound, every worker's */
	struct xkv_reasm_config reasm;	     /* its reassembly's budget */
	const char *order; /* its local order's name (engine/order.h); NULL: the default */
	/* the replicated keys a directory's controller told of, every worker's; NULL: none */
	struct xkv_replicas *replicas;
	/* the hot keys each worker counts, for the directory's controller; NULL: none */
	struct xkv_hot *hot;
};

/* 0; -EINVAL for a policy or an order nobody registered, or no bound; -ENOMEM. */
int xkv_worker_init(struct xkv_worker *w, const struct xkv_worker_config *cfg);
void xkv_worker_fini(struct xkv_worker *w);

/*
 * Minos: the worker steers, owns and hands off by the roles in sync (their current
 * ones from now), through the rings in handoffs, keeping large_keys.
 */
void xkv_worker_minos(struct xkv_worker *w, struct xkv_roles_sync *sync,
		      struct xkv_handoffs *handoffs, const struct xkv_large_keys *large_keys);

/*
 * dcrew: a write is this worker's while the EWT says so (steering took its slot);
 * the worker lets it go once the write is applied and answered. With shared (the
 * server's, NULL: none), the holds the kernel dropped heal (engine/holds.h); a
 * transport whose RX rings XDP fills says with rings_read(ctx) when they were read
 * up to the marks of the server's last fence.
 */
void xkv_worker_dcrew(struct xkv_worker *w, struct xkv_ewt_slot *ewt,
		      struct xkv_holds_shared *shared, bool (*rings_read)(void *ctx),
		      void *ctx);

/*
 * Write compaction (engine/compact.h): PUTs to a key collected in a window, open until
 * S x (slo - 1) past its first PUT or until the rings run dry, applied once, then
 * answered. Returns 0, or -ENOMEM.
 */
int xkv_worker_compaction(struct xkv_worker *w, uint32_t slo);

/*
 * This worker's socket tx receives rx queue `queue` (below XKV_QUEUES_MAX): a request
 * another worker hands it from that queue is answered through it, where the client
 * expects its reply. A transport with one socket need not call it.
 */
void xkv_worker_queue(struct xkv_worker *w, uint32_t queue, struct xkv_tx *tx);

/*
 * The rings workers hand requests over (minos brings its own): memcached's writes
 * over TCP need them under every policy.
 */
void xkv_worker_handoff_rings(struct xkv_worker *w, struct xkv_handoffs *handoffs);

/* Serves what other workers handed this one; returns how many. Once per batch. */
unsigned xkv_worker_handoffs(struct xkv_worker *w);

/* An fd to poll(2) beside the sockets while asleep: readable when a hand-off came; or -1. */
int xkv_worker_bell_fd(const struct xkv_worker *w);

/*
 * Around blocking (idle, or stopped for good: sleep without wake): the worker holds
 * no request, so neither reclamation nor a change of roles waits for it.
 */
void xkv_worker_sleep(struct xkv_worker *w);
void xkv_worker_wake(struct xkv_worker *w);

/*
 * The transport saw the kernel drop frames steered to this worker (its RX ring full,
 * the fill ring empty): their EWT holds may be lost, and heal at the worker's next looks.
 */
static inline void xkv_worker_kernel_dropped(struct xkv_worker *w)
{
	xkv_holds_kernel_dropped(&w->holds);
}

/*
 * A command served on one of the worker's TCP connections: its round was busy, and the
 * command counts in the mean service time, as a datagram does.
 */
static inline void xkv_worker_tcp_served(struct xkv_worker *w)
{
	w->round_served++;
}

/* The worker's counters as of now, reassembly's included. */
void xkv_worker_counters(const struct xkv_worker *w, struct xkv_request_counters *out);

/* Once per round of polling, first: the time, and now and then the reassembly timeouts. */
void xkv_worker_tick(struct xkv_worker *w, uint64_t now_ns);

/*
 * Once per round, last, whatever the round served: counts its busy time (S is
 * measured from it), adopts new roles, closes the compaction windows whose time is
 * up, and moves a heal on; dry says that the worker's rings held nothing more, and
 * every window closes now.
 */
void xkv_worker_round_end(struct xkv_worker *w, bool dry);

/*
 * A batch (struct xkv_rx's, with w as its context): look-ahead over all of it (each
 * request decoded once, its key hashed, its bucket loading: MICA's prefetch), then
 * each datagram served in the worker's local order (engine/order.h). Steering counted
 * each in *depth; a datagram takes it off once it is handled, so that a worker busy
 * with a large request looks busy to steering. A datagram sent to the memcached port
 * (proto/mc_udp.h) is served as xkv's are and answered in its own dialect; what is
 * malformed is answered memcached's error or dropped (mc_errors, mc_dropped).
 */
void xkv_worker_batch(void *w, const struct xkv_dgram *d, unsigned n);

/*
 * A batch taken one step at a time, in arrival order (what xkv_worker_batch does
 * under the fifo order), for a caller that looks between steps: every datagram to
 * look_ahead first, then each to datagram; mc_: sent to the memcached port.
 */
void xkv_worker_look_ahead(void *w, const void *data, size_t len);
void xkv_worker_mc_look_ahead(void *w, const void *data, size_t len);
void xkv_worker_datagram(void *w, const struct xkv_origin *from, const void *data, size_t len);
void xkv_worker_mc_datagram(void *w, const struct xkv_origin *from, const void *data, size_t len);

/* How a transport hands its batches to worker w; mc_port is memcached's (0: none). */
static inline struct xkv_rx xkv_worker_rx(struct xkv_worker *w, uint16_t mc_port)
{
	return (struct xkv_rx){.batch = xkv_worker_batch, .mc_port = mc_port, .ctx = w};
}

#endif /* XKV_WORKER_H */
