// SPDX-License-Identifier: MIT
#include <string.h>

#include <xkv/hash.h>

#include "proto/mc_udp.h"
#include "engine/ahead.h"
#include "engine/worker.h"

/* Decodes a request look-ahead saw, in its protocol; false if it is not one. */
static bool ahead_decode(const struct xkv_ahead *a, struct xkv_msg *m)
{
	return a->mc ? xkv_mc_decode(a->data, a->len, m) == XKV_MC_UDP_OK
		     : xkv_decode(a->data, a->len, m) == XKV_R_OK;
}

void xkv_ahead_look(struct xkv_worker *w, const void *data, size_t len, bool mc)
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

uint64_t xkv_ahead_hash(struct xkv_worker *w, const void *data, const struct xkv_msg *m)
{
	if (w->next_ahead < w->nahead && w->ahead[w->next_ahead].data == data)
		return w->ahead[w->next_ahead++].hash;
	return xkv_hash(m->key, m->key_len);
}

bool xkv_ahead_put(const struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m)
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
