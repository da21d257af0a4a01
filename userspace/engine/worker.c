// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>

#include "proto/mc_udp.h"
#include "engine/mc_exec.h"
#include "engine/mc_serve.h"
#include "engine/minos.h"
#include "engine/worker.h"

#define XKV_WORKER_EXPIRY_NS 100000000ULL /* 100 ms between looks at timeouts */
#define XKV_WORKER_SERVICE_NS 1000	  /* S until a round has measured it */

#ifdef XKV_BROKEN_EARLY_REPLY
/* A broken server, for the test that shows the linearizability check can say no. */
static const bool reply_on_hold = true;
#else
static const bool reply_on_hold = false;
#endif

static void pieces_dropped(void *ctx, const struct xkv_reasm_msg *msg);

int xkv_worker_init(struct xkv_worker *w, uint32_t id, uint32_t nworkers,
		    struct xkv_store *store, struct xkv_tx *tx,
		    const struct xkv_reasm_config *reasm)
{
	struct xkv_reasm_config rc = *reasm;
	int err;

	*w = (struct xkv_worker){.id = id, .nworkers = nworkers, .service_ns = XKV_WORKER_SERVICE_NS};
	err = xkv_exec_init(&w->exec, store, tx);
	if (err)
		return err;
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
	if (now_ns < w->next_expiry)
		return;
	xkv_reasm_expire(w->reasm, now_ns);
	w->next_expiry = now_ns + XKV_WORKER_EXPIRY_NS;
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

/* Timed requests: the worker starts one now (a hand-off it takes, a window it closes). */
static void start_now(struct xkv_worker *w)
{
	if (w->exec.lat)
		w->exec.start_ns = xkv_fast_clock_now(&w->exec.clock);
}

/* Decodes a request look-ahead saw, in its protocol; false if it is not one. */
static bool ahead_decode(const struct xkv_ahead *a, struct xkv_msg *m)
{
	return a->mc ? xkv_mc_decode(a->data, a->len, m) == XKV_MC_UDP_OK
		     : xkv_decode(a->data, a->len, m) == XKV_R_OK;
}

static void look_ahead(struct xkv_worker *w, const void *data, size_t len, bool mc)
{
	struct xkv_ahead a = {.data = data, .len = len, .mc = mc};
	struct xkv_msg m;

	/* the first look after a datagram was served starts a batch: its frames are new */
	if (w->serving) {
		w->nahead = w->next_ahead = 0;
		w->serving = false;
	}
	if (w->nahead == XKV_WORKER_AHEAD || !ahead_decode(&a, &m))
		return;
	a.hash = xkv_hash(m.key, m.key_len);
	if (!w->exec.echo)
		xkv_store_prefetch(w->exec.store, a.hash);
	w->ahead[w->nahead++] = a;
}

void xkv_worker_look_ahead(void *w, const void *data, size_t len)
{
	look_ahead(w, data, len, false);
}

void xkv_worker_mc_look_ahead(void *w, const void *data, size_t len)
{
	look_ahead(w, data, len, true);
}

/* The hash look-ahead kept for this datagram, or one computed now. */
static uint64_t key_hash(struct xkv_worker *w, const void *data, const struct xkv_msg *m)
{
	if (w->next_ahead < w->nahead && w->ahead[w->next_ahead].data == data)
		return w->ahead[w->next_ahead++].hash;
	return xkv_hash(m->key, m->key_len);
}

/*
 * Who owns the writes of hash's partition: minos's roles, else the static owner.
 * Under dcrew the EWT decides, and handle_datagram checked it already.
 */
static uint32_t write_owner(const struct xkv_worker *w, uint64_t hash)
{
	uint32_t partition = xkv_partition(hash);

	if (w->ewt)
		return w->id;
	return w->sync ? xkv_roles_owner(&w->roles, partition)
		       : xkv_partition_owner(partition, w->nworkers);
}

static bool is_write(const struct xkv_msg *m)
{
	return m->op == XKV_OP_PUT || m->op == XKV_OP_DELETE;
}

/* Counts a release: 0, or -EPERM when the slot did not count those n writes for it. */
static void count_release(struct xkv_worker *w, int err, uint32_t n)
{
	if (!err)
		w->exec.stats.ewt_released += n;
	else
		w->exec.stats.ewt_not_owner += n;
}

/* dcrew and xkv: the hold of a write steered here is in hand (engine/holds.h). */
static void ewt_take(struct xkv_worker *w, uint64_t hash)
{
	xkv_holds_take(&w->holds, xkv_partition(hash), 1);
}

/* dcrew and xkv: lets n writes of hash's partition go; steering may balance them again. */
static void ewt_let_go(struct xkv_worker *w, uint64_t hash, uint32_t n)
{
	if (!w->ewt || !n || w->early_release)
		return;
	count_release(w, xkv_holds_release(&w->holds, xkv_partition(hash), n), n);
}

/* A write this worker joined for holder, never handed to it: the hold goes back. */
static void ewt_give_back(struct xkv_worker *w, uint64_t hash, uint32_t holder)
{
	count_release(w, xkv_ewt_release(w->ewt, xkv_partition(hash), holder, 1), 1);
}

/* xkv_ewt_join, its time counted in ewt_wait_ns for timed requests. */
static int ewt_join(struct xkv_worker *w, uint32_t partition, uint32_t candidate)
{
	uint64_t t0 = w->exec.lat ? xkv_fast_clock_now(&w->exec.clock) : 0;
	int holder = xkv_ewt_join(w->ewt, partition, candidate, XKV_EWT_TRIES);

	if (w->exec.lat)
		w->exec.stats.ewt_wait_ns += xkv_fast_clock_now(&w->exec.clock) - t0;
	return holder;
}

/* The policy xkv: minos's roles and dcrew's EWT together. */
static bool runs_xkv(const struct xkv_worker *w)
{
	return w->ewt && w->sync;
}

/* Whether XDP counted this request in the EWT for the worker it steered it to. */
static bool ewt_claimed(const struct xkv_worker *w, const struct xkv_msg *m)
{
	return w->ewt && xkv_ewt_claimed(runs_xkv(w) ? XKV_POLICY_XKV : XKV_POLICY_DCREW, m->op,
					 m->frag_len, m->value_len);
}

/* dcrew: n pieces of a PUT let their holds go. Under xkv a piece holds nothing. */
static void pieces_let_go(struct xkv_worker *w, uint64_t hash, uint32_t n)
{
	if (!w->sync)
		ewt_let_go(w, hash, n);
}

/* Reassembly dropped a message unfinished: the writes its pieces held go with it. */
static void pieces_dropped(void *ctx, const struct xkv_reasm_msg *msg)
{
	struct xkv_worker *w = ctx;

	pieces_let_go(w, xkv_hash(msg->head.key, msg->head.key_len), msg->pieces);
}

#ifdef XKV_CHECKS
/*
 * Invariant 1, checked: each worker marks the partition it writes, and a second
 * writer inside one is a bug that must not pass quietly. Relaxed: the marks must not
 * order the workers themselves, or they could hide a hand-over that lacks its own.
 */
static _Atomic uint32_t writing[XKV_PARTITIONS]; /* worker id + 1, 0: nobody */

static void partition_write_begin(const struct xkv_worker *w, uint64_t hash)
{
	uint32_t partition = xkv_partition(hash);
	uint32_t other = atomic_exchange_explicit(&writing[partition], w->id + 1,
						  memory_order_relaxed);

	if (other) {
		fprintf(stderr, "xkv: invariant 1 broken: workers %u and %u write partition %u "
				"at once\n", other - 1, w->id, partition);
		abort();
	}
}

static void partition_write_end(uint64_t hash)
{
	atomic_store_explicit(&writing[xkv_partition(hash)], 0, memory_order_relaxed);
}
#else
static void partition_write_begin(const struct xkv_worker *w, uint64_t hash)
{
	(void)w;
	(void)hash;
}

static void partition_write_end(uint64_t hash)
{
	(void)hash;
}
#endif

/* Whether the worker is among a role's n workers, ids (the roles' small[] or large[]). */
static bool has_role(const struct xkv_worker *w, const uint8_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < XKV_WORKERS_MAX; i++)
		if (ids[i] == w->id)
			return true;
	return false;
}

