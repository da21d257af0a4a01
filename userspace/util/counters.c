// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/counters.h"
#include "util/latency.h"

void *xkv_counters_map(int fd, size_t len, uint32_t n, bool writable, size_t *map_len)
{
	struct bpf_map_info info = {0};
	uint32_t info_len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *slots;

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return NULL;
	/* the kernel lays an array's values out round_up(value_size, 8) apart */
	if (info.value_size != len || info.max_entries != n || len % 8) {
		errno = EINVAL;
		return NULL;
	}
	*map_len = (len * n + page - 1) / page * page;
	slots = mmap(NULL, *map_len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		     fd, 0);
	return slots == MAP_FAILED ? NULL : slots;
}

int xkv_counters_map_read(int fd, void *dst, size_t len, uint32_t n)
{
	size_t map_len;
	uint8_t *slots = xkv_counters_map(fd, len, n, false, &map_len);
	int err = 0;

	if (!slots)
		return -errno;
	for (uint32_t i = 0; i < n && !err; i++)
		err = xkv_counters_read((uint8_t *)dst + i * len, slots + i * len, len);
	munmap(slots, map_len);
	return err;
}


void xkv_request_counters_each(const struct xkv_request_counters *c, xkv_counter_fn fn, void *ctx)
{
	for (uint32_t op = XKV_OP_GET; op < XKV_OP_SLOTS; op++)
		fn(ctx, NULL, xkv_op_name(op), c->requests[op]);
	fn(ctx, NULL, "datagrams", c->datagrams);
	fn(ctx, NULL, "reply_datagrams", c->reply_datagrams);
	fn(ctx, NULL, "tx_dropped", c->tx_dropped);
	fn(ctx, NULL, "refused_pieces", c->refused_pieces);
	fn(ctx, NULL, "foreign_writes", c->foreign_writes);
	fn(ctx, NULL, "reassembly_bytes", c->reassembly_bytes);
	fn(ctx, NULL, "reassembly_timeouts", c->reassembly_timeouts);
	fn(ctx, NULL, "reassembly_evicted", c->reassembly_evicted);
	fn(ctx, NULL, "reassembly_late", c->reassembly_late);
	fn(ctx, NULL, "handoffs_sent", c->handoffs_sent);
	fn(ctx, NULL, "handoffs_taken", c->handoffs_taken);
	fn(ctx, NULL, "handoffs_refused", c->handoffs_refused);
	fn(ctx, NULL, "large_on_small", c->large_on_small);
	fn(ctx, NULL, "large_keys_full", c->large_keys_full);
	fn(ctx, NULL, "ewt_released", c->ewt_released);
	fn(ctx, NULL, "ewt_not_owner", c->ewt_not_owner);
	fn(ctx, NULL, "ewt_joined", c->ewt_joined);
	fn(ctx, NULL, "ewt_join_busy", c->ewt_join_busy);
	fn(ctx, NULL, "ewt_heals", c->ewt_heals);
	fn(ctx, NULL, "ewt_healed", c->ewt_healed);
	fn(ctx, NULL, "store_writes", c->store_writes);
	fn(ctx, NULL, "dir_applied", c->dir_applied);
	fn(ctx, NULL, "dir_stale", c->dir_stale);
	fn(ctx, NULL, "dir_notices", c->dir_notices);
	fn(ctx, NULL, "dir_notices_refused", c->dir_notices_refused);
	fn(ctx, NULL, "dir_reports", c->dir_reports);
	fn(ctx, NULL, "dir_forwarded", c->dir_forwarded);
	fn(ctx, NULL, "dir_forward_failed", c->dir_forward_failed);
	fn(ctx, NULL, "dir_unreplicated", c->dir_unreplicated);
	fn(ctx, NULL, "dir_strays_refused", c->dir_strays_refused);
	fn(ctx, NULL, "compact_windows", c->compact_windows);
	fn(ctx, NULL, "compact_writes", c->compact_writes);
	fn(ctx, NULL, "compact_window_max", c->compact_window_max);
	fn(ctx, NULL, "busy_ns", c->busy_ns);
	fn(ctx, NULL, "round_gap_max_ns", c->round_gap_max_ns);
	fn(ctx, NULL, "queue_depth", c->queue_depth);
	fn(ctx, NULL, "mc_dropped", c->mc_dropped);
	fn(ctx, NULL, "mc_errors", c->mc_errors);
	fn(ctx, NULL, "mc_amplify_refused", c->mc_amplify_refused);
	fn(ctx, NULL, "lat_unstamped", c->lat_unstamped);
	fn(ctx, NULL, "lat_lost", c->lat_lost);
	fn(ctx, NULL, "handoff_wait_ns", c->handoff_wait_ns);
	fn(ctx, NULL, "compact_wait_ns", c->compact_wait_ns);
	fn(ctx, NULL, "ewt_wait_ns", c->ewt_wait_ns);
	for (uint32_t cls = 0; cls < XKV_SIZE_CLASSES; cls++)
		fn(ctx, "size_class", xkv_size_class_name(cls), c->size_classes[cls]);
	for (uint32_t s = 0; s < XKV_S_END; s++)
		fn(ctx, "status", xkv_status_name(s), c->replies[s]);
	fn(ctx, "dropped", "reply_to_server", c->replies_to_server);
	for (uint32_t r = XKV_R_OK + 1; r < XKV_R_PROTO_END; r++)
		fn(ctx, "dropped", xkv_reason_name(r), c->dropped[r]);
}

