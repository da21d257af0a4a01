// SPDX-License-Identifier: MIT
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpfctl/bpfctl.h"
#include "live.h"
#include "util/counters.h"
#include "util/latency.h"

static int read_map(const char *ifname, const char *name, void *dst, size_t len, uint32_t n)
{
	int fd = bpfctl_map_open(ifname, name);
	int err;

	if (fd < 0)
		return fd;
	err = xkv_counters_map_read(fd, dst, len, n);
	close(fd);
	return err;
}

int live_counters_read(const char *ifname, struct live_counters *l)
{
	struct timespec now;
	int err;

	err = read_map(ifname, "xkv_sstats", &l->server, sizeof(l->server), 1);
	if (!err)
		err = read_map(ifname, "xkv_wstats", l->workers, sizeof(l->workers[0]),
			       XKV_WORKERS_MAX);
	if (err)
		return err;
	if (!l->server.published_ns || l->server.workers > XKV_WORKERS_MAX)
		return -ENODATA;
	/* the map is anyone's with CAP_BPF: print only a backend name we know */
	if (strcmp(l->server.backend, "xdp") && strcmp(l->server.backend, "uring"))
		snprintf(l->server.backend, sizeof(l->server.backend), "unknown");
	l->nqueues = xkv_queue_totals(l->workers, l->server.workers, l->queues);
	clock_gettime(CLOCK_MONOTONIC, &now);
	l->age_s = ((double)now.tv_sec * 1e9 + now.tv_nsec - (double)l->server.published_ns) / 1e9;
	l->running = kill((pid_t)l->server.pid, 0) == 0 || errno == EPERM;
	l->if_queues = bpfctl_rx_queues(ifname);
	return 0;
}

int live_latency_read(const char *ifname, uint32_t workers, struct xkv_lat_view *copy)
{
	int dirs_fd = bpfctl_map_open(ifname, "xkv_lat_dirs");
	int chunks_fd = dirs_fd < 0 ? dirs_fd : bpfctl_map_open(ifname, "xkv_lat_chunks");
	size_t dirs_len = 0, chunks_len = 0;
	struct xkv_lat_view live = {.workers = workers};
	int err;

	if (chunks_fd < 0) {
		err = chunks_fd;
		goto out_close;
	}
	live.dirs = xkv_counters_map(dirs_fd, sizeof(*live.dirs), XKV_WORKERS_MAX, false, &dirs_len);
	live.chunks = xkv_counters_map(chunks_fd, sizeof(*live.chunks), XKV_LAT_CHUNKS, false,
				       &chunks_len);
	err = live.dirs && live.chunks ? xkv_lat_view_copy(&live, copy) : -errno;
	if (live.dirs)
		munmap((void *)live.dirs, dirs_len);
	if (live.chunks)
		munmap((void *)live.chunks, chunks_len);
out_close:
	if (chunks_fd >= 0)
		close(chunks_fd);
	if (dirs_fd >= 0)
		close(dirs_fd);
	return err;
}

static void latency_json_one(void *ctx, const struct xkv_lat_key *k, const struct xkv_lat_hist *h)
{
	struct xkv_json *w = ctx;

	xkv_json_object_start(w);
	if (k->worker >= 0) /* else every worker's, merged */
		xkv_json_uint_field(w, "worker", (uint64_t)k->worker);
	xkv_json_string_field(w, "op", xkv_lat_op_name(k->op));
	xkv_json_string_field(w, "class", xkv_size_class_name(k->cls));
	xkv_json_string_field(w, "interval", xkv_lat_interval_name(k->interval));
	xkv_json_uint_field(w, "count", xkv_lat_hist_count(h));
	xkv_json_uint_field(w, "p50_ns", xkv_lat_hist_percentile(h, 0.5));
	xkv_json_uint_field(w, "p99_ns", xkv_lat_hist_percentile(h, 0.99));
	xkv_json_uint_field(w, "p999_ns", xkv_lat_hist_percentile(h, 0.999));
	xkv_json_uint_field(w, "max_ns", xkv_lat_hist_percentile(h, 1.0));
	xkv_json_key(w, "buckets");
	xkv_json_array_start(w);
	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		xkv_json_array_start(w);
		xkv_json_uint(w, xkv_lat_bucket_low(b));
		xkv_json_uint(w, h->count[b]);
		xkv_json_array_end(w);
	}
	xkv_json_array_end(w);
	xkv_json_object_end(w);
}

void live_latency_json(const struct xkv_lat_view *v, const struct xkv_lat_view *earlier,
		       struct xkv_json *w)
{
	xkv_json_key(w, "latency");
	xkv_json_array_start(w);
	xkv_lat_each(v, earlier, latency_json_one, w);
	xkv_json_array_end(w);
}

/* "server pid P (running), backend xdp, W workers": what opens both text forms. */
static void print_server(const struct live_counters *l, FILE *out)
{
	const struct xkv_server_counters *s = &l->server;

	fprintf(out, "server pid %u (%s), backend %s, %u workers", s->pid,
		l->running ? "running" : "gone", s->backend, s->workers);
}

/* The same as the "server" object, left open for more members. */
static void server_json_open(const struct live_counters *l, struct xkv_json *w)
{
	const struct xkv_server_counters *s = &l->server;

	xkv_json_key(w, "server");
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "pid", s->pid);
	xkv_json_bool_field(w, "running", l->running);
	xkv_json_string_field(w, "backend", s->backend);
	xkv_json_uint_field(w, "workers", s->workers);
}