/* The executor follows the worker's roles: large above the threshold, unless it is large. */
static void roles_applied(struct xkv_worker *w)
{
	bool large = has_role(w, w->roles.large, w->roles.nlarge);

	w->exec.small_class_max = large ? XKV_SIZE_CLASSES : w->roles.threshold;
}

static void windows_close_all(struct xkv_worker *w);

/*
 * Between requests: newer roles are adopted; new owners by every worker before any acts
 * on them (engine/roles.h). Open compaction windows are applied first, under the roles they were opened by: after
 * the adoption their partitions may be another worker's (invariant 1).
 */
static void roles_check(struct xkv_worker *w)
{
	if (!w->sync || !xkv_roles_changed(w->sync, w->roles.gen))
		return;
	windows_close_all(w);
	/* a writer growing a table waits for our quiescent state: don't make it wait on us */
	xkv_store_thread_sleep();
	xkv_roles_adopt(w->sync, w->id, &w->roles);
	xkv_store_thread_wake();
	roles_applied(w);
}

/*
 * Passes req to worker `to`, answered along the current route; a ring that is full,
 * or no memory for the message, answers busy (the client retries) and returns false.
 * Takes item.
 */
static bool hand(struct xkv_worker *w, enum xkv_handoff_kind kind, uint32_t to,
		 const struct xkv_peer *peer, const struct xkv_msg *req, uint64_t hash,
		 struct xkv_item *item)
{
	struct xkv_handoff *m = xkv_handoff_new(kind, w->exec.tx, peer, req, hash);