void xkv_socket_counters_each(const struct xkv_socket_counters *c, const char *backend,
			      xkv_counter_fn fn, void *ctx)
{
	if (!strcmp(backend, "uring")) {
		fn(ctx, NULL, "rx_truncated", c->uring_rx_truncated);
		fn(ctx, NULL, "tx_errors", c->uring_tx_errors);
		/* datagrams the kernel dropped on the socket: its receive buffer was full */
		fn(ctx, "kernel", "rx_dropped", c->uring_rx_dropped);
		return;
	}
	fn(ctx, NULL, "sockets", c->sockets);
	fn(ctx, NULL, "rx_packets", c->rx_packets);
	fn(ctx, NULL, "rx_unparsable", c->rx_unparsable);
	fn(ctx, NULL, "tx_packets", c->tx_packets);
	fn(ctx, NULL, "tx_ring_full", c->tx_ring_full);
	fn(ctx, NULL, "tx_to_group", c->tx_to_group);
	fn(ctx, NULL, "kicks", c->kicks);
	fn(ctx, NULL, "tx_waits", c->tx_waits);
	/* drops the kernel saw before any worker could: full RX ring, empty fill ring */
	fn(ctx, "kernel", "rx_dropped", c->kernel_rx_dropped);
	fn(ctx, "kernel", "rx_ring_full", c->kernel_rx_ring_full);
	fn(ctx, "kernel", "rx_fill_ring_empty", c->kernel_fill_empty);
	fn(ctx, "kernel", "tx_invalid_descs", c->kernel_tx_invalid);
}

void xkv_mc_counters_each(const struct xkv_mc_counters *c, xkv_counter_fn fn, void *ctx)
{
	fn(ctx, "memcached", "curr_connections", c->curr_connections);
	fn(ctx, "memcached", "total_connections", c->total_connections);
	fn(ctx, "memcached", "rejected_connections", c->refused_connections);
	fn(ctx, "memcached", "idle_kicks", c->idle_kicks);
	fn(ctx, "memcached", "ssl_handshake_errors", c->ssl_handshake_errors);
	fn(ctx, "memcached", "cmd_get", c->cmd_get);
	fn(ctx, "memcached", "cmd_set", c->cmd_set);
	fn(ctx, "memcached", "cmd_flush", c->cmd_flush);
	fn(ctx, "memcached", "cmd_touch", c->cmd_touch);
	fn(ctx, "memcached", "get_hits", c->get_hits);
	fn(ctx, "memcached", "get_misses", c->get_misses);
	fn(ctx, "memcached", "delete_misses", c->delete_misses);
	fn(ctx, "memcached", "delete_hits", c->delete_hits);
	fn(ctx, "memcached", "incr_misses", c->incr_misses);
	fn(ctx, "memcached", "incr_hits", c->incr_hits);
	fn(ctx, "memcached", "decr_misses", c->decr_misses);
	fn(ctx, "memcached", "decr_hits", c->decr_hits);
	fn(ctx, "memcached", "cas_misses", c->cas_misses);
	fn(ctx, "memcached", "cas_hits", c->cas_hits);
	fn(ctx, "memcached", "cas_badval", c->cas_badval);
	fn(ctx, "memcached", "touch_hits", c->touch_hits);
	fn(ctx, "memcached", "touch_misses", c->touch_misses);
}

/* Adds size bytes of __u64 counters to another's. */
static void add_words(void *dst, const void *src, size_t size)
{
	const __u64 *from = src;
	__u64 *to = dst;

	for (size_t i = 0; i < size / sizeof(__u64); i++)
		to[i] += from[i];
}

