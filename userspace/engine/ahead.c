// SPDX-License-Identifier: MIT
#include <string.h>

#include <xkv/hash.h>

#include "proto/mc_udp.h"
#include "engine/ahead.h"
#include "engine/worker.h"

/* Decodes a request in its protocol (mc: memcached's over UDP); false if it is not one. */
static bool decode(const void *data, size_t len, bool mc, struct xkv_msg *m)
{
	return mc ? xkv_mc_decode(data, len, m) == XKV_MC_UDP_OK
		  : xkv_decode(data, len, m) == XKV_R_OK;
}

void xkv_ahead_begin(struct xkv_worker *w)
{
	w->nahead = w->next_ahead = 0;
	w->serving = false;
}

void xkv_ahead_look(struct xkv_worker *w, const void *data, size_t len, bool mc)
{
	struct xkv_ahead *a;
	struct xkv_msg m;

	/* the first look after a datagram was served starts a batch: its frames are new */
	if (w->serving)
		xkv_ahead_begin(w);
	if (w->nahead == XKV_WORKER_AHEAD)
		return;
	a = &w->ahead[w->nahead++];
	if (!decode(data, len, mc, &m)) {
		*a = (struct xkv_ahead){.data = data, .len = len, .mc = mc};
		return;
	}
	*a = (struct xkv_ahead){.data = data, .len = len, .mc = mc, .valid = true,
				.hash = xkv_hash(m.key, m.key_len), .key = m.key,
				.key_len = m.key_len, .op = m.op, .value_len = m.value_len};
	if (!w->exec.echo)
		xkv_store_prefetch(w->exec.store, a->hash);
}

struct xkv_ahead *xkv_ahead_next(struct xkv_worker *w, const void *data)
{
	struct xkv_ahead *a;

	if (w->next_ahead == w->nahead || w->ahead[w->next_ahead].data != data)
		return NULL;
	a = &w->ahead[w->next_ahead++];
	a->served = true;
	return a;
}

bool xkv_ahead_put(const struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m)
{
	unsigned looked = 0;
	struct xkv_msg next;

	for (uint32_t i = 0; i < w->nahead && looked < XKV_COMPACT_AHEAD; i++) {
		const struct xkv_ahead *a = &w->ahead[i];

		if (a->served)
			continue;
		looked++;
		if (a->valid && a->hash == hash && decode(a->data, a->len, a->mc, &next) &&
		    xkv_compact_fits(&next) && next.key_len == m->key_len &&
		    !memcmp(next.key, m->key, m->key_len))
			return true;
	}
	return false;
}
