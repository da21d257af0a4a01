// SPDX-License-Identifier: MIT
#include <errno.h>

#include "engine/apply.h"
#include "engine/mc_write.h"
#include "engine/windows.h"
#include "engine/worker.h"
#include "engine/worker_roles.h"
#include "engine/writes.h"

/*
 * A memcached write on its partition's writer: after any window open on its key,
 * counted, applied; then its EWT hold, if any, is let go.
 */
static void mc_apply(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash,
		     struct xkv_mc_result *r)
{
	xkv_windows_close_key(w, hash, m);
	w->exec.stats.requests[m->op]++;
	xkv_apply_mc(w, m, hash, r);
	xkv_holds_let_go(&w->holds, xkv_partition(hash), 1);
}

/* Hands a memcached write to worker `to`; false when it could not (counted). */
static bool mc_hand(struct xkv_worker *w, uint32_t to, const struct xkv_msg *req,
		    uint64_t hash, uint32_t origin, uint64_t tag)
{
	struct xkv_handoff *m = xkv_handoff_new(XKV_HANDOFF_MC_WRITE, NULL, req, hash);

	if (m) {
		m->origin = origin;
		m->tag = tag;
		m->started_ns = w->exec.start_ns;
	}
	if (m && xkv_handoffs_push(w->handoffs, w->id, to, m)) {
		w->exec.stats.handoffs_sent++;
		return true;
	}
	if (m)
		xkv_handoff_free(m);
	w->exec.stats.handoffs_refused++;
	return false;
}

/* Sends the results whose ring back was full before, in order; false if some still wait. */
static bool flush_unsent(struct xkv_worker *w)
{
	struct xkv_handoff *m;

	while ((m = w->mc_unsent)) {
		struct xkv_handoff *next = m->next; /* pushed, m is the origin's to free */

		if (!xkv_handoffs_push(w->handoffs, w->id, m->origin, m))
			return false;
		w->mc_unsent = next;
	}
	return true;
}

void xkv_mc_write_flush(struct xkv_worker *w)
{
	flush_unsent(w);
}

/* The result goes back to the worker whose connection waits: never dropped, or it hangs. */
static void mc_answer(struct xkv_worker *w, struct xkv_handoff *m)
{
	struct xkv_handoff **last = &w->mc_unsent;

	m->kind = XKV_HANDOFF_MC_DONE;
	m->next = NULL;
	if (m->origin == w->id) {
		w->mc_done(w->mc_ctx, m->tag, &m->mc_result);
		xkv_handoff_free(m);
		return;
	}
	if (flush_unsent(w) && xkv_handoffs_push(w->handoffs, w->id, m->origin, m))
		return;
	while (*last)
		last = &(*last)->next;
	*last = m;
}

/* A memcached write another worker handed over: this worker should be its writer. */
static void take_write(struct xkv_worker *w, struct xkv_handoff *m)
{
	int to = xkv_write_taken(w, m->hash);

	m->mc_result = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	if (to >= 0 && (uint32_t)to == w->id) {
		mc_apply(w, &m->req, m->hash, &m->mc_result);
	} else if (to >= 0 && mc_hand(w, (uint32_t)to, &m->req, m->hash, m->origin, m->tag)) {
		/* the roles moved the partition since it was sent: its writer answers */
		xkv_handoff_free(m);
		return;
	}
	mc_answer(w, m);
}

void xkv_mc_write_take(struct xkv_worker *w, struct xkv_handoff *m)
{
	if (m->kind == XKV_HANDOFF_MC_WRITE) {
		take_write(w, m);
		return;
	}
	w->mc_done(w->mc_ctx, m->tag, &m->mc_result);
	xkv_handoff_free(m);
}

int xkv_worker_mc_write(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash,
			struct xkv_mc_result *r, uint64_t tag)
{
	int to;

	*r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	xkv_worker_roles_check(w);
	to = xkv_write_route(w, hash);
	if (to < 0)
		return 0;
	if ((uint32_t)to == w->id) {
		mc_apply(w, m, hash, r);
		return 0;
	}
	if (mc_hand(w, (uint32_t)to, m, hash, w->id, tag))
		return -EINPROGRESS;
	xkv_write_unroute(w, hash, (uint32_t)to);
	return 0;
}

void xkv_worker_mc(struct xkv_worker *w,
		   void (*done)(void *ctx, uint64_t tag, const struct xkv_mc_result *r), void *ctx)
{
	w->mc_done = done;
	w->mc_ctx = ctx;
}
