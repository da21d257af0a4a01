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
static void mc_apply(struct xkv_worker *w, const struct xkv_mc_write *mw, struct xkv_mc_result *r)
{
	const struct xkv_msg key = {.op = mw->op == XKV_MC_DELETE ? XKV_OP_DELETE : XKV_OP_PUT,
				    .key = mw->key, .key_len = mw->key_len};

	xkv_windows_close_key(w, mw->hash, &key);
	w->exec.stats.requests[key.op]++;
	xkv_apply_mc(w, mw, r);
	xkv_holds_let_go(&w->holds, xkv_partition(mw->hash), 1);
}

/* Hands a memcached write to worker `to`; false when it could not (counted). */
static bool mc_hand(struct xkv_worker *w, uint32_t to, const struct xkv_mc_write *mw,
		    uint32_t origin, uint64_t tag)
{
	struct xkv_handoff *m = xkv_handoff_mc_new(mw, origin, tag);

	if (m)
		m->started_ns = w->exec.start_ns;
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
	uint32_t partition = xkv_partition(m->hash), writer;

	m->mc_result = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	if (xkv_policy_ewt(w->policy->id)) {
		/* the sender joined the slot for w: the claim orders w after its last holder */
		if (xkv_holds_claim(&w->holds, partition))
			mc_apply(w, &m->mc, &m->mc_result);
	} else if ((writer = w->policy->writer(w, m->hash)) == w->id) {
		mc_apply(w, &m->mc, &m->mc_result);
	} else if (mc_hand(w, writer, &m->mc, m->origin, m->tag)) {
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

int xkv_worker_mc_write(struct xkv_worker *w, const struct xkv_mc_write *mw,
			struct xkv_mc_result *r, uint64_t tag)
{
	uint32_t partition = xkv_partition(mw->hash), writer;
	bool ewt = xkv_policy_ewt(w->policy->id);
	int holder;

	*r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	xkv_worker_roles_check(w);
	if (ewt) {
		holder = xkv_write_join(w, mw->hash);
		if (holder < 0)
			return 0;
		writer = (uint32_t)holder;
	} else {
		writer = w->policy->writer(w, mw->hash);
	}
	if (writer == w->id) {
		mc_apply(w, mw, r);
		return 0;
	}
	if (mc_hand(w, writer, mw, w->id, tag))
		return -EINPROGRESS;
	/* nothing was written: the write the join counted for the holder goes back */
	if (ewt)
		xkv_holds_give_back(&w->holds, partition, writer);
	return 0;
}

void xkv_worker_mc(struct xkv_worker *w,
		   void (*done)(void *ctx, uint64_t tag, const struct xkv_mc_result *r), void *ctx)
{
	w->mc_done = done;
	w->mc_ctx = ctx;
}
