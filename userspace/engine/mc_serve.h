/* SPDX-License-Identifier: MIT */
/*
 * memcached requests over UDP on the worker's path (docs/MEMCACHED.md, "Over UDP"):
 * xkv_execute serves their GETs here and xkv_reply_status answers their writes here,
 * in the request's dialect, split over datagrams of XKV_MC_DGRAM_MAX bytes with the
 * frame's sequence numbers. Everything else (ownership, the EWT, hand-offs,
 * compaction) treats them as xkv requests.
 */
#ifndef XKV_MC_SERVE_H
#define XKV_MC_SERVE_H

#include "proto/mc_udp.h"
#include "engine/exec.h"

/*
 * A get or gets (every key), or a binary GET*: the reply is built whole in x->scratch,
 * then sent when it is within XKV_AMPLIFY_MAX times the request or the source is
 * trusted; otherwise an error says why (mc_amplify_refused). Returns the bytes of the
 * reply it built (0: none).
 */
size_t xkv_mc_execute_get(struct xkv_exec *x, const struct xkv_origin *from,
			const struct xkv_msg *req, uint64_t hash);

/* The reply to a SET or DELETE that ended with status; nothing if the request is quiet. */
void xkv_mc_reply_status(struct xkv_exec *x, const struct xkv_origin *from,
			 const struct xkv_msg *req, enum xkv_status status);

/* The reply to a request that decoded to error verdict v (counted in mc_errors), timed. */
void xkv_mc_reply_error(struct xkv_exec *x, const struct xkv_origin *from,
			const struct xkv_msg *req, enum xkv_mc_verdict v);

#endif /* XKV_MC_SERVE_H */
