// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdatomic.h>

#include <xkv/hash.h>

#include "engine/worker.h"

#define XKV_WORKER_EXPIRY_NS 100000000ULL /* 100 ms between looks at timeouts */

int xkv_worker_init(struct xkv_worker *w, uint32_t id, uint32_t nworkers,
		    struct xkv_store *store, struct xkv_tx *tx,
		    const struct xkv_reasm_config *reasm)
{
	int err;

	*w = (struct xkv_worker){.id = id, .nworkers = nworkers};
	err = xkv_exec_init(&w->exec, store, tx);
	if (err)
		return err;
	w->reasm = xkv_reasm_create(reasm);
	if (!w->reasm) {
		xkv_exec_fini(&w->exec);
		return -ENOMEM;
	}
	return 0;
}

void xkv_worker_fini(struct xkv_worker *w)
{
	xkv_reasm_destroy(w->reasm);
	xkv_exec_fini(&w->exec);
}

void xkv_worker_tick(struct xkv_worker *w, uint64_t now_ns)
{
	w->now_ns = now_ns;
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
}

void xkv_worker_look_ahead(void *ctx, const void *data, size_t len)
{
	struct xkv_worker *w = ctx;
	uint64_t hash;
	struct xkv_msg m;

	/* the first look after a datagram was served starts a batch: its frames are new */
	if (w->serving) {
		w->nahead = w->next_ahead = 0;
		w->serving = false;
	}
	if (w->nahead == XKV_WORKER_AHEAD || xkv_decode(data, len, &m) != XKV_R_OK)
		return;
	hash = xkv_hash(m.key, m.key_len);
	if (!w->exec.echo)
		xkv_store_prefetch(w->exec.store, hash);
	w->ahead[w->nahead++] = (struct xkv_ahead){data, hash};
}

/* The hash look-ahead kept for this datagram, or one computed now. */
static uint64_t key_hash(struct xkv_worker *w, const void *data, const struct xkv_msg *m)
{
	if (w->next_ahead < w->nahead && w->ahead[w->next_ahead].data == data)
		return w->ahead[w->next_ahead++].hash;
	return xkv_hash(m->key, m->key_len);
}

static void execute_request(struct xkv_worker *w, const struct xkv_peer *peer,
			    const struct xkv_msg *m, uint64_t hash)
{
	/*
	 * Invariant 1 (docs/DESIGN.md): steering brings a partition's writes to its owner only;
	 * should one arrive elsewhere (a policy bug, a worker count changed under the
	 * program), it is counted and refused, never executed beside the owner.
	 */
	if (m->op != XKV_OP_GET && xkv_partition_owner(xkv_partition(hash), w->nworkers) != w->id) {
		w->exec.stats.foreign_writes++;
		xkv_reply_status(&w->exec, peer, m, XKV_S_BUSY);
		return;
	}
	xkv_execute(&w->exec, peer, m, hash);
}

/* A piece of a PUT; the whole value, once complete, has the same key and so the same hash. */
static void put_piece(struct xkv_worker *w, const struct xkv_peer *peer, const struct xkv_msg *m,
		      uint64_t hash)
{
	struct xkv_reasm_msg *whole;
	int ret = xkv_reasm_add(w->reasm, peer, m, w->now_ns, &whole);

	if (ret == XKV_REASM_COMPLETE) {
		execute_request(w, &whole->peer, &whole->head, hash);
		xkv_reasm_release(w->reasm, whole);
		return;
	}
	if (ret == XKV_REASM_PENDING)
		return;
	/* no room is passing (retry); a contradiction or a scattered message is not */
	w->exec.stats.refused_pieces++;
	xkv_reply_status(&w->exec, peer, m, ret == -ENOMEM ? XKV_S_BUSY : XKV_S_BAD_REQUEST);
}

void xkv_worker_datagram(void *ctx, const struct xkv_peer *peer, const void *data, size_t len)
{
	struct xkv_worker *w = ctx;
	enum xkv_reason reason;
	struct xkv_msg m;
	uint64_t hash;

	w->exec.stats.datagrams++;
	w->serving = true;
	if (w->depth)
		atomic_fetch_sub_explicit(w->depth, 1, memory_order_relaxed);
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
	if (m.op == XKV_OP_PUT && m.frag_len != m.value_len) {
		put_piece(w, peer, &m, hash);
		return;
	}
	execute_request(w, peer, &m, hash);
}
