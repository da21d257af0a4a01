// SPDX-License-Identifier: MIT
/*
 * Random Multi-Level (Canon et al., Hector, ICPP'23, Sec. 3.2): the batch's requests
 * go to XKV_RML_LEVELS queues by the size of their value, smallest first; each next
 * request comes from a non-empty level q drawn with probability proportional to
 * alpha^(levels - q), FIFO within it. Small requests go first, and none starves: a
 * level is drawn while it holds anything. The size is a PUT's value_len, which it
 * carries; a GET's is the store's (its bucket is loading since look-ahead), so the
 * order needs no map of large keys and works under every policy.
 */
#include "engine/minos_plan.h"
#include "engine/order.h"
#include "engine/worker.h"

#define XKV_RML_LEVELS 4
#define XKV_RML_ALPHA  10 /* Hector's */

/* A level's weight: alpha^(levels - q), the first level the heaviest. */
static const uint32_t weight[XKV_RML_LEVELS] = {10000, 1000, 100, 10};
_Static_assert(XKV_RML_ALPHA * XKV_RML_ALPHA * XKV_RML_ALPHA * XKV_RML_ALPHA == 10000,
	       "the weights are alpha's powers");

/* The value's datagrams: one (level 0), up to 16, up to 256, more. */
static unsigned level_of(struct xkv_worker *w, const struct xkv_ahead *a)
{
	uint32_t size = 0, pieces;

	if (!a->valid)
		return 0; /* dropped or refused at once: cheap */
	if (a->op == XKV_OP_PUT)
		size = a->value_len;
	else if (a->op == XKV_OP_GET && !w->exec.echo &&
		 xkv_store_value_len(w->exec.store, a->key, a->key_len, a->hash, &size))
		size = 0; /* not found: a short answer */
	pieces = size / XKV_MINOS_PIECE_BYTES;
	return pieces == 0 ? 0 : pieces < 16 ? 1 : pieces < 256 ? 2 : 3;
}

/* splitmix64: the worker's own stream, a few instructions a draw. */
static uint64_t draw(uint64_t *state)
{
	uint64_t z = *state += 0x9E3779B97F4A7C15ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static void rml_order(struct xkv_worker *w, unsigned n, uint8_t *out)
{
	uint8_t queue[XKV_RML_LEVELS][XKV_WORKER_AHEAD];
	unsigned head[XKV_RML_LEVELS] = {0}, tail[XKV_RML_LEVELS] = {0};

	for (unsigned i = 0; i < n; i++) {
		unsigned q = level_of(w, &w->ahead[i]);

		queue[q][tail[q]++] = (uint8_t)i;
	}
	for (unsigned k = 0; k < n; k++) {
		uint32_t total = 0, x;
		unsigned q;

		for (q = 0; q < XKV_RML_LEVELS; q++)
			total += head[q] < tail[q] ? weight[q] : 0;
		x = (uint32_t)(((draw(&w->rng) >> 32) * total) >> 32);
		for (q = 0; head[q] == tail[q] || x >= weight[q]; q++)
			x -= head[q] < tail[q] ? weight[q] : 0;
		out[k] = queue[q][head[q]++];
	}
}

const struct xkv_order_ops xkv_order_rml = {.name = "rml", .order = rml_order};
