// SPDX-License-Identifier: MIT
#include <errno.h>

#include "engine/dir_serve.h"
#include "engine/execute.h"
#include "engine/hot.h"
#include "engine/replicas.h"

/* A notice from the controller: the set as it says, answered OK or why not. */
static void notice(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		   uint64_t hash)
{
	int err = -EINVAL;

	if ((m->op & ~XKV_OP_REPLY) == XKV_OP_PUT && w->replicas)
		err = xkv_replicas_notice(w->replicas, m->key, m->key_len, hash, m->frag,
					  m->frag_len);
	if (err)
		w->exec.stats.dir_notices_refused++;
	else
		w->exec.stats.dir_notices++;
	/* a full set is the server's memory, not the request's fault */
	xkv_reply_status(&w->exec, from, m,
			 err == -ENOSPC ? XKV_S_NO_MEMORY : xkv_status_from_errno(err));
}

/* The controller asks for the hot keys: the workers' last epochs, merged (engine/hot.h). */
static void report(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m)
{
	if ((m->op & ~XKV_OP_REPLY) != XKV_OP_GET || !w->hot) {
		xkv_reply_status(&w->exec, from, m, XKV_S_BAD_REQUEST);
		return;
	}
	w->exec.stats.dir_reports++;
	xkv_reply_scratch(&w->exec, from, m,
			  (uint32_t)xkv_hot_report(w->hot, w->exec.scratch, XKV_EXEC_SCRATCH));
}

/*
 * A stray sent home as it came, marked XKV_DIR_FORWARDED, from its client's address:
 * home answers the client itself, and the directory lets the datagram by unsteered.
 */
static void send_home(struct xkv_worker *w, const struct xkv_origin *from,
		      const struct xkv_msg *m, const struct xkv_dir_server *home)
{
	struct xkv_msg fwd = *m;
	size_t cap;
	void *buf;
	int len;

	fwd.ext.dflags |= XKV_DIR_FORWARDED;
	buf = from->tx->reserve(from, &cap);
	if (!buf) {
		w->exec.stats.tx_dropped++;
		return;
	}
	len = xkv_encode(buf, cap, &fwd);
	if (len < 0) { /* it decoded, so it encodes: a buffer smaller than a datagram */
		from->tx->release(from, buf);
		w->exec.stats.dir_forward_failed++;
		return;
	}
	if (from->tx->forward(from, buf, (size_t)len, home->addr, home->port))
		w->exec.stats.dir_forward_failed++;
	else
		w->exec.stats.dir_forwarded++;
	xkv_exec_done(&w->exec, from, m, 0);
}

bool xkv_dir_serve_take(struct xkv_worker *w, const struct xkv_origin *from,
			const struct xkv_msg **m, struct xkv_msg *plain, uint64_t hash)
{
	const struct xkv_msg *req = *m;
	uint8_t op = req->op & ~XKV_OP_REPLY;
	struct xkv_dir_server home;

	if (req->ext.dflags & XKV_DIR_NOTICE) {
		notice(w, from, req, hash);
		return true;
	}
	if (req->ext.dflags & XKV_DIR_REPORT) {
		report(w, from, req);
		return true;
	}
	if (!xkv_msg_steered(req) || !w->replicas)
		return false;
	switch (xkv_replicas_route(w->replicas, req->key, req->key_len, hash,
				   op == XKV_OP_PUT || op == XKV_OP_DELETE, req->ext.target,
				   req->ext.dflags & XKV_DIR_FORWARDED, &home)) {
	case XKV_REPLICA_SERVE:
		return false;
	case XKV_REPLICA_PLAIN:
		/*
		 * Its version is another key's (a collision) or from before a removal: served
		 * as unsteered, and the reply, not steered either, vouches for nothing. Its
		 * source is already the address the client sent to: this server.
		 */
		*plain = *req;
		plain->ext.dflags &= (uint8_t)~(XKV_DIR_STEERED | XKV_DIR_FORWARDED);
		*m = plain;
		w->exec.stats.dir_unreplicated++;
		return false;
	case XKV_REPLICA_FORWARD:
		send_home(w, from, req, &home);
		return true;
	case XKV_REPLICA_REFUSE:
		break;
	}
	w->exec.stats.dir_strays_refused++;
	xkv_reply_status(&w->exec, from, req, XKV_S_BAD_REQUEST);
	return true;
}
