/* SPDX-License-Identifier: MIT */
/*
 * Every request's time in the server, as log-linear histograms (HDR-like) that the
 * workers fill and the tools read while the server runs. A request has three
 * intervals: queued (its arrival, stamped by the kernel, to the moment its worker
 * starts it), served (from then until its reply is on the TX ring), and total. Each
 * is counted per worker, per kind of request (enum xkv_lat_op) and per size class of
 * the value it carried or returned (include/xkv/hash.h, Minos's classes).
 *
 * A histogram has XKV_LAT_OCTAVES chunks of XKV_LAT_SUB buckets: chunk 0 counts
 * 0..63 ns by the nanosecond, chunk k >= 1 counts [2^(k+5), 2^(k+6)) ns in buckets of
 * 2^(k-1) ns, so a bucket is at most 1/64 of its lower bound wide, and its middle,
 * the value a percentile reports, within 1/128 (0.8 %) of any value in it. Chunk 28
 * ends at 2^34 ns (17 s); longer intervals count in its last bucket.
 *
 * Most of a worker's (op, class, interval) histograms stay empty and the rest span a
 * few octaves, so chunks are handed out on first use from one pool:
 *  - xkv_lat_dirs: one struct xkv_latency_dir per worker, the chunk of each of its
 *    histograms' octaves (0: none yet);
 *  - xkv_lat_chunks: the chunks. Chunk 0 is never handed out: its count[0] is the
 *    number handed out so far, taken atomically by the workers.
 * A worker writes only its own directory and chunks; a reader loads a directory
 * entry with acquire, then the chunk's counts, each an aligned 8-byte word.
 */
#ifndef XKV_LATENCY_H
#define XKV_LATENCY_H

#include <linux/types.h>
#include "hash.h"

#define XKV_LAT_SUB_BITS 6
#define XKV_LAT_SUB	 (1U << XKV_LAT_SUB_BITS) /* buckets in a chunk: one octave */
#define XKV_LAT_OCTAVES	 29
#define XKV_LAT_BUCKETS	 (XKV_LAT_OCTAVES * XKV_LAT_SUB) /* of a whole histogram */
#define XKV_LAT_CHUNKS	 8192 /* in the pool of xkv_lat_chunks, chunk 0 included */

/* The kind of a request: xkv's three ops, and every memcached command in one. */
#define XKV_LAT_OPS_LIST(X) X(GET, "get") X(PUT, "put") X(DELETE, "delete") X(MC, "memcached")
#define XKV_LAT_ENUM(name, str) XKV_LAT_##name,
enum xkv_lat_op { XKV_LAT_OPS_LIST(XKV_LAT_ENUM) XKV_LAT_OPS };
#undef XKV_LAT_ENUM

#define XKV_LAT_INTERVALS_LIST(X) X(QUEUED, "queued") X(SERVED, "served") X(TOTAL, "total")
#define XKV_LAT_ENUM(name, str) XKV_LAT_##name,
enum xkv_lat_interval { XKV_LAT_INTERVALS_LIST(XKV_LAT_ENUM) XKV_LAT_INTERVALS };
#undef XKV_LAT_ENUM

struct xkv_latency_dir {
	__u16 chunk[XKV_LAT_OPS][XKV_SIZE_CLASSES][XKV_LAT_INTERVALS][XKV_LAT_OCTAVES];
} __attribute__((aligned(64))); /* workers don't false-share */

struct xkv_latency_chunk {
	__u64 count[XKV_LAT_SUB];
};

/*
 * The stamp XDP puts in front of a request it redirects (bpf_xdp_adjust_meta): when
 * the kernel saw it, and a check that tells it from whatever the frame held before.
 */
struct xkv_arrival_meta {
	__u64 ns;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 check; /* ns ^ XKV_ARRIVAL_MAGIC; the reader clears it */
};

#define XKV_ARRIVAL_MAGIC 0x786b762d6c617431ULL /* "xkv-lat1" */

_Static_assert(XKV_LAT_CHUNKS <= 65536, "a directory names a chunk in 16 bits");
_Static_assert(sizeof(struct xkv_latency_dir) % 8 == 0, "mapped as words");

#endif /* XKV_LATENCY_H */
