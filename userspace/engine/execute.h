/* SPDX-License-Identifier: MIT */
/*
 * Executes one complete request against the store and sends its reply datagrams
 * through whatever transport the worker uses (AF_XDP frames, a UDP socket).
 * Knows the protocol and the store's API, nothing of packets below UDP.
 */
#ifndef XKV_EXECUTE_H
#define XKV_EXECUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/transport.h"
#include "engine/exec.h"

/*
 * Executes req, which came from `from`, where its replies go; hash is xkv_hash() of
 * its key. A GET whose reply would be larger than XKV_AMPLIFY_MAX times the request is
 * answered VALIDATE, with a token, unless validate trusts its sender or req showed a
 * valid token (a memcached request, which has no token, gets an error:
 * engine/mc_serve.h). In echo mode the store is not touched: a GET is answered
 * NOT_FOUND, a PUT or DELETE OK, each built and sent as a real reply is. For a PUT,
 * req->frag holds the whole value (frag_len == value_len): the caller has reassembled
 * it if it came in pieces.
 */
void xkv_execute(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		 uint64_t hash);


/*
 * A PUT or DELETE split in its parts, for write compaction, where several requests
 * are counted and answered and one write is applied: counting a write as executed
 * (by op, a PUT by its size class); applying it to the store (counted in
 * store_writes), which returns its status and answers nothing.
 */
void xkv_exec_count_write(struct xkv_exec *x, const struct xkv_msg *req);
enum xkv_status xkv_apply_write(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash);

/* A PUT or DELETE, as xkv_execute does it; returns the status it replied with. */
enum xkv_status xkv_execute_write(struct xkv_exec *x, const struct xkv_origin *from,
				  const struct xkv_msg *req, uint64_t hash);

/*
 * Replies OK to req with the len bytes at x->scratch as its value, in as many pieces as
 * it takes, as a GET's value; VALIDATE instead where that would amplify (PROTOCOL.md):
 * a value the server makes itself, such as its report of hot keys.
 */
void xkv_reply_scratch(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		       uint32_t len);

/* Replies with status and no value, e.g. for a request refused before execution. */
void xkv_reply_status(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		      enum xkv_status status);

#endif /* XKV_EXECUTE_H */
