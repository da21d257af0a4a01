/* SPDX-License-Identifier: MIT */
/*
 * The live counters of include/xkv/stats.h: published by their one writer under a
 * sequence count, read whole by anyone, and named, so that the server's shutdown
 * print, `xkv-loader stats` and the tests call each counter the same.
 */
#ifndef XKV_COUNTERS_H
#define XKV_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <xkv/stats.h>

#include "util/seqcount.h"

/*
 * Maps the counter map fd (a BPF_F_MMAPABLE array), checking that it holds n values
 * of len bytes. Returns its slots and their *map_len for munmap, or NULL with errno
 * set: EINVAL when it holds another layout (pins of another build).
 */
void *xkv_counters_map(int fd, size_t len, uint32_t n, bool writable, size_t *map_len);

/* Copies the n slots of the counter map fd into dst, each consistent. 0 or -errno. */
int xkv_counters_map_read(int fd, void *dst, size_t len, uint32_t n);

/*
 * Called once per counter. group is NULL or what the counter is one of ("status",
 * "dropped", "kernel"); text shows "group name", JSON nests it.
 */
typedef void (*xkv_counter_fn)(void *ctx, const char *group, const char *name, uint64_t value);

/* Every counter of a worker's protocol path. */
void xkv_request_counters_each(const struct xkv_request_counters *c, xkv_counter_fn fn,
			       void *ctx);

/* Every counter of a worker's sockets on backend ("xdp" or "uring"): only its own kind. */
void xkv_socket_counters_each(const struct xkv_socket_counters *c, const char *backend,
			      xkv_counter_fn fn, void *ctx);

/* Every counter of memcached over TCP (group "memcached"), named as its `stats` does. */
void xkv_mc_counters_each(const struct xkv_mc_counters *c, xkv_counter_fn fn, void *ctx);

/* Adds every counter of src to dst's. */
void xkv_mc_counters_add(struct xkv_mc_counters *dst, const struct xkv_mc_counters *src);

/* Adds every counter of src to dst's. */
void xkv_socket_counters_add(struct xkv_socket_counters *dst, const struct xkv_socket_counters *src);

/* The rx queues w serves: the entries of w->queue in use (a published count, bounded). */
uint32_t xkv_worker_queues(const struct xkv_worker_counters *w);

/*
 * Each rx queue's sockets summed over the n workers (totals has XKV_QUEUES_MAX
 * entries): how a queue's traffic spread. Returns the queues any worker serves.
 */
uint32_t xkv_queue_totals(const struct xkv_worker_counters *workers, uint32_t n,
			  struct xkv_socket_counters *totals);

/*
 * Every counter of n workers' slots, each followed by its socket on each rx queue it
 * serves, then each rx queue's sockets summed over them, then the store's, one
 * "worker W name: N", "worker W queue Q name: N", "queue Q name: N" or "store name: N"
 * a line: the names the server prints at shutdown and xkv-loader stats shows.
 */
void xkv_counters_print(FILE *out, const struct xkv_worker_counters *workers, uint32_t n,
			const struct xkv_server_counters *server);

/* The store's figures: "store items", "store bytes_used", ... */
void xkv_server_counters_each(const struct xkv_server_counters *c, xkv_counter_fn fn, void *ctx);

/*
 * Whether a counter the functions above name is a level now (bytes held, sockets,
 * connections open, items) rather than a count that only grows: Prometheus's gauge.
 */
bool xkv_counter_is_gauge(const char *group, const char *name);

#endif /* XKV_COUNTERS_H */
