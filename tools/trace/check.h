/* SPDX-License-Identifier: MIT */
/*
 * Judges a server's replies against the requests it was sent, in two parts. The
 * structure: every reply datagram is matched to its request by (client address and
 * port, request id); each request must get exactly one whole reply, with a status
 * its op can have. The values: the requests and their replies make a history of
 * operations, each from the capture time of its request (its last datagram, as
 * captured leaving the client) to that of its reply (its last datagram), which
 * xkv-lincheck judges (docs/TRACE.md, "check"): any linearizable outcome is right,
 * whichever worker served what and in whatever order.
 */
#ifndef XKV_TRACE_CHECK_H
#define XKV_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/peer.h"

#define TRACE_LIST_MAX	 5    /* problems described per kind */
#define TRACE_LINE_MAX	 200  /* bytes of one description */
#define TRACE_PIECED_MAX 1024 /* values in pieces incomplete at once, each way */

#define TRACE_PROBLEMS(X)                                                                          \
	X(MISSING, "missing")	    /* a GET without its whole reply */                             \
	X(DUPLICATE, "duplicate")   /* a reply, or a piece of one, that came before */             \
	X(UNEXPECTED, "unexpected") /* a reply to no request, or another op or timestamp */        \
	X(WRONG_STATUS, "wrong status") /* one the op cannot have, e.g. NOT_FOUND to a PUT */      \
	X(WRONG_VALUE, "wrong value")	/* pieces of a GET's value that disagree */                \
	X(MALFORMED, "malformed")	/* a datagram from the server that is no valid reply */

#define TRACE_PROBLEM_ENUM(name, str) TRACE_P_##name,
enum trace_problem { TRACE_PROBLEMS(TRACE_PROBLEM_ENUM) TRACE_P_COUNT };
#undef TRACE_PROBLEM_ENUM

struct trace_check_report {
	uint64_t requests;	  /* whole requests, each expecting one reply */
	uint64_t request_dgrams;  /* datagrams of those requests */
	uint64_t not_requests;	  /* datagrams to the server that are no valid request */
	uint64_t unfinished_puts; /* PUTs some of whose pieces were never sent: no reply due */
	uint64_t reply_dgrams;
	uint64_t answered;	 /* requests with one whole reply, in the history */
	uint64_t refused;	 /* of those, answered BUSY or NO_MEMORY: no effect, left out */
	uint64_t unknown_writes; /* PUTs and DELETEs without a reply: unknown outcomes */
	uint64_t unseen_sent;	 /* answered requests the capture did not see leave */
	/* of answered requests seen leaving: request's last datagram to reply's, ns */
	uint64_t timed, latency_p50, latency_p99, latency_p999, latency_max;
	uint64_t count[TRACE_P_COUNT];
	char first[TRACE_P_COUNT][TRACE_LIST_MAX][TRACE_LINE_MAX];
};

struct trace_check;

struct trace_check *trace_check_create(void);
void trace_check_destroy(struct trace_check *c);

/*
 * One datagram sent to the server by client; frame names it in messages. Call it
 * for every request, in the order sent, before the first trace_check_reply().
 * Returns 0, -ENOMSG for a datagram that is no valid request (counted, since the
 * server drops it), -EEXIST when client reuses a request id (the check cannot
 * tell the two apart), -ENOMEM, -ENOBUFS when more than TRACE_PIECED_MAX
 * values in pieces are incomplete at once, or -EALREADY after a reply was given.
 */
int trace_check_request(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
			const void *data, size_t len);

/*
 * A datagram of a request from client as the capture saw it leave, at ns: the
 * request's invocation is the time of its last one. Datagrams of no request
 * given are passed over. Call it at any time after the requests.
 */
void trace_check_sent(struct trace_check *c, const struct xkv_peer *client, uint64_t ns,
		      const void *data, size_t len);

/*
 * One datagram from the server to client, captured at ns. Returns 0, -ENOMEM or
 * -ENOBUFS (as above).
 */
int trace_check_reply(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
		      uint64_t ns, const void *data, size_t len);

/*
 * Counts what went unanswered, fills the report and writes the history for
 * xkv-lincheck to path (tools/common/history.h). An answered request the
 * capture did not see leave is taken to start with the capture's first frame,
 * which allows it more outcomes, never fewer. Call once, last. Returns 0 or
 * -errno from writing the history.
 */
int trace_check_finish(struct trace_check *c, const char *path,
		       struct trace_check_report *report);

/* The structure: every count 0. The values are xkv-lincheck's to judge. */
static inline bool trace_check_passed(const struct trace_check_report *r)
{
	for (int i = 0; i < TRACE_P_COUNT; i++)
		if (r->count[i])
			return false;
	return true;
}

void trace_check_print(const struct trace_check_report *r, FILE *out);

/* "10.0.0.2:40000" or "[fd00::2]:40000". */
void trace_peer_str(const struct xkv_peer *peer, char *buf, size_t len);

#endif /* XKV_TRACE_CHECK_H */
