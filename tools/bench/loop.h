/* SPDX-License-Identifier: MIT */
/*
 * The requests of one thread on its transport, driven closed or open.
 *
 * Closed loop: `depth` requests are kept outstanding; each reply frees its slot and
 * the slot's next request goes out in the next batch. The generator waits for the
 * server, so the latencies describe the load the server allowed (coordinated
 * omission), not a fixed offered load. Loading the keys is always a closed loop.
 *
 * Open loop: requests are due at the times of a Poisson process (arrivals.h) and
 * sent when due, whatever the replies do; up to `depth` may be outstanding. Latency
 * counts from the *intended* send time, so queueing anywhere (server, network, the
 * generator itself) shows. A request sent late keeps its intended time; how late
 * requests went out, and how many never did, is counted (stats.h).
 *
 * Either way, ready requests go out in one batch and replies come back in batches,
 * matched to their slot by id: the request id of slot i is (generation << bits) | i,
 * so a reply finds its slot without a search and a late reply to a slot's earlier
 * request does not match (a protocol with 16-bit ids, memcached, keeps only the
 * low 16 bits: the slot and a few generations). A request without a reply after
 * the timeout is lost.
 *
 * A value too large for one datagram goes in pieces (xkv only): a PUT's pieces are
 * sent in order, at most LOOP_PIECE_BURST datagrams per batch so that replies are
 * taken in between, and its latency counts from the first piece; a GET's reply is
 * taken piece by piece and answered by its last.
 */
#ifndef XKV_BENCH_LOOP_H
#define XKV_BENCH_LOOP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "interval.h"
#include "proto.h"
#include "stats.h"
#include "transport.h"
#include "workload.h"

#define LOOP_DEPTH_MAX	   4096
#define LOOP_LOAD_ATTEMPTS 3		 /* sends of one PUT while loading */
#define LOOP_LOAD_STALL_NS 1000000000ULL /* loading gives up after this long without a reply */
#define LOOP_DGRAM_CAP	   XKV_DGRAM_MAX /* a slot's request buffer, whatever the protocol */
#define LOOP_PIECE_BURST   64 /* datagrams of values in pieces per batch */
/*
 * The open loop sleeps until this long before the next arrival and spins the rest.
 * With a timer slack of 1 us (main.c) a ppoll(2) of 20 us .. 1 ms on this VM wakes
 * 30-50 us late at the median, 40-70 us at p90: most sleeps end before the arrival,
 * then spin ~10 us. Waking 100 us early cost 50 % more CPU at 5000/s for no lower
 * send lag here.
 */
#define LOOP_WAKE_EARLY_NS 50000

struct loop_config {
	unsigned depth;			     /* closed: kept outstanding; open: most outstanding */
	uint64_t timeout_ns;		     /* after this a request is lost */
	uint64_t seed;			     /* with stream, fixes the requests and the schedule */
	uint32_t stream;		     /* e.g. the thread's number */
	const _Atomic uint64_t *deadline_ns; /* on the clock; the caller may move it */
	const struct bench_proto *proto;     /* NULL: xkv */
	struct bench_clock *clock;	     /* NULL: CLOCK_MONOTONIC */
	const struct large_schedule *schedule; /* NULL: the workload's large_pct throughout */
	struct interval_log *intervals;	       /* measuring: each second's counts, or NULL */
	const uint8_t *dest; /* a list's: the server of each key, by ketama; NULL: one server */
	uint32_t nservers;   /* in the list; 0: one */
};

struct loop_slot {
	uint32_t request_id; /* of the request in the slot */
	uint32_t key;
	uint8_t op;
	uint8_t in_flight;
	uint8_t attempts;     /* loading: sends of this PUT that got no reply */
	uint8_t size_class;   /* of the key's value */
	uint8_t dest;	      /* the server it goes to, of a list */
	uint32_t len;	      /* of the encoded request, when it is one datagram */
	uint32_t value_size;  /* a PUT's value */
	uint32_t pieces, pieces_sent; /* datagrams of the request: 1, or a PUT's pieces */
	uint32_t received;    /* bytes of a GET's value taken so far */
	uint64_t timestamp;   /* written in the request; the reply must echo it */
	uint64_t intended_ns; /* latency counts from here: the schedule's time, or the send */
	uint64_t sent_ns;     /* the timeout counts from here */
	uint8_t *dgram;
};

enum loop_phase {
	LOOP_LOAD,
	LOOP_MEASURE,
};

struct loop {
	struct transport *transport;
	const struct workload *workload;
	const struct bench_proto *proto;
	struct rng rng;
	uint64_t seed;
	uint32_t stream;
	const _Atomic uint64_t *deadline_ns;
	struct bench_clock *clock;
	uint64_t timeout_ns;
	uint64_t expiry_period_ns; /* how often slots are checked for lost requests */
	unsigned depth;
	uint32_t slot_mask; /* request id bits that name the slot */
	struct loop_slot *slots;
	uint8_t *dgrams; /* the slots' request buffers */
	unsigned *ready; /* slots holding a request not sent yet, oldest first */
	unsigned nready, in_flight;
	bool tx_full; /* the transport took nothing of the last batch */
	unsigned *idle; /* open loop: slots free for the next arrival */
	unsigned nidle;
	bool open;
	uint64_t starved_at; /* open loop: when an arrival last found no free slot */
	uint32_t piece_max; /* value bytes a datagram carries */
	const uint8_t *dest; /* loop_config's */
	uint64_t *tokens;    /* xkv: each server's last validation token, sent in its requests */
	uint8_t *piece_dgrams; /* LOOP_PIECE_BURST datagrams of pieces being sent */
	unsigned *tx_slot;     /* the slot of each datagram in tx */
	struct bench_dgram *tx, *rx;
	enum loop_phase phase;
	uint32_t load_next, load_step, load_end; /* loading: keys still to PUT */
	struct bench_stats *stats;		 /* of the phase running */
	const struct large_schedule *schedule;
	struct interval_log *intervals;
	uint64_t start_ns; /* of the phase: the schedule and the intervals count from here */
	uint64_t now_ns;   /* the clock's last reading: when a closed loop's request is due */
	_Atomic uint64_t answered; /* ok + misses in this phase, for a progress line */
};

/*
 * Returns 0 or -errno (-EINVAL: a request of this workload would not encode, e.g. a
 * value in pieces in a protocol that takes one datagram per request).
 */
int loop_init(struct loop *l, struct transport *t, const struct workload *w,
	      const struct loop_config *cfg);
void loop_free(struct loop *l);

/*
 * PUTs keys first, first + step, ... below end, into stats (which it initialises),
 * in a closed loop. A PUT with no reply is sent again, up to LOOP_LOAD_ATTEMPTS
 * times. Returns 0, -EINTR when the deadline came first, -ETIMEDOUT when no reply
 * came for LOOP_LOAD_STALL_NS, or the transport's -errno.
 */
int loop_load(struct loop *l, uint32_t first, uint32_t step, uint32_t end,
	      struct bench_stats *stats);

/*
 * Runs the workload into stats (which it initialises) until the deadline: closed
 * when rate_per_s is 0, else open at that many requests per second. Requests still
 * outstanding then are not counted. With a schedule, a request is large with the
 * percent of the step its intended send time falls in; with intervals, each answer
 * and loss is also counted in the second of the run it came in. Returns 0 or the
 * transport's -errno.
 */
int loop_measure(struct loop *l, double rate_per_s, struct bench_stats *stats);

#endif /* XKV_BENCH_LOOP_H */
