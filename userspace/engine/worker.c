// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <xkv/hash.h>

#include "proto/mc_udp.h"
#include "engine/ahead.h"
#include "engine/dir_serve.h"
#include "engine/hot.h"
#include "engine/mc_serve.h"
#include "engine/windows.h"
#include "engine/worker.h"
#include "engine/worker_roles.h"
#include "engine/writes.h"

#define XKV_WORKER_EXPIRY_NS 100000000ULL /* 100 ms between looks at timeouts */
#define XKV_WORKER_SERVICE_NS 1000	  /* S until a round has measured it */

/* Reassembly dropped a message unfinished: the writes its pieces held go with it. */
static void pieces_dropped(void *ctx, const struct xkv_reasm_msg *msg)
{
	xkv_write_pieces_done(ctx, xkv_hash(msg->head.key, msg->head.key_len), msg->pieces);
}

/*
 * What a version 3 reply reports as the server's time per request (xkv_dir_ext.service):
 * this worker's S over the workers, which serve side by side.
 */
static uint16_t service_reported(uint64_t service_ns, uint32_t nworkers)
{
	uint64_t units = service_ns / (nworkers ? nworkers : 1) / XKV_DIR_SERVICE_UNIT;

	return units > UINT16_MAX ? UINT16_MAX : units ? (uint16_t)units : 1;
}

int xkv_worker_init(struct xkv_worker *w, const struct xkv_worker_config *cfg)
{
	struct xkv_reasm_config rc = cfg->reasm;
	int err;

	*w = (struct xkv_worker){.id = cfg->id, .nworkers = cfg->nworkers,
				 .service_ns = XKV_WORKER_SERVICE_NS,
				 .policy = xkv_policy_ops(cfg->policy),
				 .order = cfg->order ? xkv_order_find(cfg->order) : xkv_order_default,
				 .rng = cfg->id};
	if (!w->policy || !w->order)
		return -EINVAL;
	w->tx = cfg->tx;
	w->replicas = cfg->replicas;
	w->hot = cfg->hot;
	err = xkv_exec_init(&w->exec, cfg->store, cfg->validate);
	if (err)
		return err;
	w->exec.service = service_reported(w->service_ns, w->nworkers);
	rc.dropped = pieces_dropped;
	rc.ctx = w;
	w->reasm = xkv_reasm_create(&rc);
	if (!w->reasm) {
		xkv_exec_fini(&w->exec);
		return -ENOMEM;
	}
	return 0;
}

void xkv_worker_fini(struct xkv_worker *w)
{
	struct xkv_handoff *m;

	while ((m = w->mc_unsent)) {
		w->mc_unsent = m->next;
		xkv_handoff_free(m);
	}
	xkv_compact_destroy(w->compact);
	xkv_reasm_destroy(w->reasm);
	xkv_exec_fini(&w->exec);
}

void xkv_worker_dcrew(struct xkv_worker *w, struct xkv_ewt_slot *ewt,
		      struct xkv_holds_shared *shared, bool (*rings_read)(void *ctx),
		      void *ctx)
{
	w->ewt = ewt;
	xkv_holds_init(&w->holds, ewt, w->id, shared, &w->exec.stats);
	w->holds.rings_read = rings_read;
	w->holds.rings_ctx = ctx;
}

int xkv_worker_compaction(struct xkv_worker *w, uint32_t slo)
{
	w->compact = xkv_compact_create(slo);
	return w->compact ? 0 : -ENOMEM;
}

void xkv_worker_handoff_rings(struct xkv_worker *w, struct xkv_handoffs *handoffs)
{
	w->handoffs = handoffs;
}

void xkv_worker_queue(struct xkv_worker *w, uint32_t queue, struct xkv_tx *tx)
{
	w->queue_tx[queue] = tx;
}

int xkv_worker_bell_fd(const struct xkv_worker *w)
{
	return w->handoffs ? xkv_handoffs_bell_fd(w->handoffs, w->id) : -1;
}

void xkv_worker_sleep(struct xkv_worker *w)
{
	if (w->sync)
		xkv_roles_sleep(w->sync, w->id);
	if (w->handoffs)
		xkv_handoffs_sleep(w->handoffs, w->id);
	xkv_store_thread_sleep();
}

void xkv_worker_wake(struct xkv_worker *w)
{
	if (w->handoffs)
		xkv_handoffs_wake(w->handoffs, w->id);
	if (w->sync) {
		xkv_roles_wake(w->sync, w->id, &w->roles); /* may wait: still offline */
		xkv_worker_roles_applied(w);
	}
	xkv_store_thread_wake();
}

