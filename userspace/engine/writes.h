/* SPDX-License-Identifier: MIT */
/*
 * A write at a worker, under every policy the same way (engine/policy.h says only who
 * writes a partition): applied and answered by its writer, its EWT hold let go after;
 * claimed from userspace when XDP claimed nothing; handed or refused when it reached
 * another worker than its writer; in pieces until it is whole.
 */
#ifndef XKV_ENGINE_WRITES_H
#define XKV_ENGINE_WRITES_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/transport.h"
#include "engine/handoff.h"

struct xkv_worker;

/*
 * A whole PUT or DELETE m from `from` at w; held: its EWT hold is in w's hand (XDP
 * claimed the slot for w). Returns the status w replied with, -1 if another worker
 * replies (or a hand-off failed here, and a resend should retry).
 */
int xkv_write(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
	      uint64_t hash, bool held);

/*
 * A piece of a PUT (under dcrew its hold in hand: XDP claims each piece); the whole
 * value, once complete, is written, and the pieces' holds go after its reply.
 */
void xkv_write_piece(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		     uint64_t hash);

/* n pieces of a PUT are done with (dropped unfinished, refused): their holds go. */
void xkv_write_pieces_done(struct xkv_worker *w, uint64_t hash, uint32_t n);

/* A large PUT's item another worker built, for w to link in (engine/handoff.h's INSTALL). */
void xkv_write_install(struct xkv_worker *w, struct xkv_handoff *m);

/*
 * Who applies a write of hash that came without its EWT hold, from either request
 * model: under the EWT the slot's holder, which w joins for it as XDP would (the
 * policy's writer the candidate; a hold in w's hand if the holder is w; the wait in
 * ewt_wait_ns for timed requests); else the policy's writer. -1: the slot stayed busy.
 */
int xkv_write_route(struct xkv_worker *w, uint64_t hash);

/* A write routed to `to` (not w) never reached it: under the EWT its count goes back. */
void xkv_write_unroute(struct xkv_worker *w, uint64_t hash, uint32_t to);

/*
 * Who applies a write of hash another worker routed to w, now: under the EWT w itself,
 * once it claims the slot the sender joined for it (-1: the claim was refused); else
 * the policy's writer, another worker if the roles moved the partition meanwhile.
 */
int xkv_write_taken(struct xkv_worker *w, uint64_t hash);

/*
 * A policy's foreign (engine/policy.h) that refuses: a write for another's partition
 * is a steering bug, or a worker count changed under the program: counted in
 * foreign_writes and answered busy, never executed beside its writer (invariant 1).
 */
int xkv_write_refuse(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		     uint64_t hash, uint32_t writer);

#endif /* XKV_ENGINE_WRITES_H */