	if (m) {
		m->item = item;
		m->queue = w->queue;
		m->started_ns = w->exec.start_ns;
		if (xkv_handoffs_push(w->handoffs, w->id, to, m)) {
			w->exec.stats.handoffs_sent++;
			return true;
		}
		xkv_handoff_free(m);
	} else if (item) {
		xkv_store_item_free(item);
	}
	w->exec.stats.handoffs_refused++;
	xkv_reply_status(&w->exec, peer, req, XKV_S_BUSY);
	return false;
}

/* The executor's hook: a GET for a large value goes to the large worker of its class. */
static bool handoff_get(void *ctx, const struct xkv_peer *peer, const struct xkv_msg *req,
			uint64_t hash, uint32_t value_len)
{
	struct xkv_worker *w = ctx;
	uint32_t to = xkv_roles_large_worker(&w->roles, xkv_size_class(value_len), hash);

	if (to == w->id || to >= w->nworkers)
		return false;
	hand(w, XKV_HANDOFF_GET, to, peer, req, hash, NULL);
	return true;
}

/* The owner keeps xkv_large_keys: new_len is the key's value length now, -1 if none. */
static void large_keys_note(struct xkv_worker *w, uint64_t hash, int64_t new_len, bool was_large)
{
	if (new_len > XKV_MINOS_PIECE_BYTES) {
		if (w->large_keys.record(w->large_keys.ctx, hash, (uint32_t)new_len) == -E2BIG)
			w->exec.stats.large_keys_full++;
	} else if (was_large) {
		w->large_keys.forget(w->large_keys.ctx, hash);
	}
}

/*
 * A write this worker owns, applied and not answered; under minos, xkv_large_keys
 * follows what it did. Returns its status.
 */
static enum xkv_status apply_write(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash)
{
	enum xkv_status status;
	bool was_large = false;
	uint32_t old_len;

	partition_write_begin(w, hash);
	/* the one lookup minos adds to a write: whether it replaces a recorded value */
	if (w->sync && !w->exec.echo &&
	    xkv_store_value_len(w->exec.store, m->key, m->key_len, hash, &old_len) == 0)
		was_large = old_len > XKV_MINOS_PIECE_BYTES;
	status = xkv_apply_write(&w->exec, m, hash);
	if (status == XKV_S_OK && w->sync && !w->exec.echo)
		large_keys_note(w, hash, m->op == XKV_OP_PUT ? (int64_t)m->value_len : -1,
				was_large);
	partition_write_end(hash);
	return status;
}

/*
 * A compaction window closes: its one store write, then a reply to every PUT it held,
 * then their EWT holds. No PUT is answered before the write that carries its value
 * (or a later one) is applied (invariant 3), so a read that sees the old value while
 * the window is open overlaps every PUT in it, and linearizability allows it.
 */
static void window_close(struct xkv_worker *w, struct xkv_compact_window *win)
{
	const struct xkv_msg final = xkv_compact_final(win);
	struct xkv_tx *current = w->exec.tx;
	uint64_t started = w->exec.start_ns;
	struct xkv_reply_route route;
	enum xkv_status status;

	/* its PUTs waited in the window until now: their service is its write and replies */
	if (w->exec.lat) {
		uint64_t now = xkv_fast_clock_now(&w->exec.clock);

		for (uint32_t i = 0; i < win->nputs; i++)
			w->exec.stats.compact_wait_ns += now - win->puts[i].held_ns;
		w->exec.start_ns = now;
	}
	status = apply_write(w, &final, win->hash);
	/* the request being handled, if any, replies after this along its own route */
	current->route_save(current, &route);
	for (uint32_t i = 0; i < win->nputs && !reply_on_hold; i++) {
		const struct xkv_msg req = xkv_compact_request(win, i);
		const struct xkv_compact_put *put = &win->puts[i];

		/* on the socket it came on: a client's rx queue expects it there */
		w->exec.tx = put->tx;
		put->tx->route_use(put->tx, &put->route);
		xkv_reply_status(&w->exec, &put->peer, &req, status);
	}
	w->exec.tx = current;
	current->route_use(current, &route);
	w->exec.start_ns = started; /* the request being handled, if any, goes on */
	w->exec.stats.compact_writes += win->nputs;
	if (win->nputs > w->exec.stats.compact_window_max)
		w->exec.stats.compact_window_max = win->nputs;
	ewt_let_go(w, win->hash, win->nputs);
	xkv_compact_free(w->compact, win);
}

