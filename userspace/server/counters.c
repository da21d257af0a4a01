// SPDX-License-Identifier: MIT
/*
 * The server's live counters: each worker publishes a snapshot of its own into its
 * slot of xkv_wstats, the main thread the store's into xkv_sstats, where
 * `xkv-loader stats` and `bpftool map dump` read them while the server runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/server.h"
#include "util/counters.h"

/* Maps the backend's counter map name, of entries values of value_size bytes. */
static void *map_counters(struct server *s, const char *name, size_t value_size,
			  uint32_t entries, size_t *len)
{
	void *slots;
	int fd;

	fd = s->o.backend->map_open(s, name);
	if (fd < 0) {
		fprintf(stderr, "xkv-server: the counter map %s: %s\n", name, strerror(-fd));
		return NULL;
	}
	slots = xkv_counters_map(fd, value_size, entries, true, len);
	if (!slots)
		fprintf(stderr, "xkv-server: mapping the counter map %s: %s%s\n", name,
			strerror(errno),
			errno == EINVAL ? " (pins of another build? detach with its loader)" : "");
	close(fd);
	return slots;
}

int server_counters_open(struct server *s)
{
	struct server_counters *c = &s->counters;

	c->workers = map_counters(s, "xkv_wstats", sizeof(*c->workers), XKV_WORKERS_MAX,
				  &c->workers_len);
	c->server = map_counters(s, "xkv_sstats", sizeof(*c->server), 1, &c->server_len);
	c->lat_dirs = map_counters(s, "xkv_lat_dirs", sizeof(*c->lat_dirs), XKV_WORKERS_MAX,
				   &c->lat_dirs_len);
	c->lat_chunks = map_counters(s, "xkv_lat_chunks", sizeof(*c->lat_chunks), XKV_LAT_CHUNKS,
				     &c->lat_chunks_len);
	if (!c->workers || !c->server || !c->lat_dirs || !c->lat_chunks)
		return -EINVAL;
	/* whatever a previous server published there is not ours */
	memset(c->workers, 0, sizeof(*c->workers) * XKV_WORKERS_MAX);
	memset(c->server, 0, sizeof(*c->server));
	memset(c->lat_dirs, 0, sizeof(*c->lat_dirs) * XKV_WORKERS_MAX);
	memset(c->lat_chunks, 0, sizeof(*c->lat_chunks) * XKV_LAT_CHUNKS);
	c->server->workers = s->o.workers;
	c->server->pid = (uint32_t)getpid();
	snprintf(c->server->backend, sizeof(c->server->backend), "%s", s->o.backend->name);
	c->server->started_ns = xkv_now_ns();
	return 0;
}

void server_counters_latency(struct server *s, struct server_worker *w)
{
	if (!s->o.latency)
		return;
	w->lat = (struct xkv_latency){.dir = &s->counters.lat_dirs[w->id],
				      .chunks = s->counters.lat_chunks};
	w->proto.exec.lat = &w->lat;
}

static void worker_snapshot(struct server *s, struct server_worker *w,
			    struct xkv_worker_counters *snap)
{
	*snap = (struct xkv_worker_counters){0};
	xkv_worker_counters(&w->proto, &snap->req);
	s->o.backend->worker_sockets(s, w->id, snap);
	for (uint32_t q = 0; q < snap->nqueues; q++)
		xkv_socket_counters_add(&snap->sock, &snap->queue[q]);
	server_mc_counters(s, w->id, &snap->mc);
}

static void publish_worker(struct server *s, struct server_worker *w, uint64_t now_ns)
{
	struct xkv_worker_counters snap;

	worker_snapshot(s, w, &snap);
	xkv_counters_publish(&s->counters.workers[w->id], &snap, sizeof(snap), now_ns);
}

void server_counters_tick(struct server *s, struct server_worker *w, uint64_t now_ns)
{
	if (now_ns < w->next_publish)
		return;
	publish_worker(s, w, now_ns);
	w->next_publish = now_ns + XKV_PUBLISH_NS;
}

void server_counters_publish_server(struct server *s, uint64_t now_ns)
{
	struct xkv_server_counters snap = *s->counters.server;
	struct xkv_store_stats st;

	xkv_store_get_stats(s->store, &st);
	snap.store_items = st.items;
	snap.store_bytes_used = st.bytes_used;
	snap.store_bytes_limit = st.bytes_limit;
	snap.store_evictions = st.evictions;
	snap.store_overflow_used = st.overflow_used;
	snap.ewt_active_max = s->ewt_active_max;
	xkv_counters_publish(s->counters.server, &snap, sizeof(snap), now_ns);
}

void server_counters_final(struct server *s, uint32_t workers)
{
	uint64_t now = xkv_now_ns();

	/* the workers have stopped: their slots are this thread's to write, then to print */
	for (uint32_t i = 0; i < workers; i++)
		publish_worker(s, &s->workers[i], now);
	server_counters_publish_server(s, now);
	xkv_counters_print(stdout, s->counters.workers, workers, s->counters.server);
	if (s->o.latency)
		xkv_lat_print(stdout, &(struct xkv_lat_view){.dirs = s->counters.lat_dirs,
							      .chunks = s->counters.lat_chunks,
							      .workers = workers},
			      NULL);
	s->o.backend->print_stats(s);
	/*
	 * Out whole now, before the teardown's lines on stderr: in a log of both, a block
	 * flushed when the buffer filled ended mid-line, the rest after those lines, and
	 * the counter cut in two was missing to whoever read it (bench-compaction.sh).
	 */
	fflush(stdout);
}

void server_counters_close(struct server *s)
{
	struct server_counters *c = &s->counters;

	if (c->workers)
		munmap(c->workers, c->workers_len);
	if (c->server)
		munmap(c->server, c->server_len);
	if (c->lat_dirs)
		munmap(c->lat_dirs, c->lat_dirs_len);
	if (c->lat_chunks)
		munmap(c->lat_chunks, c->lat_chunks_len);
	*c = (struct server_counters){0};
}
