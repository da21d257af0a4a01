/* SPDX-License-Identifier: MIT */
/*
 * Judges a server's replies against the requests it was sent. The requests are
 * applied, in the order they were sent, to a model of the store (model.h), which
 * says what each reply must carry; then every reply datagram is matched to its
 * request by (client address and port, request id) and compared.
 *
 * Ordering: the model runs the requests in the order given, one at a time. Keys
 * are independent in it, so its answers hold for any execution that keeps each
 * key's requests in the order they were sent, whatever it does across keys. A PUT
 * sent in pieces takes effect at its last piece, as in the server's reassembly.
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
	X(MISSING, "missing")	    /* a request without its whole reply */                        \
	X(DUPLICATE, "duplicate")   /* a reply, or a piece of one, that came before */             \
	X(UNEXPECTED, "unexpected") /* a reply to no request, or another op or timestamp */        \
	X(WRONG_STATUS, "wrong status")                                                            \
	X(WRONG_VALUE, "wrong value") /* a GET's value, or pieces that disagree */                 \
	X(MALFORMED, "malformed")     /* a datagram from the server that is no valid reply */

#define TRACE_PROBLEM_ENUM(name, str) TRACE_P_##name,
enum trace_problem { TRACE_PROBLEMS(TRACE_PROBLEM_ENUM) TRACE_P_COUNT };
#undef TRACE_PROBLEM_ENUM

struct trace_check_report {
	uint64_t requests;	  /* whole requests, each expecting one reply */
	uint64_t request_dgrams;  /* datagrams of those requests */
	uint64_t not_requests;	  /* datagrams to the server that are no valid request */
	uint64_t unfinished_puts; /* PUTs some of whose pieces were never sent: no reply due */
	uint64_t reply_dgrams;
	uint64_t correct; /* requests whose one reply is right */
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

/* One datagram from the server to client. Returns 0, -ENOMEM or -ENOBUFS (as above). */
int trace_check_reply(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
		      const void *data, size_t len);

/* Counts what went unanswered and fills the report. Call once, last. */
void trace_check_finish(struct trace_check *c, struct trace_check_report *report);

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