static void windows_close_all(struct xkv_worker *w)
{
	struct xkv_compact_window *win;

	while (w->compact && (win = xkv_compact_any(w->compact)))
		window_close(w, win);
}

/* A write to a key whose window is open goes after the window's: this worker's order. */
static void window_close_key(struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m)
{
	struct xkv_compact_window *win = w->compact ? xkv_compact_find(w->compact, hash, m) : NULL;

	if (win)
		window_close(w, win);
}

/* A write this worker owns; returns the status it replied with. */
static enum xkv_status execute_write(struct xkv_worker *w, const struct xkv_peer *peer,
				     const struct xkv_msg *m, uint64_t hash)
{
	enum xkv_status status;

	window_close_key(w, hash, m);
	xkv_exec_count_write(&w->exec, m);
	status = apply_write(w, m, hash);
	xkv_reply_status(&w->exec, peer, m, status);
	return status;
}

/*
 * A large PUT for another's partition: the copy is made here, the owner links it in.
 * False when it was answered here instead (no memory for the item, or no room to hand).
 */
static bool build_large(struct xkv_worker *w, const struct xkv_peer *peer,
			const struct xkv_msg *m, uint64_t hash, uint32_t owner)
{
	struct xkv_item *item = xkv_store_item_new(m->key, m->key_len, m->frag, m->value_len);

	xkv_exec_count_size(&w->exec, m->value_len);
	if (!item) {
		w->exec.stats.requests[XKV_OP_PUT]++;
		xkv_reply_status(&w->exec, peer, m, xkv_status_from_errno(-errno));
		return false;
	}
	return hand(w, XKV_HANDOFF_INSTALL, owner, peer, m, hash, item);
}

/* A write returns the status this worker replied with, -1 if another worker replies. */
static int execute_request(struct xkv_worker *w, const struct xkv_peer *peer,
			   const struct xkv_msg *m, uint64_t hash)
{
	uint32_t owner;

	if (m->op == XKV_OP_GET) {
		xkv_execute(&w->exec, peer, m, hash);
		return -1;
	}
	owner = write_owner(w, hash);
	if (owner == w->id)
		return (int)execute_write(w, peer, m, hash);
	/*
	 * Invariant 1 (docs/DESIGN.md): a write is executed by its partition's owner only.
	 * Under minos, steering may have used other roles than ours: the owner gets it.
	 * Otherwise it is a policy bug or a worker count changed under the program:
	 * counted and refused, never executed beside the owner.
	 */
	if (!w->sync) {
		w->exec.stats.foreign_writes++;
		xkv_reply_status(&w->exec, peer, m, XKV_S_BUSY);
		return XKV_S_BUSY;
	}
	/* a memcached SET (one datagram, and meta the item does not carry) goes whole */
	if (m->op == XKV_OP_PUT && m->mc.dialect == XKV_DIALECT_XKV &&
	    xkv_roles_is_large(&w->roles, xkv_size_class(m->value_len)))
		build_large(w, peer, m, hash, owner);
	else
		hand(w, XKV_HANDOFF_WRITE, owner, peer, m, hash, NULL);
	return -1; /* the owner replies; or a hand-off failed here, and a resend should retry */
}

/*
 * The owner links in an item another worker built, and answers its PUT. Under xkv
 * the sender's xkv_ewt_join counted it for this worker, which lets it go after.
 */
static void take_install(struct xkv_worker *w, struct xkv_handoff *m)
{
	int64_t old_len = -1;
	int err;

	/* the acquire that orders this write after the partition's previous holder */
	if (w->ewt && !xkv_ewt_holds(w->ewt, xkv_partition(m->hash), w->id)) {
		w->exec.stats.ewt_not_owner++;
		xkv_reply_status(&w->exec, &m->peer, &m->req, XKV_S_BUSY);
		return;
	}
	if (w->ewt)
		ewt_take(w, m->hash);
	w->exec.stats.requests[XKV_OP_PUT]++;
	w->exec.stats.store_writes++;
	window_close_key(w, m->hash, &m->req);
	partition_write_begin(w, m->hash);
	err = xkv_store_install(w->exec.store, m->item, m->hash, &old_len);
	partition_write_end(m->hash);
	m->item = NULL; /* the store's now, or freed */
	/* recorded before the reply: the client's next GET is steered by it */
	if (!err)
		large_keys_note(w, m->hash, m->req.value_len, old_len > XKV_MINOS_PIECE_BYTES);
	xkv_reply_status(&w->exec, &m->peer, &m->req, xkv_status_from_errno(err));
	ewt_let_go(w, m->hash, 1);
}

