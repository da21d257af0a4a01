/* SPDX-License-Identifier: MIT */
/*
 * Timed events in (time, scheduling order). A binary min-heap holds them, except those
 * scheduled a fixed delay ahead (the dispatch and completion channels): they come due in
 * the order they were scheduled, so a FIFO lane holds them at O(1) and keeps the heap small.
 */
#ifndef XKV_SIM_EVENTQ_H
#define XKV_SIM_EVENTQ_H

#include <stdbool.h>
#include <stdint.h>

struct event {
	double t;	/* ns */
	uint64_t seq;	/* scheduling order, breaks ties deterministically */
	uint32_t arg;	/* a request or a core, depending on type */
	uint16_t dest;	/* deliveries: a core, or cores for the shared queue */
	uint8_t type;
};

struct event_ring {
	struct event *ev;
	uint32_t head, len, cap; /* cap is a power of two */
};

struct eventq {
	struct event *heap;
	uint32_t len, cap;
	struct event_ring lane;
	uint64_t next_seq;
};

int eventq_init(struct eventq *q, uint32_t cap);
void eventq_free(struct eventq *q);
/*
 * in_order: the caller schedules these at a constant delay, so they may take the FIFO lane.
 * Either store grows when full: amortised, not once per event.
 */
int eventq_push(struct eventq *q, double t, uint8_t type, uint32_t arg, uint16_t dest,
		bool in_order);
bool eventq_pop(struct eventq *q, struct event *out);

#endif
