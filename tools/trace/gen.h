/* SPDX-License-Identifier: MIT */
/*
 * Request traces: a workload spec (docs/TRACE.md) turned into Ethernet/IPv4/UDP
 * frames of xkv requests, the same for the same seed.
 *
 * Keys and their popularity come from xkv-bench's workload (tools/bench/workload.h):
 * key i is "k" + i zero-padded to the key size, zipf rank r is key r. Each PUT
 * writes a value of its own (bytes drawn from the seed and its request id), so a
 * stale value is told from a fresh one. Request ids run 1..count; a request's
 * timestamp is its send time in the trace, in nanoseconds.
 */
#ifndef XKV_TRACE_GEN_H
#define XKV_TRACE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

#define TRACE_FRAME_MAX 1514 /* Ethernet header and a 1500-byte IPv4 packet */

struct trace_spec {
	uint32_t keys;			  /* key space: indices 0 .. keys - 1 */
	uint32_t key_size;		  /* bytes of every key */
	double weight[XKV_OP_DELETE + 1]; /* by op: chances of GET, PUT, DELETE, summing to 1 */
	uint32_t value_min, value_max;	  /* PUT value bytes, uniform in [min, max] */
	double zipf;			  /* popularity exponent, 0 for uniform */
};

/*
 * Parses "keys=1000,get=0.9,put=0.08,del=0.02,value=64,zipf=0.99" (docs/TRACE.md)
 * over the defaults. Returns 0, or -EINVAL with the reason in why.
 */
int trace_spec_parse(const char *text, struct trace_spec *spec, char *why, size_t why_len);

struct trace_endpoint {
	uint8_t mac[6];
	uint8_t ip[4];
	uint16_t port; /* network byte order */
};

struct trace_gen_opts {
	struct trace_spec spec;
	uint64_t count; /* requests; a PUT in pieces is one */
	uint64_t seed;
	uint32_t pps; /* frames per second the timestamps say */
	struct trace_endpoint src, dst;
};

struct trace_gen_stats {
	uint64_t requests[XKV_OP_DELETE + 1]; /* by op */
	uint64_t frames;
	uint64_t split_puts; /* PUTs sent in pieces */
};

/* Receives each frame and its time from the start of the trace. Nonzero stops. */
typedef int (*trace_gen_fn)(void *ctx, uint64_t ns, const uint8_t *frame, uint32_t len);

/*
 * Generates opts->count requests, handing each frame to fn in order. Returns 0,
 * what fn returned, -EINVAL (opts fail the checks of trace_spec_parse), or -ENOMEM.
 */
int trace_gen(const struct trace_gen_opts *opts, trace_gen_fn fn, void *ctx,
	      struct trace_gen_stats *stats);

#endif /* XKV_TRACE_GEN_H */