/* One message from another worker; the replies go back the way its request came. */
/* A hand-off is taken: timed requests start now, having waited since it was sent. */
static void handoff_start(struct xkv_worker *w, const struct xkv_handoff *m)
{
	w->exec.stats.handoffs_taken++;
	start_now(w);
	if (w->exec.lat && m->started_ns && w->exec.start_ns > m->started_ns)
		w->exec.stats.handoff_wait_ns += w->exec.start_ns - m->started_ns;
}

static void take_handoff(struct xkv_worker *w, struct xkv_handoff *m)
{
	struct xkv_tx *tx = w->exec.tx;
	uint32_t owner, queue = w->queue;

	roles_check(w);
	handoff_start(w, m);
	/* answered on this worker's socket of the request's rx queue (once it polled it) */
	w->queue = m->queue;
	if (w->queue_tx[m->queue])
		w->exec.tx = w->queue_tx[m->queue];
	w->exec.tx->route_use(w->exec.tx, &m->route);
	switch (m->kind) {
	case XKV_HANDOFF_GET:
		xkv_execute(&w->exec, &m->peer, &m->req, m->hash);
		break;
	case XKV_HANDOFF_WRITE:
		execute_request(w, &m->peer, &m->req, m->hash);
		break;
	case XKV_HANDOFF_INSTALL:
		owner = write_owner(w, m->hash);
		if (owner == w->id) {
			take_install(w, m);
			break;
		}
		/* the roles moved the partition since it was sent: on to its owner now */
		hand(w, XKV_HANDOFF_INSTALL, owner, &m->peer, &m->req, m->hash, m->item);
		m->item = NULL;
		break;
	case XKV_HANDOFF_MC_WRITE:
	case XKV_HANDOFF_MC_DONE:
		break; /* take_mc's: xkv_worker_handoffs never brings them here */
	}
	xkv_handoff_free(m);
	w->queue = queue;
	w->exec.tx = tx;
}

/* Whether a memcached write changed the store (and so counts as a store write). */
static bool mc_changed(enum xkv_mc_status status)
{
	return status == XKV_MC_STORED || status == XKV_MC_DELETED || status == XKV_MC_TOUCHED ||
	       status == XKV_MC_NUMBER;
}

/*
 * A memcached write on its partition's writer, as apply_write does a PUT: after any
 * window open on its key, counted, and under minos with xkv_large_keys kept.
 */
static void mc_apply(struct xkv_worker *w, const struct xkv_mc_write *mw, struct xkv_mc_result *r)
{
	const struct xkv_msg key = {.op = mw->op == XKV_MC_DELETE ? XKV_OP_DELETE : XKV_OP_PUT,
				    .key = mw->key, .key_len = mw->key_len};
	bool minos = w->sync != NULL, was_large = false;
	uint32_t len;

	window_close_key(w, mw->hash, &key);
	w->exec.stats.requests[key.op]++;
	partition_write_begin(w, mw->hash);
	if (minos && xkv_store_value_len(w->exec.store, mw->key, mw->key_len, mw->hash, &len) == 0)
		was_large = len > XKV_MINOS_PIECE_BYTES;
	xkv_mc_apply(w->exec.store, mw, w->exec.scratch, r);
	if (mc_changed(r->status)) {
		w->exec.stats.store_writes++;
		if (minos)
			large_keys_note(w, mw->hash,
					xkv_store_value_len(w->exec.store, mw->key, mw->key_len,
							    mw->hash, &len) ? -1 : (int64_t)len,
					was_large);
	}
	partition_write_end(mw->hash);
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
static bool mc_flush_unsent(struct xkv_worker *w)
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
	if (mc_flush_unsent(w) && xkv_handoffs_push(w->handoffs, w->id, m->origin, m))
		return;
	while (*last)
		last = &(*last)->next;
	*last = m;
}

/* A memcached write another worker handed over: this worker should be its writer. */
static void take_mc_write(struct xkv_worker *w, struct xkv_handoff *m)
{
	const struct xkv_mc_write *mw = &m->mc;
	uint32_t owner;

	m->mc_result = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	if (w->ewt) {
		/* the sender joined the slot for us: the acquire orders us after its last holder */
		if (xkv_ewt_holds(w->ewt, xkv_partition(m->hash), w->id)) {
			ewt_take(w, m->hash);
			mc_apply(w, mw, &m->mc_result);
			ewt_let_go(w, m->hash, 1);
		} else {
			w->exec.stats.ewt_not_owner++;
		}
		mc_answer(w, m);
		return;
	}
	owner = write_owner(w, m->hash);
	if (owner == w->id) {
		mc_apply(w, mw, &m->mc_result);
	} else if (mc_hand(w, owner, mw, m->origin, m->tag)) {
		/* the roles moved the partition since it was sent: its owner answers */
		xkv_handoff_free(m);
		return;
	}
	mc_answer(w, m);
}

