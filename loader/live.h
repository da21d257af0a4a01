/* SPDX-License-Identifier: MIT */
/*
 * `xkv-loader stats`: the counters a running xkv-server publishes beside the
 * program's maps (include/xkv/stats.h), read while it runs.
 */
#ifndef XKV_LOADER_LIVE_H
#define XKV_LOADER_LIVE_H

#include <stdbool.h>
#include <stdio.h>
#include <xkv/stats.h>

#include "util/json.h"
#include "util/latency.h"

struct live_counters {
	struct xkv_server_counters server;
	struct xkv_worker_counters workers[XKV_WORKERS_MAX];
	struct xkv_socket_counters queues[XKV_QUEUES_MAX]; /* each rx queue's sockets */
	uint32_t nqueues;
	uint32_t if_queues; /* the interface's rx queues now (ethtool), 0: it did not say */
	double age_s;	/* since the server last published */
	bool running;	/* its process is still there */
};

/* Reads the snapshots published on ifname: 0, -ENODATA when none was, or -errno. */
int live_counters_read(const char *ifname, struct live_counters *l);

/*
 * One counter per line, "worker W name: N", "worker W queue Q name: N", "queue Q
 * name: N" and "store name: N", as the server's own print.
 */
void live_counters_print_text(const struct live_counters *l, FILE *out);

/*
 * For status: the server, and the sockets bound on each rx queue, in a line of text;
 * then, while an XDP server runs, a warning naming the interface's rx queues with no
 * socket, whose requests the program drops (no_socket).
 */
void live_counters_print_summary(const struct live_counters *l, FILE *out);

/*
 * The same as a "server" member of the open status object: queue_sockets, and for the
 * XDP backend rx_queues and queues_without_socket.
 */
void live_counters_summary_json(const struct live_counters *l, struct xkv_json *w);

/*
 * The members "server", "workers" (each with a "queues" array: its socket on each rx
 * queue it serves) and "queues" (summed over the workers) of the open stats object.
 */
void live_counters_json(const struct live_counters *l, struct xkv_json *w);

/*
 * A copy of the latency histograms (include/xkv/latency.h) of the server's workers on
 * ifname: 0 or -errno. Free it with xkv_lat_view_free.
 */
int live_latency_read(const char *ifname, uint32_t workers, struct xkv_lat_view *copy);

/*
 * A "latency" member of the open object: every histogram with counts since earlier
 * (NULL: since the server started), each worker's, then their merge (no "worker"), with its
 * percentiles and its non-empty buckets as [lowest ns, count] pairs.
 */
void live_latency_json(const struct xkv_lat_view *v, const struct xkv_lat_view *earlier,
		       struct xkv_json *w);

#endif /* XKV_LOADER_LIVE_H */
