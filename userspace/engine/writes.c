// SPDX-License-Identifier: MIT
#include <errno.h>

#include "engine/apply.h"
#include "engine/handoff_send.h"
#include "engine/versions.h"
#include "engine/windows.h"
#include "engine/worker.h"
#include "engine/writes.h"

/* A write w applies: after any window open on its key, counted, applied, answered. */
static enum xkv_status write_here(struct xkv_worker *w, const struct xkv_origin *from,
				  const struct xkv_msg *m, uint64_t hash)
{
	enum xkv_status status;

	xkv_windows_close_key(w, hash, m);
	xkv_exec_count_write(&w->exec, m);
	status = xkv_apply_msg(w, m, hash);
	xkv_reply_status(&w->exec, from, m, status);
	return status;
}

/* A write on its writer: applied, answered, and its EWT hold, if w has one, let go. */
static enum xkv_status write_held(struct xkv_worker *w, const struct xkv_origin *from,
				  const struct xkv_msg *m, uint64_t hash)
{
	enum xkv_status status = write_here(w, from, m, hash);

	xkv_holds_let_go(&w->holds, xkv_partition(hash), 1);
	return status;
}

/* A write no XDP claimed joins its slot as XDP would, the policy's writer the candidate. */
static int write_join(struct xkv_worker *w, uint64_t hash)
{
	uint64_t t0 = w->exec.lat ? xkv_fast_clock_now(&w->exec.clock) : 0;
	int holder = xkv_holds_join(&w->holds, xkv_partition(hash), w->policy->writer(w, hash));

	if (w->exec.lat)
		w->exec.stats.ewt_wait_ns += xkv_fast_clock_now(&w->exec.clock) - t0;
	return holder;
}

int xkv_write_route(struct xkv_worker *w, uint64_t hash)
{
	return xkv_policy_ewt(w->policy->id) ? write_join(w, hash) : (int)w->policy->writer(w, hash);
}

void xkv_write_unroute(struct xkv_worker *w, uint64_t hash, uint32_t to)
{
	if (xkv_policy_ewt(w->policy->id))
		xkv_holds_give_back(&w->holds, xkv_partition(hash), to);
}

int xkv_write(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
	      uint64_t hash, bool held)
{
	int to = held ? (int)w->id : xkv_write_route(w, hash);

	if (to < 0) {
		xkv_reply_status(&w->exec, from, m, XKV_S_BUSY);
		return XKV_S_BUSY;
	}
	if ((uint32_t)to == w->id)
		return (int)write_held(w, from, m, hash);
	/* invariant 1 (docs/DESIGN.md): a write is executed by its partition's writer only */
	if (!xkv_policy_ewt(w->policy->id))
		return w->policy->foreign(w, from, m, hash, (uint32_t)to);
	/* a PUT no XDP claimed (xkv: one whole from its pieces): its item built here */
	if (!xkv_handoff_send_item(w, from, m, hash, (uint32_t)to))
		xkv_write_unroute(w, hash, (uint32_t)to);
	return -1;
}

int xkv_write_refuse(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		     uint64_t hash, uint32_t writer)
{
	(void)hash;
	(void)writer;
	w->exec.stats.foreign_writes++;
	xkv_reply_status(&w->exec, from, m, XKV_S_BUSY);
	return XKV_S_BUSY;
}

/* Whether XDP claims a slot for each piece of a PUT (dcrew), not for the whole (xkv). */
static bool pieces_claimed(const struct xkv_worker *w)
{
	return xkv_ewt_claimed(w->policy->id, XKV_OP_PUT, 1, 2); /* 1 byte of 2: a piece */
}

void xkv_write_pieces_done(struct xkv_worker *w, uint64_t hash, uint32_t n)
{
	if (pieces_claimed(w))
		xkv_holds_let_go(&w->holds, xkv_partition(hash), n);
}

void xkv_write_piece(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		     uint64_t hash)
{
	struct xkv_reasm_msg *whole;
	int ret = xkv_reasm_add(w->reasm, &from->peer, m, w->now_ns, &whole);

	if (ret == XKV_REASM_COMPLETE) {
		/* the last piece's way back, timed from the first's arrival */
		struct xkv_origin reply_to = *from;

		reply_to.peer = whole->peer;
		/* dcrew: every piece held the slot from the first to the reply */
		whole->status = pieces_claimed(w)
					? (int)write_here(w, &reply_to, &whole->head, hash)
					: xkv_write(w, &reply_to, &whole->head, hash, false);
		xkv_write_pieces_done(w, hash, whole->pieces);
		xkv_reasm_release(w->reasm, whole);
		return;
	}
	if (ret == XKV_REASM_PENDING)
		return;
	if (ret == XKV_REASM_LATE) {
		/*
		 * Sent again after it was stored and answered: the client likely lost the
		 * reply, so the piece that ends the value gets it again; the rest nothing.
		 */
		if (m->frag_offset + m->frag_len == m->value_len &&
		    xkv_reasm_late_status(w->reasm) >= 0)
			xkv_reply_status(&w->exec, from, m,
					 (enum xkv_status)xkv_reasm_late_status(w->reasm));
		xkv_write_pieces_done(w, hash, 1);
		return;
	}
	/* no room is passing (retry); a contradiction or a scattered message is not */
	w->exec.stats.refused_pieces++;
	xkv_reply_status(&w->exec, from, m, ret == -ENOMEM ? XKV_S_BUSY : XKV_S_BAD_REQUEST);
	xkv_write_pieces_done(w, hash, 1);
}

int xkv_write_taken(struct xkv_worker *w, uint64_t hash)
{
	if (xkv_policy_ewt(w->policy->id))
		/* the sender joined the slot for w: the claim orders w after its last holder */
		return xkv_holds_claim(&w->holds, xkv_partition(hash)) ? (int)w->id : -1;
	/* the roles may have moved the partition since it was sent */
	return (int)w->policy->writer(w, hash);
}

void xkv_write_install(struct xkv_worker *w, struct xkv_handoff *m)
{
	int to = xkv_write_taken(w, m->hash);
	int err;

	if (to < 0) {
		xkv_reply_status(&w->exec, &m->from, &m->req, XKV_S_BUSY);
		return;
	}
	if ((uint32_t)to != w->id) {
		xkv_handoff_send(w, XKV_HANDOFF_INSTALL, (uint32_t)to, &m->from, &m->req, m->hash,
				 m->item);
		m->item = NULL;
		return;
	}
	w->exec.stats.requests[XKV_OP_PUT]++;
	xkv_windows_close_key(w, m->hash, &m->req);
	if (xkv_msg_steered(&m->req) && xkv_versions_stale(&w->exec, &m->req, m->hash)) {
		xkv_store_item_free(m->item); /* a newer version is here: answered OK with it */
		err = 0;
	} else {
		if (xkv_msg_steered(&m->req))
			xkv_store_item_set_meta(m->item, &(struct xkv_item_meta){
								 .ver = xkv_be64(m->req.ext.ver)});
		err = xkv_apply_item(w, m->item, m->hash, m->req.value_len);
	}
	m->item = NULL; /* the store's now, or freed */
	xkv_reply_status(&w->exec, &m->from, &m->req, xkv_status_from_errno(err));
	xkv_holds_let_go(&w->holds, xkv_partition(m->hash), 1);
}
