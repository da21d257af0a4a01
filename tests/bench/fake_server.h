/* SPDX-License-Identifier: MIT */
/*
 * An xkv server inside a transport, for the load generator's tests: it answers what
 * is sent, from a table of the keys PUT so far, and misbehaves on request: every
 * drop_every-th request gets no reply, every corrupt_every-th GET hit a wrong byte,
 * every restamp_every-th reply the wrong timestamp, every reply can come twice, a
 * batch of replies can come back in reverse order, a reply can take delay_ns to
 * come back, and one send call can stall (as a generator's CPU taken away would).
 * On a fake clock (fake_clock.h), waits and stalls move it on instead of sleeping;
 * on the real clock a receive never waits, and a stall is refused.
 * Values go both ways in pieces: a GET hit in pieces of FAKE_PIECE bytes, and a PUT
 * in pieces is checked byte by byte and in order (a wrong piece fails the test), or
 * refused at its first piece, as a server out of reassembly memory does.
 */
#ifndef XKV_TEST_FAKE_SERVER_H
#define XKV_TEST_FAKE_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "fake_clock.h"
#include "transport.h"
#include "workload.h"

#define FAKE_QUEUE	 4096 /* replies on their way; more requests are refused for now */
#define FAKE_PIECE	 1000 /* value bytes per reply datagram */
#define FAKE_PIECES_MAX	 64   /* a GET reply's datagrams at most: values up to 64000 B */
#define FAKE_REPLY_BYTES (FAKE_PIECE + 64)

/* How the fake misbehaves; all zero: a perfect server. */
struct fake_faults {
	unsigned drop_every, corrupt_every, restamp_every;
	bool duplicate, reverse;
	bool refuse_pieces;   /* a PUT in pieces: BUSY at its first piece, the rest ignored */
	uint64_t token;	      /* a GET hit without this token: VALIDATE with it (0: none asked) */
	unsigned send_max;    /* datagrams one send takes at most (0: as many as fit) */
	uint64_t delay_ns;    /* a reply is ready this long after its request was sent */
	uint64_t stall_ns;    /* one send call takes this long on the fake clock ... */
	uint64_t stall_after; /* ... the first one after this many requests (0: none) */
	/* a list of servers: each key's, which its datagrams must go to; a server's token
	 * is token + its index */
	const uint8_t *dest;
};

/* A receive that waited on the fake clock: from when, to when (the timeout or a reply). */
struct fake_wait {
	uint64_t from_ns, to_ns;
};

struct fake_server {
	struct transport base;
	const struct workload *w;
	uint8_t *stored; /* per key: PUT seen */
	struct fake_faults faults;
	struct fake_clock *clock; /* NULL: CLOCK_MONOTONIC */
	uint64_t requests, dropped, hits, corrupted, restamped, not_found, replied, validated;
	uint64_t pieces;		  /* PUT datagrams that carried part of a value */
	uint64_t refused, refused_pieces; /* PUTs refused, and the pieces of them that came */
	uint64_t idle_waits;		  /* receives asked to wait with no reply on its way */
	uint64_t empty_polls;		  /* receives not asked to wait that found nothing: spins */
	uint64_t asleep_ns;		  /* on the fake clock, in receives that waited */
	struct fake_wait *waits;	  /* the test's log of waits, waits_cap long, or NULL */
	unsigned nwaits, waits_cap;
	uint32_t put_received; /* bytes of the PUT in pieces under way */
	struct {
		uint64_t ready_ns;
		uint32_t len;
		uint8_t bytes[FAKE_REPLY_BYTES];
	} queue[FAKE_QUEUE], out[FAKE_QUEUE]; /* out: what the last recv returned */
	unsigned queued;
};

/* Allocates one: it answers for keys 0 .. keys - 1 of w. */
struct fake_server *fake_server_new(const struct workload *w, uint32_t keys);
void fake_server_free(struct fake_server *f);

#endif /* XKV_TEST_FAKE_SERVER_H */
