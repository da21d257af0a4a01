// SPDX-License-Identifier: MIT
/*
 * The XDP backend: the XDP program steers each request to a worker's AF_XDP
 * socket on the queue it arrived on; workers busy-poll their sockets.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfctl/bpfctl.h"
#include "net/xsk.h"
#include "server/server.h"

#define IDLE_POLLS 1000 /* empty busy polls before sleeping in poll(2) */
#define IDLE_SLEEP_MS 1
#define BIND_TRIES 50
#define BIND_RETRY_US 20000

struct xdp_backend {
	int lock_fd;	    /* the interface's server lock (bpfctl_server_lock), held while we live */
	bool attached_here; /* detach on exit: no xkv-loader attachment was there before us */
	int xsks_fd;
	/* steering's state, mmapped from the pinned maps */
	struct xkv_qdepth *qdepth; /* xkv_qdepth: XKV_WORKERS_MAX */
	struct xkv_ewt_slot *ewt;  /* xkv_ewt: XKV_EWT_SLOTS */
	size_t qdepth_len, ewt_len;
	uint32_t nqueues; /* served: if_queues, at most XKV_QUEUES_MAX */
	uint32_t if_queues; /* the interface's at start; 0: ethtool did not say */
	unsigned int ifindex; /* the interface's at start */
	struct xkv_xsk_queue *queues;
	struct xkv_xsk *socks; /* [queue * workers + worker] */
	_Atomic uint32_t *marks; /* socks[i]'s RX ring, filled this far at main's last fence */
	uint32_t opened;
	enum xkv_xsk_mode mode;
};

/* "queue 2" or "queues 2-5": the queues from..to-1 */
static const char *queue_range(uint32_t from, uint32_t to, char *buf, size_t size)
{
	if (to - from == 1)
		snprintf(buf, size, "queue %u", from);
	else
		snprintf(buf, size, "queues %u-%u", from, to - 1);
	return buf;
}

static int attach(struct server *s, struct xdp_backend *b)
{
	struct bpfctl_attach_opts opts = {
		.ifname = s->o.iface,
		.mode = s->o.skb_mode ? BPFCTL_MODE_SKB : BPFCTL_MODE_NATIVE,
		.config = {.port = s->o.port, .memcached_port = s->o.memcached_port,
			   .policy = (uint8_t)s->o.policy, .workers = s->o.workers,
			   .owner = XKV_OWNER_SERVER, .frame_max = XKV_XSK_RX_MAX,
			   .no_arrival_stamp = !s->o.latency},
		.allow = s->o.allow,
		.n_allow = s->o.n_allow,
		.listen = &s->o.listen,
	};
	struct bpfctl_status st;
	int err;

	/*
	 * An attachment made by xkv-loader is reused (its config rewritten) and left on
	 * exit; one left by a server is a killed server's (we hold the lock), taken over,
	 * and detached on exit.
	 */
	b->attached_here = bpfctl_status(s->o.iface, &st) != 0 || !st.ours || !st.has_config ||
			   st.config.owner == XKV_OWNER_SERVER;
	if (!b->attached_here)
		opts.config.owner = XKV_OWNER_LOADER;
	err = bpfctl_attach(&opts);
	if (err)
		fprintf(stderr, "xkv-server: attaching XDP to %s: %s\n", s->o.iface,
			strerror(-err));
	return err;
}

