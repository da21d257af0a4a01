// SPDX-License-Identifier: MIT
/* What other workers handed this one, taken once per batch (engine/handoff.h). */
#include <stdatomic.h>

#include "engine/mc_write.h"
#include "engine/worker.h"
#include "engine/worker_roles.h"
#include "engine/writes.h"

/* A hand-off is taken: timed requests start now, having waited since it was sent. */
static void handoff_start(struct xkv_worker *w, const struct xkv_handoff *m)
{
	w->exec.stats.handoffs_taken++;
	if (!w->exec.lat)
		return;
	w->exec.start_ns = xkv_fast_clock_now(&w->exec.clock);
	if (m->started_ns && w->exec.start_ns > m->started_ns)
		w->exec.stats.handoff_wait_ns += w->exec.start_ns - m->started_ns;
}

/* A request another worker passed on; its reply goes back the way the request came. */
static void take_request(struct xkv_worker *w, struct xkv_handoff *m)
{
	/* on this worker's socket of the request's rx queue (once it polled it): never the sender's */
	m->from.tx = w->queue_tx[m->from.queue] ? w->queue_tx[m->from.queue] : w->tx;
	switch (m->kind) {
	case XKV_HANDOFF_GET:
		xkv_execute(&w->exec, &m->from, &m->req, m->hash);
		break;
	case XKV_HANDOFF_WRITE:
		xkv_write(w, &m->from, &m->req, m->hash, false);
		break;
	case XKV_HANDOFF_INSTALL:
		xkv_write_install(w, m);
		break;
	case XKV_HANDOFF_MC_WRITE:
	case XKV_HANDOFF_MC_DONE:
		break; /* xkv_mc_write_take's: never brought here */
	}
	xkv_handoff_free(m);
}

unsigned xkv_worker_handoffs(struct xkv_worker *w)
{
	struct xkv_handoff *m;
	unsigned n = 0;

	if (!w->handoffs)
		return 0;
	xkv_mc_write_flush(w);
	for (uint32_t from = 0; from < w->nworkers; from++) {
		if (from == w->id)
			continue;
		while ((m = xkv_handoffs_pop(w->handoffs, from, w->id))) {
			/* busy while it serves, as for a request steering brought */
			if (w->depth)
				atomic_fetch_add_explicit(w->depth, 1, memory_order_relaxed);
			xkv_worker_roles_check(w);
			handoff_start(w, m);
			if (m->kind >= XKV_HANDOFF_MC_WRITE)
				xkv_mc_write_take(w, m);
			else
				take_request(w, m);
			if (w->depth)
				atomic_fetch_sub_explicit(w->depth, 1, memory_order_relaxed);
			n++;
		}
	}
	w->round_served += n;
	return n;
}
