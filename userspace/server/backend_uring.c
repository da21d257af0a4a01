// SPDX-License-Identifier: MIT
/* The io_uring backend: kernel UDP sockets, steered by an SK_REUSEPORT program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfctl/bpfctl.h"
#include "net/reuseport.h"
#include "net/udp_uring.h"
#include "server/server.h"

#define WAIT_MS 100

struct uring_backend {
	struct xkv_reuseport steer;
	struct xkv_uring *socks; /* one per worker */
	uint32_t opened;
};

/* The allowlist goes in before any socket binds: no datagram meets an empty one. */
static int uring_allow(struct uring_backend *b, const struct server_opts *o)
{
	int fd = xkv_reuseport_map_fd(&b->steer, "xkv_allow"), err;

	if (fd < 0)
		return fd;
	err = bpfctl_allow_write(fd, -1, o->allow, o->n_allow);
	close(fd);
	return err;
}

static int uring_open(struct server *s)
{
	struct uring_backend *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	s->net = b;
	b->socks = calloc(s->o.workers, sizeof(*b->socks));
	if (!b->socks)
		return -ENOMEM;
	err = xkv_reuseport_load(&b->steer, s->o.port, s->o.workers, s->o.policy);
	if (err) {
		fprintf(stderr, "xkv-server: loading the steering program: %s\n", strerror(-err));
		return err;
	}
	err = uring_allow(b, &s->o);
	if (err) {
		fprintf(stderr, "xkv-server: writing the allowlist: %s\n", strerror(-err));
		return err;
	}
	for (; b->opened < s->o.workers; b->opened++) {
		err = xkv_uring_open(&b->socks[b->opened], s->o.port,
				     b->opened ? -1 : xkv_reuseport_prog_fd(&b->steer));
		if (err) {
			fprintf(stderr, "xkv-server: worker %u: UDP port %u: %s\n", b->opened,
				s->o.port, strerror(-err));
			return err;
		}
		err = xkv_reuseport_add(&b->steer, b->opened, b->socks[b->opened].fd);
		if (err) {
			fprintf(stderr, "xkv-server: worker %u: steering its socket: %s\n",
				b->opened, strerror(-err));
			xkv_uring_close(&b->socks[b->opened]);
			return err;
		}
	}
	return 0;
}

static struct xkv_tx *uring_worker_tx(struct server *s, uint32_t id)
{
	struct uring_backend *b = s->net;

	return &b->socks[id].tx;
}

static _Atomic uint64_t *uring_worker_depth(struct server *s, uint32_t id)
{
	struct uring_backend *b = s->net;

	return (_Atomic uint64_t *)&b->steer.qdepth[id].depth;
}

/*
 * Datagrams the kernel dropped after the SK_REUSEPORT program counted them on the
 * worker's queue depth never reach it: taken off, or steering would see a busy worker
 * for good (as the XDP backend's drops_forget).
 */
static void drops_forget(struct uring_backend *b, struct server_worker *w)
{
	uint64_t dropped = xkv_uring_kernel_drops(&b->socks[w->id]);

	if (dropped)
		atomic_fetch_sub_explicit((_Atomic uint64_t *)&b->steer.qdepth[w->id].depth,
					  dropped, memory_order_relaxed);
}

static void uring_run(struct server *s, struct server_worker *w)
{
	struct uring_backend *b = s->net;
	struct xkv_uring *u = &b->socks[w->id];
	uint64_t next_drops_check = 0;
	const struct xkv_rx rx = xkv_worker_rx(&w->proto, 0); /* memcached over UDP: XDP only */
	/* memcached's connections, and the hand-offs their writes travel on */
	const int fds[XKV_URING_WAIT_FDS] = {server_mc_fd(s, w), xkv_worker_bell_fd(&w->proto)};

	while (!atomic_load_explicit(&s->stopping, memory_order_relaxed)) {
		/* blocked in the kernel, the worker holds no item: grace periods go on */
		xkv_worker_sleep(&w->proto);
		xkv_uring_wait(u, fds, XKV_URING_WAIT_FDS, WAIT_MS);
		xkv_worker_wake(&w->proto);
		uint64_t now = xkv_now_ns();

		xkv_worker_tick(&w->proto, now);
		server_counters_tick(s, w, now);
		if (now >= next_drops_check) {
			next_drops_check = now + XKV_DROPS_CHECK_NS;
			drops_forget(b, w);
		}
		xkv_uring_drain(u, &rx);
		xkv_worker_handoffs(&w->proto);
		server_mc_poll(s, w);
		/* a drain takes everything queued: the ring is dry, windows close */
		xkv_worker_round_end(&w->proto, true);
		xkv_store_quiescent();
	}
}

static int uring_map_open(struct server *s, const char *name)
{
	struct uring_backend *b = s->net;

	return xkv_reuseport_map_fd(&b->steer, name);
}

static void uring_worker_sockets(struct server *s, uint32_t id, struct xkv_worker_counters *c)
{
	struct uring_backend *b = s->net;

	c->nqueues = 1; /* the kernel's UDP stack spreads queues over the sockets */
	if (id < b->opened)
		xkv_uring_add_counters(&b->socks[id], &c->queue[0]);
}

/* What is the steering program's, not a worker's. */
static void uring_print_stats(struct server *s)
{
	struct uring_backend *b = s->net;

	for (uint32_t r = 1; r < XKV_R_END; r++)
		printf("steering dropped %s: %lu\n", xkv_reason_name(r),
		       xkv_reuseport_dropped(&b->steer, r));
}

static void uring_close(struct server *s)
{
	struct uring_backend *b = s->net;

	if (!b)
		return;
	for (uint32_t i = 0; i < b->opened; i++)
		xkv_uring_close(&b->socks[i]);
	if (b->steer.skel)
		xkv_reuseport_close(&b->steer);
	free(b->socks);
	free(b);
	s->net = NULL;
}

const struct backend xkv_backend_uring = {
	.name = "uring",
	.open = uring_open,
	.worker_tx = uring_worker_tx,
	.worker_depth = uring_worker_depth,
	.run = uring_run,
	.map_open = uring_map_open,
	.worker_sockets = uring_worker_sockets,
	.print_stats = uring_print_stats,
	.close = uring_close,
};