/* A memcached message: a write to apply, or the result of one this worker handed over. */
static void take_mc(struct xkv_worker *w, struct xkv_handoff *m)
{
	roles_check(w);
	handoff_start(w, m);
	if (m->kind == XKV_HANDOFF_MC_WRITE) {
		take_mc_write(w, m);
		return;
	}
	w->mc_done(w->mc_ctx, m->tag, &m->mc_result);
	xkv_handoff_free(m);
}

int xkv_worker_mc_write(struct xkv_worker *w, const struct xkv_mc_write *mw,
			struct xkv_mc_result *r, uint64_t tag)
{
	uint32_t partition = xkv_partition(mw->hash), writer;
	int holder;

	*r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	roles_check(w);
	if (w->ewt) {
		/* as put_joined: this worker takes a free slot if it may hold one */
		writer = w->sync && !has_role(w, w->roles.small, w->roles.nsmall)
				 ? xkv_roles_owner(&w->roles, partition)
				 : w->id;
		holder = ewt_join(w, partition, writer);
		if (holder < 0) {
			w->exec.stats.ewt_join_busy++;
			return 0;
		}
		w->exec.stats.ewt_joined++;
		writer = (uint32_t)holder;
	} else {
		writer = write_owner(w, mw->hash);
	}
	if (writer == w->id) {
		if (w->ewt)
			ewt_take(w, mw->hash);
		mc_apply(w, mw, r);
		ewt_let_go(w, mw->hash, 1);
		return 0;
	}
	if (mc_hand(w, writer, mw, w->id, tag))
		return -EINPROGRESS;
	/* nothing was written: the write the join counted for the holder goes back */
	if (w->ewt)
		ewt_give_back(w, mw->hash, writer);
	return 0;
}

void xkv_worker_mc(struct xkv_worker *w,
		   void (*done)(void *ctx, uint64_t tag, const struct xkv_mc_result *r), void *ctx)
{
	w->mc_done = done;
	w->mc_ctx = ctx;
}

void xkv_worker_handoff_rings(struct xkv_worker *w, struct xkv_handoffs *handoffs)
{
	w->handoffs = handoffs;
}

void xkv_worker_queue(struct xkv_worker *w, uint32_t queue, struct xkv_tx *tx)
{
	w->queue = queue;
	w->queue_tx[queue] = tx;
	w->exec.tx = tx;
}

int xkv_worker_bell_fd(const struct xkv_worker *w)
{
	return w->handoffs ? xkv_handoffs_bell_fd(w->handoffs, w->id) : -1;
}

unsigned xkv_worker_handoffs(struct xkv_worker *w)
{
	struct xkv_handoff *m;
	unsigned n = 0;

	if (!w->handoffs)
		return 0;
	mc_flush_unsent(w);
	for (uint32_t from = 0; from < w->nworkers; from++) {
		if (from == w->id)
			continue;
		while ((m = xkv_handoffs_pop(w->handoffs, from, w->id))) {
			/* busy while it serves, as for a request steering brought */
			if (w->depth)
				atomic_fetch_add_explicit(w->depth, 1, memory_order_relaxed);
			if (m->kind >= XKV_HANDOFF_MC_WRITE)
				take_mc(w, m);
			else
				take_handoff(w, m);
			if (w->depth)
				atomic_fetch_sub_explicit(w->depth, 1, memory_order_relaxed);
			n++;
		}
	}
	w->round_served += n;
	return n;
}

void xkv_worker_minos(struct xkv_worker *w, struct xkv_roles_sync *sync,
		      struct xkv_handoffs *handoffs, const struct xkv_large_keys *large_keys)
{
	w->sync = sync;
	w->handoffs = handoffs;
	w->large_keys = *large_keys;
	pthread_mutex_lock(&sync->lock);
	w->roles = sync->roles;
	pthread_mutex_unlock(&sync->lock);
	w->exec.handoff_get = handoff_get;
	w->exec.handoff_ctx = w;
	roles_applied(w);
}

void xkv_worker_dcrew(struct xkv_worker *w, struct xkv_ewt_slot *ewt,
		      struct xkv_holds_shared *shared, bool (*rings_read)(void *ctx),
		      void *ctx)
{
	w->ewt = ewt;
	xkv_holds_init(&w->holds, ewt, w->id, shared);
	w->holds.rings_read = rings_read;
	w->holds.rings_ctx = ctx;
#ifdef XKV_CHECKS
	w->early_release = getenv("XKV_CHECK_EARLY_RELEASE") != NULL;
#endif
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
		roles_applied(w);
	}
	xkv_store_thread_wake();
}

/*
 * xkv: a PUT in pieces, now whole, claims its slot from userspace as XDP claims a
 * write in one datagram: this worker is the candidate for a free slot if it is
 * small, else the partition's owner by the roles; a held slot is joined. The holder
 * applies it and lets go the write the join counted for it; if that is another
 * worker, the item is built here and handed to it. Returns the status this worker
 * replied with, -1 if the holder replies.
 */
