/* SPDX-License-Identifier: MIT */
/*
 * xkv-bench's command line: the option table its --help comes from, the values'
 * checks, and the checks between options (what --sweep, --transport and --rate
 * imply and refuse).
 */
#ifndef XKV_BENCH_OPTIONS_H
#define XKV_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "interval.h"
#include "proto.h"
#include "workload.h"

#define BENCH_HELP 1 /* bench_options_parse's answer to --help */

enum bench_transport { TRANSPORT_UDP, TRANSPORT_XDP };

struct bench_opts {
	const char *server;
	const char *label;
	enum bench_transport transport;
	const struct bench_proto *proto;
	const char *iface; /* xdp: the client interface */
	uint32_t queue;	   /* xdp: the first rx queue the sockets bind to */
	uint32_t queues;   /* xdp: thread t's socket is on queue + t % queues */
	unsigned threads, depth;
	double duration_s; /* a sweep: of each step */
	double rate;	   /* open loop: requests per second, all threads; 0: closed */
	bool sweep;
	double slo_us, slo_mult, sweep_max;
	unsigned sweep_retries;
	double slo_pct;	      /* the percentile the SLO bounds */
	const char *csv;      /* a sweep's steps as CSV */
	const char *interval_csv;	/* each second of the run as CSV */
	struct large_schedule schedule; /* n 0: --large-pct throughout */
	uint32_t warmup_keys; /* the first this many keys are PUT before measuring */
	struct workload_config workload;
	uint64_t seed;
	uint64_t timeout_ms;
	bool json;
};

/*
 * Fills o from argv, defaults included. Returns 0, BENCH_HELP when --help was asked
 * for, or -EINVAL with the reason in why, naming the option and its value.
 */
int bench_options_parse(int argc, char **argv, struct bench_opts *o, char *why, size_t why_len);

void bench_options_usage(FILE *f);

#endif /* XKV_BENCH_OPTIONS_H */
