// SPDX-License-Identifier: MIT
/* First come, first served: the batch in arrival order (Hector's FCFS). */
#include "engine/order.h"

static void fifo_order(struct xkv_worker *w, unsigned n, uint8_t *out)
{
	(void)w;
	for (unsigned i = 0; i < n; i++)
		out[i] = (uint8_t)i;
}

const struct xkv_order_ops xkv_order_fifo = {.name = "fifo", .order = fifo_order};
