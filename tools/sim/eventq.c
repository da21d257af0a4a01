// SPDX-License-Identifier: MIT
/* Binary heap ordered by (time, scheduling order), plus a FIFO lane for in-order events. */
#include <errno.h>
#include <stdlib.h>

#include "eventq.h"

int eventq_init(struct eventq *q, uint32_t cap)
{
	uint32_t ring = 1;

	while (ring < cap)
		ring *= 2;
	*q = (struct eventq){ .cap = cap, .lane = { .cap = ring } };
	q->heap = malloc(sizeof(*q->heap) * cap);
	q->lane.ev = malloc(sizeof(*q->lane.ev) * ring);
	if (!q->heap || !q->lane.ev) {
		eventq_free(q);
		return -ENOMEM;
	}
	return 0;
}

void eventq_free(struct eventq *q)
{
	free(q->heap);
	free(q->lane.ev);
	q->heap = NULL;
	q->lane.ev = NULL;
}

static inline bool before(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static struct event *lane_at(const struct event_ring *r, uint32_t i)
{
	return &r->ev[(r->head + i) & (r->cap - 1)];
}

static int lane_push(struct event_ring *r, const struct event *ev)
{
	if (r->len == r->cap) {
		struct event *grown = malloc(sizeof(*grown) * r->cap * 2);

		if (!grown)
			return -ENOMEM;
		for (uint32_t i = 0; i < r->len; i++)
			grown[i] = *lane_at(r, i);
		free(r->ev);
		r->ev = grown;
		r->head = 0;
		r->cap *= 2;
	}
	*lane_at(r, r->len++) = *ev;
	return 0;
}

static int heap_push(struct eventq *q, const struct event *ev)
{
	uint32_t i;

	if (q->len == q->cap) {
		struct event *grown = realloc(q->heap, sizeof(*grown) * q->cap * 2);

		if (!grown)
			return -ENOMEM;
		q->heap = grown;
		q->cap *= 2;
	}
	for (i = q->len++; i > 0; i = (i - 1) / 2) {
		struct event *parent = &q->heap[(i - 1) / 2];

		if (!before(ev, parent))
			break;
		q->heap[i] = *parent;
	}
	q->heap[i] = *ev;
	return 0;
}

int eventq_push(struct eventq *q, double t, uint8_t type, uint32_t arg, uint16_t dest,
		bool in_order)
{
	struct event ev = { .t = t, .seq = q->next_seq++, .arg = arg, .dest = dest, .type = type };
	struct event_ring *lane = &q->lane;

	/* anything scheduled earlier than the lane's tail would break its order */
	if (in_order && (!lane->len || t >= lane_at(lane, lane->len - 1)->t))
		return lane_push(lane, &ev);
	return heap_push(q, &ev);
}

static void heap_pop(struct eventq *q, struct event *out)
{
	struct event last;
	uint32_t i = 0;

	*out = q->heap[0];
	last = q->heap[--q->len];
	for (;;) {
		uint32_t child = 2 * i + 1;

		if (child >= q->len)
			break;
		if (child + 1 < q->len && before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	q->heap[i] = last;
}

bool eventq_pop(struct eventq *q, struct event *out)
{
	struct event_ring *lane = &q->lane;

	if (lane->len && (!q->len || before(lane_at(lane, 0), &q->heap[0]))) {
		*out = *lane_at(lane, 0);
		lane->head = (lane->head + 1) & (lane->cap - 1);
		lane->len--;
		return true;
	}
	if (!q->len)
		return false;
	heap_pop(q, out);
	return true;
}
