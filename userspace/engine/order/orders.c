// SPDX-License-Identifier: MIT
/* The local orders a worker can follow: one line each (engine/order.h), the default first. */
#include <stddef.h>
#include <string.h>

#include "engine/order.h"

extern const struct xkv_order_ops xkv_order_fifo, xkv_order_rml;

static const struct xkv_order_ops *const orders[] = {&xkv_order_fifo, &xkv_order_rml};

const struct xkv_order_ops *const xkv_order_default = &xkv_order_fifo;

const struct xkv_order_ops *xkv_order_find(const char *name)
{
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
		if (!strcmp(orders[i]->name, name))
			return orders[i];
	return NULL;
}
