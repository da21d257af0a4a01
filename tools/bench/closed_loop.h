/* SPDX-License-Identifier: MIT */
/*
 * The closed loop of one thread: it keeps `depth` requests outstanding on its
 * transport, sends whatever is ready in one batch, receives replies in batches,
 * matches them to requests by id, and sends the next request in each freed slot.
 * A request without a reply after the timeout is counted lost and its slot reused.
 *
 * Latency is timed from just before the batch holding the request is sent to just
 * after the batch holding its reply is received. In a closed loop the generator
 * waits for the server, so these latencies describe the load the server allowed,
 * not a fixed offered load (that is the open loop's job).
 *
 * The request id of slot i is (generation << bits) | i: a reply finds its slot
 * without a search, and a late reply to a slot's earlier request does not match.
 */
#ifndef XKV_BENCH_CLOSED_LOOP_H
#define XKV_BENCH_CLOSED_LOOP_H

#include <stdatomic.h>
#include <stdint.h>

#include "stats.h"
#include "transport.h"
#include "workload.h"

#define LOOP_DEPTH_MAX	   4096
#define LOOP_LOAD_ATTEMPTS 3		 /* sends of one PUT while loading */
#define LOOP_LOAD_STALL_NS 1000000000ULL /* loading gives up after this long without a reply */

struct loop_config {
	unsigned depth;			     /* requests kept outstanding, 1..LOOP_DEPTH_MAX */
	uint64_t timeout_ns;		     /* after this a request is lost */
	uint64_t seed;			     /* with stream, fixes the request sequence */
	uint32_t stream;		     /* e.g. the thread's number */
	const _Atomic uint64_t *deadline_ns; /* CLOCK_MONOTONIC; the caller may move it */
};

struct loop_slot {
	uint32_t request_id; /* of the request in the slot */
	uint32_t key;
	uint8_t op;
	uint8_t in_flight;
	uint8_t attempts;   /* loading: sends of this PUT that got no reply */
	uint32_t len;	    /* of the encoded request */
	uint64_t timestamp; /* written in the request; the reply must echo it */
	uint64_t sent_ns;
	uint8_t *dgram;
};

enum loop_phase {
	LOOP_LOAD,
	LOOP_MEASURE,
};

struct closed_loop {
	struct transport *transport;
	const struct workload *workload;
	struct workload_rng rng;
	const _Atomic uint64_t *deadline_ns;
	uint64_t timeout_ns;
	uint64_t expiry_period_ns; /* how often slots are checked for lost requests */
	unsigned depth;
	uint32_t slot_mask; /* request id bits that name the slot */
	struct loop_slot *slots;
	uint8_t *dgrams; /* the slots' request buffers */
	unsigned *ready; /* slots holding a request not sent yet, oldest first */
	unsigned nready, in_flight;
	struct bench_dgram *tx, *rx;
	enum loop_phase phase;
	uint32_t load_next, load_step, load_end; /* loading: keys still to PUT */
	struct bench_stats *stats;		 /* of the phase running */
	_Atomic uint64_t answered; /* ok + misses in this phase, for a progress line */
};

/* Returns 0 or -errno (-EINVAL: a request of this workload would not encode). */
int closed_loop_init(struct closed_loop *l, struct transport *t, const struct workload *w,
		     const struct loop_config *cfg);
void closed_loop_free(struct closed_loop *l);

/*
 * PUTs keys first, first + step, ... below end, into stats (which it initialises).
 * A PUT with no reply is sent again, up to LOOP_LOAD_ATTEMPTS times. Returns 0,
 * -EINTR when the deadline came first, -ETIMEDOUT when no reply came for
 * LOOP_LOAD_STALL_NS, or the transport's -errno.
 */
int closed_loop_load(struct closed_loop *l, uint32_t first, uint32_t step, uint32_t end,
		     struct bench_stats *stats);

/*
 * Runs the workload into stats (which it initialises) until the deadline. Requests
 * still outstanding then are not counted. Returns 0 or the transport's -errno.
 */
int closed_loop_measure(struct closed_loop *l, struct bench_stats *stats);

#endif /* XKV_BENCH_CLOSED_LOOP_H */