void xkv_worker_tick(struct xkv_worker *w, uint64_t now_ns)
{
	/* stopped, or never scheduled: the gap an operator looks for */
	if (w->round_start && now_ns - w->round_start > w->exec.stats.round_gap_max_ns)
		w->exec.stats.round_gap_max_ns = now_ns - w->round_start;
	xkv_holds_round(&w->holds);
	w->round_start = now_ns;
	w->round_served = 0;
	w->now_ns = now_ns;
	w->exec.now_ns = now_ns;
	w->exec.start_ns = now_ns; /* whatever the round serves first waited until now */
	xkv_fast_clock_sync(&w->exec.clock, now_ns);
	if (w->hot)
		xkv_hot_tick(w->hot, w->id, now_ns);
	if (now_ns < w->next_expiry)
		return;
	xkv_reasm_expire(w->reasm, now_ns);
	w->next_expiry = now_ns + XKV_WORKER_EXPIRY_NS;
}

void xkv_worker_round_end(struct xkv_worker *w, bool dry)
{
	uint64_t now = xkv_now_ns(), busy;

	if (w->round_served) {
		busy = now - w->round_start;
		w->exec.stats.busy_ns += busy;
		/* a moving mean, 1/8 per round: S follows the load without jumping */
		w->service_ns += ((int64_t)(busy / w->round_served) - (int64_t)w->service_ns) / 8;
		w->exec.service = service_reported(w->service_ns, w->nworkers);
		w->round_served = 0;
	}
	/* whatever the round served (TCP reads alone, refused datagrams): the others wait */
	xkv_worker_roles_check(w);
	if (dry)
		xkv_windows_close_all(w);
	else
		xkv_windows_close_due(w, now);
	xkv_holds_round_end(&w->holds, now, dry);
}

void xkv_worker_counters(const struct xkv_worker *w, struct xkv_request_counters *out)
{
	struct xkv_reasm_stats rs;

	*out = w->exec.stats;
	xkv_reasm_get_stats(w->reasm, &rs);
	out->reassembly_bytes = rs.bytes;
	out->reassembly_timeouts = rs.timeouts;
	out->reassembly_evicted = rs.evicted;
	out->reassembly_late = rs.late;
	out->ewt_heals = w->holds.heals;
	out->ewt_healed = w->holds.healed;
	out->queue_depth = w->depth ? atomic_load_explicit(w->depth, memory_order_relaxed) : 0;
	out->lat_lost = w->exec.lat ? w->exec.lat->lost : 0;
}

void xkv_worker_look_ahead(void *w, const void *data, size_t len)
{
	xkv_ahead_look(w, data, len, false);
}

void xkv_worker_mc_look_ahead(void *w, const void *data, size_t len)
{
	xkv_ahead_look(w, data, len, true);
}

static bool is_write(const struct xkv_msg *m)
{
	return m->op == XKV_OP_PUT || m->op == XKV_OP_DELETE;
}

/* Whether XDP counted this request in the EWT for the worker it steered it to. */
static bool claimed(const struct xkv_worker *w, const struct xkv_msg *m)
{
	return xkv_ewt_claimed(w->policy->id, m->op, m->frag_len, m->value_len);
}

/* A request, xkv's or memcached's, from `from`; hash is its key's. */
static void serve(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		  uint64_t hash)
{
	bool held = claimed(w, m);
	struct xkv_msg plain;

	xkv_worker_roles_check(w);
	/* a write that came without its slot: a steering bug, or the table changed under us */
	if (held && !xkv_holds_claim(&w->holds, xkv_partition(hash))) {
		xkv_reply_status(&w->exec, from, m, XKV_S_BUSY);
		return;
	}
	if (m->dir && xkv_dir_serve_take(w, from, &m, &plain, hash)) {
		if (held) /* a notice, a stray sent home: nothing written here */
			xkv_holds_let_go(&w->holds, xkv_partition(hash), 1);
		return;
	}
	if (w->hot && !m->frag_offset) /* a request, not each of its pieces */
		xkv_hot_count(w->hot, w->id, m->key, m->key_len, hash);
	if (m->op == XKV_OP_PUT && m->frag_len != m->value_len) {
		xkv_write_piece(w, from, m, hash);
	} else if (!is_write(m)) {
		xkv_execute(&w->exec, from, m, hash);
	} else if (!xkv_windows_take(w, from, m, hash,
				     held || (!xkv_policy_ewt(w->policy->id) &&
					      w->policy->writer(w, hash) == w->id))) {
		xkv_write(w, from, m, hash, held);
	}
}

