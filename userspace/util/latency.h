/* SPDX-License-Identifier: MIT */
/*
 * The histograms of include/xkv/latency.h: a worker records into its directory and
 * the shared pool of chunks; a reader copies them out whole (struct xkv_lat_hist),
 * merges workers, takes one snapshot from another, and asks for percentiles.
 */
#ifndef XKV_UTIL_LATENCY_H
#define XKV_UTIL_LATENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <xkv/latency.h>

/* The bucket of ns (0 .. XKV_LAT_BUCKETS - 1): longer than 17 s counts in the last. */
uint32_t xkv_lat_bucket(uint64_t ns);

/* The lowest value bucket b counts, and how many nanoseconds from there it spans. */
uint64_t xkv_lat_bucket_low(uint32_t b);
uint64_t xkv_lat_bucket_width(uint32_t b);

/* What a percentile reports for bucket b: its middle, within 1/128 of what it holds. */
uint64_t xkv_lat_bucket_value(uint32_t b);

/* A worker's recorder: its directory, and the pool it takes chunks from. */
struct xkv_latency {
	struct xkv_latency_dir *dir;
	struct xkv_latency_chunk *chunks; /* XKV_LAT_CHUNKS; chunk 0 counts those taken */
	uint64_t lost; /* samples not counted: the pool was empty */
};

/* Counts ns in the worker's histogram (op, size class, interval). */
void xkv_latency_record(struct xkv_latency *l, enum xkv_lat_op op, uint32_t cls,
			enum xkv_lat_interval interval, uint64_t ns);

/*
 * Counts a request answered now that the kernel received at arrival and its worker
 * started at start: queued (start - arrival), served (now - start) and total. A start
 * before the arrival (clocks read on two CPUs) counts as not queued.
 */
void xkv_latency_request(struct xkv_latency *l, enum xkv_lat_op op, uint32_t cls,
			 uint64_t arrival, uint64_t start, uint64_t now);

/* A whole histogram, as a reader holds it. */
struct xkv_lat_hist {
	uint64_t count[XKV_LAT_BUCKETS];
};

/* Adds the histogram (op, cls, interval) of a worker's directory to h. */
void xkv_lat_hist_add_dir(struct xkv_lat_hist *h, const struct xkv_latency_dir *dir,
			  const struct xkv_latency_chunk *chunks, enum xkv_lat_op op, uint32_t cls,
			  enum xkv_lat_interval interval);

/* h += other; h -= other (a later snapshot less an earlier one: never below 0). */
void xkv_lat_hist_merge(struct xkv_lat_hist *h, const struct xkv_lat_hist *other);
void xkv_lat_hist_sub(struct xkv_lat_hist *h, const struct xkv_lat_hist *earlier);

uint64_t xkv_lat_hist_count(const struct xkv_lat_hist *h);

/*
 * The value below which a fraction q (0 < q <= 1) of the samples lie: the middle of
 * the bucket holding the ceil(q x count)-th smallest. 0 when h is empty.
 */
uint64_t xkv_lat_hist_percentile(const struct xkv_lat_hist *h, double q);

/*
 * Every worker's histograms as xkv_lat_dirs and xkv_lat_chunks hold them: the maps
 * themselves, or a copy (xkv_lat_view_copy).
 */
struct xkv_lat_view {
	const struct xkv_latency_dir *dirs; /* workers of them */
	const struct xkv_latency_chunk *chunks; /* XKV_LAT_CHUNKS */
	uint32_t workers;
};

/* What xkv_lat_each finds: worker (-1: every worker's merged) and which histogram. */
struct xkv_lat_key {
	int32_t worker;
	enum xkv_lat_op op;
	uint32_t cls;
	enum xkv_lat_interval interval;
};

typedef void (*xkv_lat_fn)(void *ctx, const struct xkv_lat_key *key, const struct xkv_lat_hist *h);

/*
 * Calls fn for every histogram of v that counted something since earlier (a copy
 * taken before; NULL: since the server started), by op, class and interval: each
 * worker's, then every worker's merged.
 */
void xkv_lat_each(const struct xkv_lat_view *v, const struct xkv_lat_view *earlier, xkv_lat_fn fn,
		  void *ctx);

/*
 * A copy of v in memory of its own (the dirs first: a chunk handed out after them
 * counts nothing here), or saved to and loaded from a file, as `xkv-loader stats
 * --save` and `--since` do. 0 or -errno; free with xkv_lat_view_free.
 */
int xkv_lat_view_copy(const struct xkv_lat_view *v, struct xkv_lat_view *copy);
int xkv_lat_view_save(const struct xkv_lat_view *v, const char *path);
int xkv_lat_view_load(const char *path, struct xkv_lat_view *copy);
void xkv_lat_view_free(struct xkv_lat_view *copy);

/*
 * "worker W latency OP CLASS INTERVAL: count N p50_ns A p99_ns B p999_ns C max_ns D"
 * for every histogram xkv_lat_each finds, "latency ..." for the merged ones.
 */
void xkv_lat_print(FILE *out, const struct xkv_lat_view *v, const struct xkv_lat_view *earlier);

/* A size class's name: "0", "lt2", ... "le1m" (values below 2, 4, ... bytes; up to 1 MiB). */
const char *xkv_size_class_name(uint32_t cls);

/* The names the tools show: "get", ..., "memcached"; "queued", "served", "total". */
const char *xkv_lat_op_name(enum xkv_lat_op op);
const char *xkv_lat_interval_name(enum xkv_lat_interval interval);

#endif /* XKV_UTIL_LATENCY_H */
