// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/handoff.h"

int xkv_handoffs_init(struct xkv_handoffs *h, uint32_t n)
{
	size_t ring_bytes = (size_t)n * n * sizeof(*h->ring);
	size_t bell_bytes = (size_t)n * sizeof(*h->bell);
	int err = -ENOMEM;

	*h = (struct xkv_handoffs){.n = n};
	/* each ring's indices, and each bell, have cache lines of their own */
	h->ring = aligned_alloc(XKV_SPSC_LINE, ring_bytes);
	h->bell = aligned_alloc(XKV_SPSC_LINE, bell_bytes);
	if (!h->ring || !h->bell)
		goto out_fini;
	memset(h->ring, 0, ring_bytes);
	for (uint32_t i = 0; i < n; i++)
		h->bell[i] = (struct xkv_handoff_bell){.fd = -1};
	for (uint32_t i = 0; i < n; i++) {
		h->bell[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (h->bell[i].fd < 0) {
			err = -errno;
			goto out_fini;
		}
	}
	for (uint32_t i = 0; i < n * n; i++) {
		err = xkv_spsc_init(&h->ring[i], XKV_HANDOFF_RING);
		if (err)
			goto out_fini;
	}
	return 0;

out_fini:
	xkv_handoffs_fini(h);
	return err;
}

void xkv_handoffs_fini(struct xkv_handoffs *h)
{
	struct xkv_handoff *m;

	for (uint32_t i = 0; h->ring && i < h->n * h->n; i++) {
		if (!h->ring[i].slots) /* never made: init failed before it */
			continue;
		while ((m = xkv_spsc_pop(&h->ring[i])))
			xkv_handoff_free(m);
		xkv_spsc_fini(&h->ring[i]);
	}
	for (uint32_t i = 0; h->bell && i < h->n; i++)
		if (h->bell[i].fd >= 0)
			close(h->bell[i].fd);
	free(h->ring);
	free(h->bell);
	h->ring = NULL;
	h->bell = NULL;
}

bool xkv_handoffs_push(struct xkv_handoffs *h, uint32_t from, uint32_t to,
		       struct xkv_handoff *m)
{
	if (!xkv_spsc_push(&h->ring[from * h->n + to], m))
		return false;
	/* sequentially consistent with the receiver's asleep store and its look at the rings */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->bell[to].asleep, memory_order_relaxed))
		eventfd_write(h->bell[to].fd, 1);
	return true;
}

void xkv_handoffs_sleep(struct xkv_handoffs *h, uint32_t id)
{
	atomic_store_explicit(&h->bell[id].asleep, true, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	/* a message pushed before we said so rang no bell: ring it ourselves */
	for (uint32_t from = 0; from < h->n; from++) {
		if (from != id && !xkv_spsc_empty(&h->ring[from * h->n + id])) {
			eventfd_write(h->bell[id].fd, 1);
			return;
		}
	}
}

void xkv_handoffs_wake(struct xkv_handoffs *h, uint32_t id)
{
	eventfd_t rung;

	atomic_store_explicit(&h->bell[id].asleep, false, memory_order_relaxed);
	eventfd_read(h->bell[id].fd, &rung); /* nonblocking: quiet it, rung or not */
}

struct xkv_handoff *xkv_handoff_new(enum xkv_handoff_kind kind, const struct xkv_origin *from,
				    const struct xkv_msg *req, uint64_t hash)
{
	bool write = kind == XKV_HANDOFF_WRITE || kind == XKV_HANDOFF_MC_WRITE;
	uint32_t value = write ? req->frag_len : 0;
	struct xkv_handoff *m = malloc(sizeof(*m) + req->key_len + value);

	if (!m)
		return NULL;
	*m = (struct xkv_handoff){.kind = kind, .req = *req, .hash = hash};
	if (from)
		m->from = *from;
	memcpy(m->data, req->key, req->key_len);
	m->req.key = m->data;
	if (value)
		memcpy(m->data + req->key_len, req->frag, value);
	m->req.frag = value ? m->data + req->key_len : NULL;
	if (!value)
		m->req.frag_len = 0;
	return m;
}

void xkv_handoff_free(struct xkv_handoff *m)
{
	if (m->item)
		xkv_store_item_free(m->item);
	free(m);
}
