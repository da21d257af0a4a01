/* SPDX-License-Identifier: MIT */
/*
 * A worker's executor, whichever dialect answers (xkv's in engine/execute.c,
 * memcached's over UDP in engine/mc_serve.c): the store it works with (a reply goes
 * to its request's origin), its counters, and the timing of every request it answers.
 */
#ifndef XKV_ENGINE_EXEC_H
#define XKV_ENGINE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xkv/stats.h>

#include "proto/codec.h"
#include "proto/transport.h"
#include "util/clock.h"
#include "util/latency.h"
#include "store/store.h"
#include "engine/validate.h"

/* A value, and what a memcached reply puts around it (a VALUE line, END; a header) */
#define XKV_EXEC_SCRATCH (XKV_VALUE_MAX + 512)

/* The version a reply may vouch for to a coherence directory (engine/versions.h). */
struct xkv_vouch {
	uint64_t hash; /* of the key read or written */
	uint64_t ver;
	bool valid;    /* until the request is answered (xkv_exec_done) */
};

struct xkv_exec {
	struct xkv_store *store;
	/* XKV_EXEC_SCRATCH bytes: a value bigger than one datagram, a memcached get's reply */
	uint8_t *scratch;
	uint64_t cas; /* the CAS the last memcached SET gave its item: a binary reply's */
	bool echo;	  /* answer without the store: the ceiling xkv is measured against */
	struct xkv_request_counters stats; /* the worker's, which counts in them too */
	/*
	 * Requests for values above this size class are large to this worker (minos's
	 * small role): counted as large_on_small when served here, and a GET whose value
	 * goes in pieces is offered to handoff_get first. XKV_SIZE_CLASSES: none is.
	 */
	uint32_t small_class_max;
	/* True: the GET was taken to be served elsewhere, and nothing is sent here. */
	bool (*handoff_get)(void *ctx, const struct xkv_origin *from, const struct xkv_msg *req,
			    uint64_t hash, uint32_t value_len);
	void *handoff_ctx;
	/*
	 * The anti-amplification bound, shared by every worker, and the time its tokens
	 * are checked against (the worker's tick).
	 */
	const struct xkv_validate *validate;
	uint64_t now_ns;
	/*
	 * Latency (include/xkv/latency.h): NULL when off. Else every request answered is
	 * timed from its peer's arrival stamp, start_ns (when the worker started it, which
	 * the worker keeps) and the clock once its reply is on the TX ring.
	 */
	struct xkv_latency *lat;
	uint64_t start_ns;
	struct xkv_fast_clock clock; /* what times them: synced by the worker's every round */
	/* requests queued behind this one: the load a version 3 reply reports (Pegasus 6.4) */
	uint32_t load;
	/* the server's time per request, XKV_DIR_SERVICE_UNIT ns: what a reply reports */
	uint16_t service;
	struct xkv_vouch vouch;
};

/* 0, -EINVAL without a bound (validate), or -ENOMEM. */
int xkv_exec_init(struct xkv_exec *x, struct xkv_store *store,
		  const struct xkv_validate *validate);
void xkv_exec_fini(struct xkv_exec *x);

/* Counts a request for a value of value_len bytes under its size class. */
void xkv_exec_count_size(struct xkv_exec *x, uint32_t value_len);

/*
 * req from `from` is answered (its reply sent, or lost for want of a buffer): times it,
 * value_len being the bytes it carried or was answered with (its size class), and
 * starts the next request's service at the clock read for it. xkv_execute and the
 * reply functions of execute.h and mc_serve.h call it; a caller answering otherwise must.
 */
void xkv_exec_done(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		   uint32_t value_len);

#endif /* XKV_ENGINE_EXEC_H */
