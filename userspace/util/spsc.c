// SPDX-License-Identifier: MIT
/* The ring's one allocation: its slots, made at init so that push and pop never allocate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/spsc.h"

int xkv_spsc_init(struct xkv_spsc *q, uint32_t capacity)
{
	size_t bytes = (size_t)capacity * sizeof(void *);

	if (capacity == 0 || (capacity & (capacity - 1)))
		return -EINVAL;
	/* whole lines of their own, as aligned_alloc wants: no neighbour shares them */
	if (bytes < XKV_SPSC_LINE)
		bytes = XKV_SPSC_LINE;
	memset(q, 0, sizeof(*q));
	q->slots = aligned_alloc(XKV_SPSC_LINE, bytes);
	if (!q->slots)
		return -ENOMEM;
	q->mask = capacity - 1;
	return 0;
}

void xkv_spsc_fini(struct xkv_spsc *q)
{
	free(q->slots);
	q->slots = NULL;
}