void xkv_mc_counters_add(struct xkv_mc_counters *dst, const struct xkv_mc_counters *src)
{
	_Static_assert(sizeof(*src) % sizeof(__u64) == 0, "memcached counters are all __u64");
	add_words(dst, src, sizeof(*src));
}

void xkv_socket_counters_add(struct xkv_socket_counters *dst, const struct xkv_socket_counters *src)
{
	_Static_assert(sizeof(*src) % sizeof(__u64) == 0, "socket counters are all __u64");
	add_words(dst, src, sizeof(*src));
}

uint32_t xkv_worker_queues(const struct xkv_worker_counters *w)
{
	return w->nqueues < XKV_QUEUES_MAX ? w->nqueues : XKV_QUEUES_MAX;
}

uint32_t xkv_queue_totals(const struct xkv_worker_counters *workers, uint32_t n,
			  struct xkv_socket_counters *totals)
{
	uint32_t nqueues = 0;

	memset(totals, 0, XKV_QUEUES_MAX * sizeof(*totals));
	for (uint32_t w = 0; w < n; w++) {
		uint32_t queues = xkv_worker_queues(&workers[w]);

		for (uint32_t q = 0; q < queues; q++)
			xkv_socket_counters_add(&totals[q], &workers[w].queue[q]);
		if (queues > nqueues)
			nqueues = queues;
	}
	return nqueues;
}

struct text_ctx {
	FILE *out;
	char prefix[32]; /* "worker 3 ", "worker 3 queue 0 ", "queue 0 " or "" */
};

static void text_counter(void *ctx, const char *group, const char *name, uint64_t value)
{
	const struct text_ctx *t = ctx;

	fprintf(t->out, "%s%s%s%s: %llu\n", t->prefix, group ? group : "", group ? " " : "",
		name, (unsigned long long)value);
}

void xkv_counters_print(FILE *out, const struct xkv_worker_counters *workers, uint32_t n,
			const struct xkv_server_counters *server)
{
	static struct xkv_socket_counters queues[XKV_QUEUES_MAX];
	struct text_ctx t = {.out = out};
	uint32_t nqueues;

	for (uint32_t w = 0; w < n; w++) {
		snprintf(t.prefix, sizeof(t.prefix), "worker %u ", w);
		xkv_request_counters_each(&workers[w].req, text_counter, &t);
		xkv_socket_counters_each(&workers[w].sock, server->backend, text_counter, &t);
		xkv_mc_counters_each(&workers[w].mc, text_counter, &t);
		for (uint32_t q = 0; q < xkv_worker_queues(&workers[w]); q++) {
			snprintf(t.prefix, sizeof(t.prefix), "worker %u queue %u ", w, q);
			xkv_socket_counters_each(&workers[w].queue[q], server->backend,
						 text_counter, &t);
		}
	}
	nqueues = xkv_queue_totals(workers, n, queues);
	for (uint32_t q = 0; q < nqueues; q++) {
		snprintf(t.prefix, sizeof(t.prefix), "queue %u ", q);
		xkv_socket_counters_each(&queues[q], server->backend, text_counter, &t);
	}
	t.prefix[0] = '\0';
	xkv_server_counters_each(server, text_counter, &t);
}

void xkv_server_counters_each(const struct xkv_server_counters *c, xkv_counter_fn fn, void *ctx)
{
	fn(ctx, "store", "items", c->store_items);
	fn(ctx, "store", "bytes_used", c->store_bytes_used);
	fn(ctx, "store", "bytes_limit", c->store_bytes_limit);
	fn(ctx, "store", "evictions", c->store_evictions);
	fn(ctx, "store", "overflow_used", c->store_overflow_used);
	fn(ctx, "ewt", "active_max", c->ewt_active_max);
}

bool xkv_counter_is_gauge(const char *group, const char *name)
{
	static const struct {
		const char *group, *name;
	} gauges[] = {
		{NULL, "reassembly_bytes"}, {NULL, "sockets"},	    {"memcached", "curr_connections"},
		{"store", "items"},	    {"store", "bytes_used"}, {"store", "bytes_limit"},
		{"store", "overflow_used"}, {"ewt", "active_max"},	    {NULL, "round_gap_max_ns"},
	};

	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
		if (!strcmp(name, gauges[i].name) &&
		    (group ? gauges[i].group && !strcmp(group, gauges[i].group) : !gauges[i].group))
			return true;
	return false;
}
