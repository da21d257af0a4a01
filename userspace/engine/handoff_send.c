// SPDX-License-Identifier: MIT
#include <errno.h>

#include "engine/handoff_send.h"
#include "engine/worker.h"

bool xkv_handoff_send(struct xkv_worker *w, enum xkv_handoff_kind kind, uint32_t to,
		      const struct xkv_origin *from, const struct xkv_msg *req, uint64_t hash,
		      struct xkv_item *item)
{
	struct xkv_handoff *m = xkv_handoff_new(kind, from, req, hash);

	if (m) {
		m->item = item;
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
	xkv_reply_status(&w->exec, from, req, XKV_S_BUSY);
	return false;
}

bool xkv_handoff_send_item(struct xkv_worker *w, const struct xkv_origin *from,
			   const struct xkv_msg *m, uint64_t hash, uint32_t to)
{
	struct xkv_item *item = xkv_store_item_new(m->key, m->key_len, m->frag, m->value_len);

	xkv_exec_count_size(&w->exec, m->value_len);
	if (!item) {
		w->exec.stats.requests[XKV_OP_PUT]++;
		xkv_reply_status(&w->exec, from, m, xkv_status_from_errno(-errno));
		return false;
	}
	return xkv_handoff_send(w, XKV_HANDOFF_INSTALL, to, from, m, hash, item);
}
