/* SPDX-License-Identifier: MIT */
/*
 * A worker's local order (Hector's local scheduling, a module behind one interface):
 * in which order it serves the requests of a batch, once look-ahead has seen them all.
 * The batch is what the transport received at once (up to XKV_WORKER_AHEAD at a
 * time), its datagrams valid until the last is served, each answered to its own
 * origin whatever the order.
 *
 * Adding one: a file in engine/order/ defining its struct xkv_order_ops, one line in
 * engine/order/orders.c.
 */
#ifndef XKV_ENGINE_ORDER_H
#define XKV_ENGINE_ORDER_H

#include <stdint.h>

struct xkv_worker;

struct xkv_order_ops {
	const char *name; /* as --local-order takes it */
	/*
	 * out[0..n): the order in which w serves its look-ahead's n requests (w->ahead,
	 * in arrival order): a permutation of 0..n-1.
	 */
	void (*order)(struct xkv_worker *w, unsigned n, uint8_t *out);
};

/* The registered order of that name, or NULL (engine/order/orders.c). */
const struct xkv_order_ops *xkv_order_find(const char *name);

/* The first of them, what a worker follows unless told otherwise. */
extern const struct xkv_order_ops *const xkv_order_default;

#endif /* XKV_ENGINE_ORDER_H */