/* An rx queue of the interface where a running XDP server has no socket: XDP drops there. */
static bool queue_uncovered(const struct live_counters *l, uint32_t q)
{
	return l->running && !strcmp(l->server.backend, "xdp") && q < l->if_queues &&
	       (q >= l->nqueues || !l->queues[q].sockets);
}

/* "2-3 5": the uncovered queues, runs of them as ranges; how many there are */
static uint32_t print_uncovered(const struct live_counters *l, FILE *out)
{
	uint32_t n = 0;

	for (uint32_t q = 0; q < l->if_queues; q++) {
		uint32_t last = q;

		if (!queue_uncovered(l, q))
			continue;
		while (last + 1 < l->if_queues && queue_uncovered(l, last + 1))
			last++;
		if (out)
			fprintf(out, last > q ? "%s%u-%u" : "%s%u", n ? " " : "", q, last);
		n += last - q + 1;
		q = last;
	}
	return n;
}

void live_counters_print_summary(const struct live_counters *l, FILE *out)
{
	uint32_t n;

	fputs("  ", out);
	print_server(l, out);
	fputs("; sockets bound on each rx queue:", out);
	for (uint32_t q = 0; q < l->nqueues; q++)
		fprintf(out, " %u:%llu", q, (unsigned long long)l->queues[q].sockets);
	fputc('\n', out);
	n = print_uncovered(l, NULL);
	if (!n)
		return;
	fprintf(out, "  warning: rx queue%s ", n > 1 ? "s" : "");
	print_uncovered(l, out);
	fprintf(out,
		" of %u %s no socket: requests arriving there are dropped (no_socket); restart "
		"xkv-server\n",
		l->if_queues, n > 1 ? "have" : "has");
}

void live_counters_summary_json(const struct live_counters *l, struct xkv_json *w)
{
	server_json_open(l, w);
	xkv_json_key(w, "queue_sockets");
	xkv_json_array_start(w);
	for (uint32_t q = 0; q < l->nqueues; q++)
		xkv_json_uint(w, l->queues[q].sockets);
	xkv_json_array_end(w);
	if (!strcmp(l->server.backend, "xdp")) {
		xkv_json_uint_field(w, "rx_queues", l->if_queues);
		xkv_json_key(w, "queues_without_socket");
		xkv_json_array_start(w);
		for (uint32_t q = 0; q < l->if_queues; q++)
			if (queue_uncovered(l, q))
				xkv_json_uint(w, q);
		xkv_json_array_end(w);
	}
	xkv_json_object_end(w);
}

void live_counters_print_text(const struct live_counters *l, FILE *out)
{
	const struct xkv_server_counters *s = &l->server;

	print_server(l, out);
	fprintf(out, ", up %.1f s, published %.1f s ago\n",
		(double)(s->published_ns - s->started_ns) / 1e9, l->age_s);
	xkv_counters_print(out, l->workers, s->workers, s);
}

/* Writes counters as members of an open object; a group becomes a nested object. */
struct json_ctx {
	struct xkv_json *w;
	const char *group; /* the nested object open now, or NULL */
};

static void json_counter(void *ctx, const char *group, const char *name, uint64_t value)
{
	struct json_ctx *j = ctx;

	if (j->group && (!group || strcmp(group, j->group))) {
		xkv_json_object_end(j->w);
		j->group = NULL;
	}
	if (group && !j->group) {
		xkv_json_key(j->w, group);
		xkv_json_object_start(j->w);
		j->group = group;
	}
	xkv_json_uint_field(j->w, name, value);
}

static void json_close_group(struct json_ctx *j)
{
	if (j->group)
		xkv_json_object_end(j->w);
	j->group = NULL;
}

/* A "queues" member: n rx queues' socket counters, each {"queue": Q, ...}. */
static void queues_json(struct xkv_json *w, const struct xkv_socket_counters *queues,
			uint32_t n, const char *backend, struct json_ctx *j)
{
	xkv_json_key(w, "queues");
	xkv_json_array_start(w);
	for (uint32_t q = 0; q < n; q++) {
		xkv_json_object_start(w);
		xkv_json_uint_field(w, "queue", q);
		xkv_socket_counters_each(&queues[q], backend, json_counter, j);
		json_close_group(j);
		xkv_json_object_end(w);
	}
	xkv_json_array_end(w);
}

void live_counters_json(const struct live_counters *l, struct xkv_json *w)
{
	const struct xkv_server_counters *s = &l->server;
	struct json_ctx j = {.w = w};

	server_json_open(l, w);
	xkv_json_fixed_field(w, "uptime_s", (double)(s->published_ns - s->started_ns) / 1e9, 3);
	xkv_json_fixed_field(w, "age_s", l->age_s, 3);
	xkv_server_counters_each(s, json_counter, &j);
	json_close_group(&j);
	xkv_json_object_end(w);
	xkv_json_key(w, "workers");
	xkv_json_array_start(w);
	for (uint32_t i = 0; i < s->workers; i++) {
		xkv_json_object_start(w);
		xkv_json_uint_field(w, "worker", i);
		xkv_request_counters_each(&l->workers[i].req, json_counter, &j);
		xkv_socket_counters_each(&l->workers[i].sock, s->backend, json_counter, &j);
		xkv_mc_counters_each(&l->workers[i].mc, json_counter, &j);
		json_close_group(&j);
		queues_json(w, l->workers[i].queue, xkv_worker_queues(&l->workers[i]), s->backend,
			    &j);
		xkv_json_object_end(w);
	}
	xkv_json_array_end(w);
	queues_json(w, l->queues, l->nqueues, s->backend, &j);
}