static int put_joined(struct xkv_worker *w, const struct xkv_peer *peer, const struct xkv_msg *m,
		      uint64_t hash)
{
	uint32_t partition = xkv_partition(hash), candidate = xkv_roles_owner(&w->roles, partition);
	enum xkv_status status;
	int holder;

	if (has_role(w, w->roles.small, w->roles.nsmall))
		candidate = w->id;
	holder = ewt_join(w, partition, candidate);
	if (holder < 0) {
		w->exec.stats.ewt_join_busy++;
		xkv_reply_status(&w->exec, peer, m, XKV_S_BUSY);
		return XKV_S_BUSY;
	}
	w->exec.stats.ewt_joined++;
	if ((uint32_t)holder == w->id) {
		ewt_take(w, hash);
		status = execute_write(w, peer, m, hash);
		ewt_let_go(w, hash, 1);
		return (int)status;
	}
	/* answered here: nothing was written, so the write counted for the holder goes back */
	if (!build_large(w, peer, m, hash, (uint32_t)holder))
		ewt_give_back(w, hash, (uint32_t)holder);
	return -1;
}

/* A piece of a PUT; the whole value, once complete, has the same key and so the same hash. */
static void put_piece(struct xkv_worker *w, const struct xkv_peer *peer, const struct xkv_msg *m,
		      uint64_t hash)
{
	struct xkv_reasm_msg *whole;
	int ret = xkv_reasm_add(w->reasm, peer, m, w->now_ns, &whole);

	if (ret == XKV_REASM_COMPLETE) {
		if (runs_xkv(w))
			whole->status = put_joined(w, &whole->peer, &whole->head, hash);
		else
			whole->status = execute_request(w, &whole->peer, &whole->head, hash);
		/* dcrew: every piece held the slot from the first to the reply */
		pieces_let_go(w, hash, whole->pieces);
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
			xkv_reply_status(&w->exec, peer, m,
					 (enum xkv_status)xkv_reasm_late_status(w->reasm));
		pieces_let_go(w, hash, 1);
		return;
	}
	/* no room is passing (retry); a contradiction or a scattered message is not */
	w->exec.stats.refused_pieces++;
	xkv_reply_status(&w->exec, peer, m, ret == -ENOMEM ? XKV_S_BUSY : XKV_S_BAD_REQUEST);
	pieces_let_go(w, hash, 1);
}

/*
 * dcrew and xkv: whether steering gave this write's partition to this worker; the
 * acquire in xkv_ewt_holds is what lets it see the previous owner's writes. A write
 * that came without its slot is refused: a steering bug, or the table changed under us.
 */
static bool ewt_check(struct xkv_worker *w, const struct xkv_peer *peer, const struct xkv_msg *m,
		      uint64_t hash)
{
	if (!ewt_claimed(w, m))
		return true;
	if (xkv_ewt_holds(w->ewt, xkv_partition(hash), w->id)) {
		ewt_take(w, hash);
		/* a broken worker, for the test that shows invariant 1's check can fail */
		if (w->early_release)
			count_release(w, xkv_holds_release(&w->holds, xkv_partition(hash), 1), 1);
		return true;
	}
	w->exec.stats.ewt_not_owner++;
	xkv_reply_status(&w->exec, peer, m, XKV_S_BUSY);
	return false;
}

/* Whether another PUT to m's key waits among the next requests of this batch. */
static bool put_ahead(const struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m)
{
	uint32_t end = w->next_ahead + XKV_COMPACT_AHEAD;
	struct xkv_msg next;

	for (uint32_t i = w->next_ahead; i < end && i < w->nahead; i++)
		if (w->ahead[i].hash == hash && ahead_decode(&w->ahead[i], &next) &&
		    xkv_compact_fits(&next) && next.key_len == m->key_len &&
		    !memcmp(next.key, m->key, m->key_len))
			return true;
	return false;
}

/*
 * Write compaction: a PUT this worker would apply now joins its key's open window, or
 * opens one when another PUT to the key comes next in the batch (C-4's look-ahead).
 * True: it is held, and answered when the window closes.
 */
static bool compact_take(struct xkv_worker *w, const struct xkv_peer *peer,
			 const struct xkv_msg *m, uint64_t hash)
{
	struct xkv_compact_window *win;
	struct xkv_reply_route route;

	if (!w->compact || w->exec.echo || !xkv_compact_fits(m) || write_owner(w, hash) != w->id)
		return false;
	win = xkv_compact_find(w->compact, hash, m);
	if (!win) {
		if (!put_ahead(w, hash, m))
			return false;
		win = xkv_compact_open(w->compact, hash, m, xkv_now_ns(), w->service_ns);
		if (!win)
			return false;
		w->exec.stats.compact_windows++;
	}
	xkv_exec_count_write(&w->exec, m); /* executed, in effect, when its window closes */
	if (reply_on_hold)
		xkv_reply_status(&w->exec, peer, m, XKV_S_OK);
	w->exec.tx->route_save(w->exec.tx, &route);
	if (xkv_compact_hold(win, m, peer, w->exec.tx, &route, w->exec.start_ns))
		window_close(w, win);
	return true;
}