/* The key's hash: look-ahead's, if it kept this request, else computed now. */
static uint64_t key_hash(const struct xkv_ahead *a, const struct xkv_msg *m)
{
	return a && a->valid ? a->hash : xkv_hash(m->key, m->key_len);
}

static void handle_datagram(struct xkv_worker *w, const struct xkv_origin *from,
			    const void *data, size_t len, const struct xkv_ahead *a)
{
	enum xkv_reason reason;
	struct xkv_msg m;
	uint64_t hash;

	reason = xkv_decode(data, len, &m);
	if (reason != XKV_R_OK) {
		w->exec.stats.dropped[reason]++;
		return;
	}
	hash = key_hash(a, &m);
	if (m.op & XKV_OP_REPLY) {
		w->exec.stats.replies_to_server++;
		return;
	}
	serve(w, from, &m, hash);
}

static void handle_mc(struct xkv_worker *w, const struct xkv_origin *from, const void *data,
		      size_t len, const struct xkv_ahead *a)
{
	enum xkv_mc_verdict verdict;
	struct xkv_msg m;
	uint32_t partition;

	verdict = xkv_mc_decode(data, len, &m);
	if (verdict == XKV_MC_UDP_OK) {
		serve(w, from, &m, key_hash(a, &m));
		return;
	}
	if (verdict == XKV_MC_UDP_DROP)
		w->exec.stats.mc_dropped++;
	else
		xkv_mc_reply_error(&w->exec, from, &m, verdict);
	/* XDP steers a write by its command and key alone, and took its slot: let it go */
	if (is_write(&m) && claimed(w, &m)) {
		partition = xkv_partition(xkv_hash(m.key, m.key_len));
		if (xkv_holds_claim(&w->holds, partition))
			xkv_holds_let_go(&w->holds, partition, 1);
	}
}

/*
 * A datagram from `from`; a: what look-ahead kept of it, or NULL; queued: datagrams
 * the transport handed over with it, still to serve.
 */
static void datagram(struct xkv_worker *w, const struct xkv_origin *from, const void *data,
		     size_t len, bool mc, const struct xkv_ahead *a, uint32_t queued)
{
	w->exec.stats.datagrams++;
	/* the load a directory hears of: steering's count where it keeps one, else the batch */
	w->exec.load = w->depth ? (uint32_t)atomic_load_explicit(w->depth, memory_order_relaxed)
				: queued;
	/* the first of a batch starts after look-ahead: the clock then, not the round's */
	if (!w->serving && w->exec.lat)
		w->exec.start_ns = xkv_fast_clock_now(&w->exec.clock);
	w->serving = true;
	w->round_served++;
	if (mc)
		handle_mc(w, from, data, len, a);
	else
		handle_datagram(w, from, data, len, a);
	/* C-4 looks at the clock as each request completes while a window is open */
	if (w->compact && w->compact->nopen)
		xkv_windows_close_due(w, xkv_now_ns());
	if (w->depth)
		atomic_fetch_sub_explicit(w->depth, 1, memory_order_relaxed);
}

void xkv_worker_datagram(void *w, const struct xkv_origin *from, const void *data, size_t len)
{
	datagram(w, from, data, len, false, xkv_ahead_next(w, data), 0);
}

void xkv_worker_mc_datagram(void *w, const struct xkv_origin *from, const void *data, size_t len)
{
	datagram(w, from, data, len, true, xkv_ahead_next(w, data), 0);
}

void xkv_worker_batch(void *ctx, const struct xkv_dgram *d, unsigned n)
{
	uint8_t order[XKV_WORKER_AHEAD];
	struct xkv_worker *w = ctx;

	while (n) {
		unsigned m = n < XKV_WORKER_AHEAD ? n : XKV_WORKER_AHEAD;

		xkv_ahead_begin(w);
		for (unsigned i = 0; i < m; i++)
			xkv_ahead_look(w, d[i].data, d[i].len, d[i].mc);
		w->order->order(w, m, order);
		for (unsigned k = 0; k < m; k++) {
			const struct xkv_dgram *g = &d[order[k]];

			w->ahead[order[k]].served = true;
			datagram(w, g->from, g->data, g->len, g->mc, &w->ahead[order[k]],
				 n - k - 1);
		}
		d += m;
		n -= m;
	}
}