/* Maps the pinned array name of bytes; *len is what to munmap. NULL with errno set. */
static void *map_steering(struct server *s, const char *name, size_t bytes, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpfctl_map_open(s->o.iface, name);
	void *p;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	*len = (bytes + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * Queue depths and the EWT, zeroed: no request is queued yet, so whatever a
 * previous server left there is stale. Called once no stale socket can receive.
 */
static int map_steering_state(struct server *s, struct xdp_backend *b)
{
	b->qdepth = map_steering(s, "xkv_qdepth", sizeof(*b->qdepth) * XKV_WORKERS_MAX,
				 &b->qdepth_len);
	if (!b->qdepth)
		return -errno;
	b->ewt = map_steering(s, "xkv_ewt", sizeof(*b->ewt) * XKV_EWT_SLOTS, &b->ewt_len);
	if (!b->ewt)
		return -errno;
	memset(b->qdepth, 0, sizeof(*b->qdepth) * XKV_WORKERS_MAX);
	memset(b->ewt, 0, sizeof(*b->ewt) * XKV_EWT_SLOTS);
	return 0;
}

/*
 * A server killed before it could clean up leaves its sockets in the XSKMAP, which
 * keeps them, and their hold on the queue, alive: empty every slot first.
 */
static void clear_stale_sockets(struct xdp_backend *b)
{
	for (uint32_t slot = 0; slot < XKV_XSKS_MAX; slot++)
		bpf_map_delete_elem(b->xsks_fd, &slot);
}

/* The kernel lets go of a closed socket's queue after a grace period: retry a little. */
static int xsk_open_retrying(struct xkv_xsk *sock, struct xkv_xsk_queue *q, const char *ifname,
			     uint32_t queue_sockets, bool first, enum xkv_xsk_mode *mode)
{
	int err = -EBUSY;

	for (int tries = 0; tries < BIND_TRIES && err == -EBUSY; tries++) {
		if (tries)
			usleep(BIND_RETRY_US);
		err = xkv_xsk_open(sock, q, ifname, queue_sockets, first, true, mode);
	}
	return err;
}

static int open_sockets(struct server *s, struct xdp_backend *b)
{
	uint32_t nsocks = b->nqueues * s->o.workers;
	int err;

	b->queues = calloc(b->nqueues, sizeof(*b->queues));
	b->socks = calloc(nsocks, sizeof(*b->socks));
	b->marks = calloc(nsocks, sizeof(*b->marks));
	if (!b->queues || !b->socks || !b->marks)
		return -ENOMEM;
	for (uint32_t q = 0; q < b->nqueues; q++) {
		err = xkv_xsk_queue_open(&b->queues[q], q);
		if (err) {
			fprintf(stderr, "xkv-server: UMEM for queue %u: %s\n", q, strerror(-err));
			return err;
		}
	}
	for (; b->opened < nsocks; b->opened++) {
		uint32_t q = b->opened / s->o.workers;
		enum xkv_xsk_mode mode;
		int fd;

		err = xsk_open_retrying(&b->socks[b->opened], &b->queues[q], s->o.iface,
					s->o.workers, b->opened % s->o.workers == 0, &mode);
		if (err) {
			fprintf(stderr, "xkv-server: AF_XDP socket on %s queue %u: %s\n",
				s->o.iface, q, strerror(-err));
			return err;
		}
		if (b->opened == 0)
			b->mode = mode;
		fd = b->socks[b->opened].fd;
		/* slot rx_queue * workers + worker, which is b->opened */
		if (bpf_map_update_elem(b->xsks_fd, &b->opened, &fd, BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "xkv-server: XSKMAP slot %u: %s\n", b->opened,
				strerror(-err));
			xkv_xsk_close(&b->socks[b->opened]);
			return err;
		}
	}
	return 0;
}

static int xdp_open(struct server *s)
{
	struct xdp_backend *b = calloc(1, sizeof(*b));
	int err;

	pid_t holder = 0;

	if (!b)
		return -ENOMEM;
	s->net = b;
	b->xsks_fd = b->lock_fd = -1;
	if (!s->o.iface) {
		fprintf(stderr, "xkv-server: the XDP backend needs --iface\n");
		return -EINVAL;
	}
	/* first of all: a live server's attachment, sockets and pins are not ours to touch */
	b->lock_fd = bpfctl_server_lock(s->o.iface, &holder);
	if (b->lock_fd == -EBUSY) {
		fprintf(stderr,
			"xkv-server: xkv-server pid %d is serving %s (it holds " BPFCTL_LOCK_DIR
			"/%s.lock): stop it first; it was left alone\n",
			(int)holder, s->o.iface, s->o.iface);
		return -EBUSY;
	}
	if (b->lock_fd < 0) {
		fprintf(stderr, "xkv-server: locking %s (" BPFCTL_LOCK_DIR "/%s.lock): %s\n",
			s->o.iface, s->o.iface, strerror(-b->lock_fd));
		return b->lock_fd;
	}
	b->ifindex = if_nametoindex(s->o.iface);
	b->if_queues = bpfctl_rx_queues(s->o.iface);
	b->nqueues = b->if_queues ? b->if_queues : 1;
	if (b->nqueues > XKV_QUEUES_MAX) {
		char range[32];

		/* RSS can keep requests off the queues past the last socket: say how */
		b->nqueues = XKV_QUEUES_MAX;
		fprintf(stderr,
			"xkv-server: %s has %u rx queues, xkv serves the first %u: requests on %s "
			"would be dropped (ethtool -X %s equal %u, or ethtool -L %s combined %u)\n",
			s->o.iface, b->if_queues, b->nqueues,
			queue_range(b->nqueues, b->if_queues, range, sizeof(range)), s->o.iface,
			b->nqueues, s->o.iface, b->nqueues);
	}
	err = attach(s, b);
	if (err)
		return err;
	b->xsks_fd = bpfctl_map_open(s->o.iface, "xkv_xsks");
	if (b->xsks_fd >= 0)
		clear_stale_sockets(b);
	err = b->xsks_fd < 0 ? b->xsks_fd : map_steering_state(s, b);
	if (err) {
		fprintf(stderr, "xkv-server: opening the pinned maps of %s: %s\n", s->o.iface,
			strerror(-err));
		return err;
	}
	err = open_sockets(s, b);
	if (err)
		return err;
	printf("xkv-server: %s: %u rx queue(s), AF_XDP %s mode\n", s->o.iface, b->nqueues,
	       b->mode == XKV_XSK_ZEROCOPY ? "zero-copy" : "copy");
	return 0;
}

static struct xkv_tx *xdp_worker_tx(struct server *s, uint32_t id)
{
	struct xdp_backend *b = s->net;

	/* replies leave through the socket their request came in on; queue 0's is the default */
	return &b->socks[id].tx;
}

static _Atomic uint64_t *xdp_worker_depth(struct server *s, uint32_t id)
{
	struct xdp_backend *b = s->net;

	return (_Atomic uint64_t *)&b->qdepth[id].depth;
}

static struct xkv_ewt_slot *xdp_ewt(struct server *s)
{
	struct xdp_backend *b = s->net;

	return b->ewt;
}

/*
 * Nothing came for a while: sleep in poll(2) on every socket, the hand-offs' bell and
 * memcached's connections.
 */
static void idle_wait(struct server *s, struct xdp_backend *b, struct server_worker *w)
{
	struct pollfd pfd[XKV_QUEUES_MAX + 2];
	uint32_t n = 0;

	for (; n < b->nqueues; n++)
		pfd[n] = (struct pollfd){.fd = b->socks[n * s->o.workers + w->id].fd,
					 .events = POLLIN};
	if (xkv_worker_bell_fd(&w->proto) >= 0)
		pfd[n++] = (struct pollfd){.fd = xkv_worker_bell_fd(&w->proto), .events = POLLIN};
	if (server_mc_fd(s, w) >= 0)
		pfd[n++] = (struct pollfd){.fd = server_mc_fd(s, w), .events = POLLIN};
	xkv_worker_sleep(&w->proto);
	poll(pfd, n, IDLE_SLEEP_MS);
	xkv_worker_wake(&w->proto);
}

/*
 * Frames the kernel dropped were counted on the worker's queue depth by XDP and never
 * reach it: taken off, or steering would see a busy worker for good. Their EWT holds
 * may be lost too: the worker's holds heal (engine/holds.h).
 */
static void drops_forget(struct server *s, struct xdp_backend *b, struct server_worker *w)
{
	_Atomic uint64_t *depth = (_Atomic uint64_t *)&b->qdepth[w->id].depth;
	uint64_t dropped = 0;

	for (uint32_t q = 0; q < b->nqueues; q++)
		dropped += xkv_xsk_kernel_drops(&b->socks[q * s->o.workers + w->id]);
	if (!dropped)
		return;
	atomic_fetch_sub_explicit(depth, dropped, memory_order_relaxed);
	xkv_worker_kernel_dropped(&w->proto);
}

static void xdp_run(struct server *s, struct server_worker *w)
{
	const struct xkv_rx rx = xkv_worker_rx(&w->proto, s->o.memcached_port);
	struct xdp_backend *b = s->net;
	uint64_t next_drops_check = 0;
	uint32_t idle = 0;

	while (!atomic_load_explicit(&s->stopping, memory_order_relaxed)) {
		uint64_t now = xkv_now_ns();
		unsigned got = 0;

		xkv_worker_tick(&w->proto, now);
		server_counters_tick(s, w, now);
		if (now >= next_drops_check) {
			next_drops_check = now + XKV_DROPS_CHECK_NS;
			drops_forget(s, b, w);
		}
		for (uint32_t q = 0; q < b->nqueues; q++) {
			struct xkv_xsk *sock = &b->socks[q * s->o.workers + w->id];

			/* the executor replies through the socket the request came on */
			xkv_worker_queue(&w->proto, q, &sock->tx);
			got += xkv_xsk_poll(sock, &rx);
		}
		got += xkv_worker_handoffs(&w->proto);
		got += server_mc_poll(s, w);
		/* nothing came: the rings ran dry, and open compaction windows close */
		xkv_worker_round_end(&w->proto, !got);
		xkv_store_quiescent();
		idle = got ? 0 : idle + 1;
		if (idle >= IDLE_POLLS)
			idle_wait(s, b, w);
	}
	xkv_worker_round_end(&w->proto, true); /* held writes are applied and answered */
	for (uint32_t q = 0; q < b->nqueues; q++)
		xkv_xsk_drain(&b->socks[q * s->o.workers + w->id]);
}

static void xdp_mark_rings(struct server *s)
{
	struct xdp_backend *b = s->net;

	for (uint32_t i = 0; i < b->opened; i++)
		atomic_store_explicit(&b->marks[i], xkv_xsk_rx_filled(&b->socks[i]),
				      memory_order_relaxed);
}

static bool xdp_rings_read(void *worker)
{
	struct server_worker *w = worker;
	struct server *s = w->srv;
	struct xdp_backend *b = s->net;

	for (uint32_t q = 0; q < b->nqueues; q++) {
		uint32_t i = q * s->o.workers + w->id;

		if (!xkv_xsk_rx_read_to(&b->socks[i], atomic_load_explicit(&b->marks[i],
									    memory_order_relaxed)))
			return false;
	}
	return true;
}

static int xdp_map_open(struct server *s, const char *name)
{
	return bpfctl_map_open(s->o.iface, name);
}

static void xdp_worker_sockets(struct server *s, uint32_t id, struct xkv_worker_counters *c)
{
	struct xdp_backend *b = s->net;

	c->nqueues = b->nqueues;
	for (uint32_t q = 0; q < b->nqueues; q++)
		if (q * s->o.workers + id < b->opened)
			xkv_xsk_add_counters(&b->socks[q * s->o.workers + id], &c->queue[q]);
}

/* What is the queues' and the program's, not a worker's: frames and steering drops. */
static void xdp_print_stats(struct server *s)
{
	struct xdp_backend *b = s->net;
	struct bpfctl_stats st;
	struct xkv_xsk *socks[XKV_WORKERS_MAX];

	for (uint32_t q = 0; q < b->nqueues; q++) {
		struct xkv_xsk_frames f;

		for (uint32_t w = 0; w < s->o.workers; w++)
			socks[w] = &b->socks[q * s->o.workers + w];
		xkv_xsk_queue_frames(&b->queues[q], socks, s->o.workers, &f);
		printf("queue %u frames_total: %lu\nqueue %u frames_idle: %lu\n"
		       "queue %u frames_in_fill: %lu\nqueue %u frames_in_tx: %lu\n"
		       "queue %u frames_unaccounted: %ld\n",
		       q, f.total, q, f.idle, q, f.in_fill, q, f.in_tx, q, f.unaccounted);
	}
	if (bpfctl_stats(s->o.iface, &st) == 0) {
		printf("xdp passed: %llu\n", (unsigned long long)st.slots[XKV_STAT_PASSED]);
		for (uint32_t r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
			printf("steering dropped %s: %llu\n", xkv_reason_name(r),
			       (unsigned long long)st.slots[r]);
	}
}

/*
 * A socket per queue and worker is bound at start, each on a UMEM of its queue, and the
 * workers poll that fixed set: a queue added later would have none, and XDP would drop
 * its requests as no_socket. Any change stops the server, to be restarted: a shrink too
 * (the kernel refuses one while our sockets are bound, so the interface was remade).
 */
#define RESTART_HINT "restart xkv-server (it binds a socket per queue and worker at start)"

static bool xdp_changed(struct server *s)
{
	struct xdp_backend *b = s->net;
	unsigned int ifindex = if_nametoindex(s->o.iface);
	char range[32];
	uint32_t n;

	if (ifindex != b->ifindex) {
		fprintf(stderr,
			"xkv-server: %s %s: its XDP program and AF_XDP sockets went with it; "
			"restart xkv-server\n",
			s->o.iface, ifindex ? "was removed and made again" : "is gone");
		return true;
	}
	n = bpfctl_rx_queues(s->o.iface);
	if (!n || !b->if_queues || n == b->if_queues)
		return false;
	if (n > b->if_queues)
		fprintf(stderr,
			"xkv-server: %s now has %u rx queues, it had %u: requests on %s would be "
			"dropped; " RESTART_HINT "\n",
			s->o.iface, n, b->if_queues,
			queue_range(b->nqueues, n, range, sizeof(range)));
	else if (n < b->nqueues)
		fprintf(stderr,
			"xkv-server: %s now has %u rx queues, it had %u: its sockets on %s listen "
			"on nothing; " RESTART_HINT "\n",
			s->o.iface, n, b->if_queues,
			queue_range(n, b->nqueues, range, sizeof(range)));
	else
		fprintf(stderr,
			"xkv-server: %s now has %u rx queues, it had %u; " RESTART_HINT "\n",
			s->o.iface, n, b->if_queues);
	return true;
}

/* From here XDP drops and counts (no_socket) what it would have steered to us. */
static void xdp_unsteer(struct server *s)
{
	struct xdp_backend *b = s->net;

	for (uint32_t i = 0; b && b->xsks_fd >= 0 && i < b->opened; i++)
		bpf_map_delete_elem(b->xsks_fd, &i);
}

static void xdp_close(struct server *s)
{
	struct xdp_backend *b = s->net;

	if (!b)
		return;
	xdp_unsteer(s);
	for (uint32_t i = 0; i < b->opened; i++)
		xkv_xsk_close(&b->socks[i]);
	for (uint32_t q = 0; b->queues && q < b->nqueues; q++)
		if (b->queues[q].umem)
			xkv_xsk_queue_close(&b->queues[q]);
	if (b->qdepth)
		munmap(b->qdepth, b->qdepth_len);
	if (b->ewt)
		munmap(b->ewt, b->ewt_len);
	if (b->xsks_fd >= 0)
		close(b->xsks_fd);
	if (b->attached_here && s->o.iface)
		bpfctl_detach(s->o.iface, false);
	if (b->lock_fd >= 0)
		close(b->lock_fd); /* last: the next server may take over from here */
	free(b->socks);
	free(b->marks);
	free(b->queues);
	free(b);
	s->net = NULL;
}

const struct backend xkv_backend_xdp = {
	.name = "xdp",
	.open = xdp_open,
	.worker_tx = xdp_worker_tx,
	.worker_depth = xdp_worker_depth,
	.ewt = xdp_ewt,
	.mark_rings = xdp_mark_rings,
	.rings_read = xdp_rings_read,
	.run = xdp_run,
	.unsteer = xdp_unsteer,
	.map_open = xdp_map_open,
	.worker_sockets = xdp_worker_sockets,
	.changed = xdp_changed,
	.print_stats = xdp_print_stats,
	.close = xdp_close,
};
