/* SPDX-License-Identifier: MIT */
/* What one phase of a run counted, per thread or merged. */
#ifndef XKV_BENCH_STATS_H
#define XKV_BENCH_STATS_H

#include <stdint.h>

#include <xkv/proto.h>
#include "common/hist.h"
#include "workload.h"

enum bench_op {
	BENCH_GET,
	BENCH_PUT,
	BENCH_OPS,
};

struct op_stats {
	uint64_t ok;		 /* right answers: PUTs stored, GETs with the key's value */
	uint64_t misses;	 /* GETs answered NOT_FOUND */
	uint64_t errors;	 /* any other answer, or a wrong one */
	uint64_t lost;		 /* no reply within the timeout; not retried, no latency */
	struct hist latency; /* ns from intended send to reply, of ok and misses */
};

struct bench_stats {
	struct op_stats op[BENCH_OPS];
	struct op_stats size_class[WORKLOAD_SIZE_CLASSES]; /* the same requests, by value size */
	uint64_t late;	  /* replies to requests already counted lost */
	uint64_t invalid; /* datagrams that do not decode as a reply or match no request */
	uint64_t validations; /* GETs answered VALIDATE, sent again with the token it gave */
	/* the open loop's schedule, and how well the generator kept to it */
	uint64_t scheduled;	  /* arrivals due in the measured window */
	uint64_t unsent;	  /* of those, never sent: the generator fell behind */
	uint64_t slot_waits;	  /* arrivals that came due while every slot was busy */
	uint64_t behind_ns;	  /* at the end: how late the oldest unsent arrival was */
	struct hist send_lag; /* ns from each request's intended to its actual send */
};

/* XKV_OP_GET or XKV_OP_PUT to its row. */
static inline enum bench_op bench_op_of(uint8_t xkv_op)
{
	return xkv_op == XKV_OP_GET ? BENCH_GET : BENCH_PUT;
}

void bench_stats_init(struct bench_stats *s);
void op_stats_merge(struct op_stats *dst, const struct op_stats *src);
void bench_stats_merge(struct bench_stats *dst, const struct bench_stats *src);
/* GETs and PUTs together. */
void bench_stats_total(const struct bench_stats *s, struct op_stats *all);

#endif /* XKV_BENCH_STATS_H */