/* Closes the windows whose time is up. */
static void windows_close_due(struct xkv_worker *w, uint64_t now_ns)
{
	struct xkv_compact_window *win;

	while ((win = xkv_compact_due(w->compact, now_ns)))
		window_close(w, win);
}

int xkv_worker_compaction(struct xkv_worker *w, uint32_t slo)
{
	w->compact = xkv_compact_create(slo);
	return w->compact ? 0 : -ENOMEM;
}

void xkv_worker_round_end(struct xkv_worker *w, bool dry)
{
	uint64_t now = xkv_now_ns(), busy;

	if (w->round_served) {
		busy = now - w->round_start;
		w->exec.stats.busy_ns += busy;
		/* a moving mean, 1/8 per round: S follows the load without jumping */
		w->service_ns += ((int64_t)(busy / w->round_served) - (int64_t)w->service_ns) / 8;
		w->round_served = 0;
	}
	/* whatever the round served (TCP reads alone, refused datagrams): the others wait */
	roles_check(w);
	if (dry)
		windows_close_all(w);
	else if (w->compact && w->compact->nopen)
		windows_close_due(w, now);
	xkv_holds_round_end(&w->holds, now, dry);
}

/* A request, xkv's or memcached's, from peer; hash is its key's. */
static void serve(struct xkv_worker *w, const struct xkv_peer *peer, const struct xkv_msg *m,
		  uint64_t hash)
{
	roles_check(w);
	if (!ewt_check(w, peer, m, hash))
		return;
	if (m->op == XKV_OP_PUT && m->frag_len != m->value_len) {
		put_piece(w, peer, m, hash);
		return;
	}
	if (compact_take(w, peer, m, hash))
		return;
	execute_request(w, peer, m, hash);
	if (is_write(m))
		ewt_let_go(w, hash, 1);
}

static void handle_datagram(struct xkv_worker *w, const struct xkv_peer *peer,
			    const void *data, size_t len)
{
	enum xkv_reason reason;
	struct xkv_msg m;
	uint64_t hash;

	reason = xkv_decode(data, len, &m);
	if (reason != XKV_R_OK) {
		w->exec.stats.dropped[reason]++;
		return;
	}
	hash = key_hash(w, data, &m); /* every datagram look-ahead kept is taken, in order */
	if (m.op & XKV_OP_REPLY) {
		w->exec.stats.replies_to_server++;
		return;
	}
	serve(w, peer, &m, hash);
}

static void handle_mc(struct xkv_worker *w, const struct xkv_peer *peer, const void *data,
		      size_t len)
{
	enum xkv_mc_verdict verdict;
	struct xkv_msg m;

	verdict = xkv_mc_decode(data, len, &m);
	if (verdict == XKV_MC_UDP_OK) {
		serve(w, peer, &m, key_hash(w, data, &m));
		return;
	}
	if (verdict == XKV_MC_UDP_DROP)
		w->exec.stats.mc_dropped++;
	else
		xkv_mc_reply_error(&w->exec, peer, &m, verdict);
	/* XDP steers a write by its command and key alone, and took its slot: let it go */
	if (is_write(&m) && ewt_claimed(w, &m)) {
		ewt_take(w, xkv_hash(m.key, m.key_len));
		ewt_let_go(w, xkv_hash(m.key, m.key_len), 1);
	}
}

static void datagram(struct xkv_worker *w, const struct xkv_peer *peer, const void *data,
		     size_t len, bool mc)
{
	w->exec.stats.datagrams++;
	/* the first of a batch starts after look-ahead: the clock then, not the round's */
	if (!w->serving)
		start_now(w);
	w->serving = true;
	w->round_served++;
	if (mc)
		handle_mc(w, peer, data, len);
	else
		handle_datagram(w, peer, data, len);
	/* C-4 looks at the clock as each request completes while a window is open */
	if (w->compact && w->compact->nopen)
		windows_close_due(w, xkv_now_ns());
	if (w->depth)
		atomic_fetch_sub_explicit(w->depth, 1, memory_order_relaxed);
}

void xkv_worker_datagram(void *w, const struct xkv_peer *peer, const void *data, size_t len)
{
	datagram(w, peer, data, len, false);
}

void xkv_worker_mc_datagram(void *w, const struct xkv_peer *peer, const void *data, size_t len)
{
	datagram(w, peer, data, len, true);
}
