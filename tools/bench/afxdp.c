// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afxdp.h"
#include "bench_client.skel.h"
#include "clock.h"
#include "net/xsk.h"

#define PROG_NAME     "bench_client" /* how a stale attachment of ours is recognised */
#define DISCARD_PORT  9		     /* the neighbour probe goes here: nobody answers */
#define NEIGH_POLL_MS 100
#define BIND_TRIES    50	     /* a closed socket holds its queue for a grace period */
#define BIND_RETRY_US 20000
#define STASH	      512  /* replies received, kept until the loop has read them */
#define STASH_BYTES   1536 /* a reply is at most 32 + 1400 bytes */

_Static_assert(AFXDP_THREADS_MAX == XKV_XSK_FRAMES / 4 / XKV_XSK_BATCH,
	       "xkv_xsk_open gives caches a quarter of the frames: a batch each");
_Static_assert(STASH >= 2 * XKV_XSK_BATCH, "a receive takes a whole batch");

struct afxdp_client {
	char ifname[IF_NAMESIZE];
	unsigned ifindex;
	uint32_t queue, nqueues;	    /* the first rx queue, and how many from it */
	struct afxdp_endpoint self, server; /* self.port unused: each thread has its own */
	struct bench_client_bpf *skel;
	int xsks_fd, queues_fd;
	bool attached;
	struct xkv_xsk_queue *umems; /* [nqueues]: the queue's sockets share it */
	uint32_t umems_open;
	unsigned sockets; /* in all, spread over the queues */
	unsigned nsocks;  /* opened so far */
	struct afxdp_transport *socks[AFXDP_THREADS_MAX]; /* [nsocks], NULL once closed */
	enum xkv_xsk_mode mode;
};

struct afxdp_transport {
	struct transport base;
	struct afxdp_client *c;
	struct xkv_xsk sock; /* sock.q is the UMEM of its queue */
	bool sock_open;
	int port_fd;	       /* a kernel UDP socket that keeps our port from anyone else */
	uint32_t port;	       /* host order: the XSKMAP key */
	struct xkv_origin server; /* requests retrace the route of the server's replies */
	uint8_t *stash; /* STASH replies of STASH_BYTES */
	uint32_t *stash_len;
	/* [out, head): handed out by the last recv; [head, tail): received, not yet handed out */
	uint32_t out, head, tail;
};

void afxdp_reply_route(struct xkv_route *r, const struct afxdp_endpoint *client,
		       const struct afxdp_endpoint *server)
{
	*r = (struct xkv_route){
		.ip_version = 4,
		.port_src = htons(server->port),
		.port_dst = htons(client->port),
	};
	memcpy(r->eth_src, server->mac, 6);
	memcpy(r->eth_dst, client->mac, 6);
	memcpy(r->ip_src, &server->ip, 4);
	memcpy(r->ip_dst, &client->ip, 4);
}

int afxdp_arp_lookup(FILE *table, const char *ifname, struct in_addr ip, uint8_t mac[6])
{
	char line[256], addr[64], hw[64], mask[64], dev[IF_NAMESIZE];
	unsigned type, flags;

	/* IP address, HW type, Flags, HW address, Mask, Device; the header line fails the scan */
	while (fgets(line, sizeof(line), table)) {
		struct in_addr a;

		if (sscanf(line, "%63s %x %x %63s %63s %15s", addr, &type, &flags, hw, mask,
			   dev) != 6 ||
		    strcmp(dev, ifname) || inet_pton(AF_INET, addr, &a) != 1 ||
		    a.s_addr != ip.s_addr || !(flags & ATF_COM))
			continue;
		if (sscanf(hw, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
			   &mac[4], &mac[5]) == 6)
			return 0;
	}
	return -ENOENT;
}

/*
 * Our address and MAC on the interface, and the server's MAC. The probe socket is
 * bound to the interface and connected to the server's discard port: its local
 * address is the one the kernel would use, and an empty datagram from it makes the
 * kernel resolve the server's MAC without touching the xkv port.
 */
static int resolve(struct afxdp_client *c, char *why, size_t why_len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = c->server.ip,
				 .sin_port = htons(DISCARD_PORT)}, self;
	socklen_t self_len = sizeof(self);
	struct ifreq ifr = {0};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->ifname);
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->ifname, strlen(c->ifname)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) ||
	    getsockname(fd, (struct sockaddr *)&self, &self_len) ||
	    ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		snprintf(why, why_len, "no route to %s through %s: %s", inet_ntoa(c->server.ip),
			 c->ifname, strerror(errno));
		goto out_close;
	}
	c->self.ip = self.sin_addr;
	memcpy(c->self.mac, ifr.ifr_hwaddr.sa_data, 6);

	for (int waited = 0;; waited += NEIGH_POLL_MS) {
		FILE *arp = fopen("/proc/net/arp", "r");

		if (!arp) {
			err = -errno;
			snprintf(why, why_len, "reading /proc/net/arp: %s", strerror(errno));
			goto out_close;
		}
		err = afxdp_arp_lookup(arp, c->ifname, c->server.ip, c->server.mac);
		fclose(arp);
		if (!err || waited >= AFXDP_NEIGH_WAIT_MS)
			break;
		send(fd, "", 0, MSG_DONTWAIT);
		usleep(NEIGH_POLL_MS * 1000);
	}
	if (err) {
		err = -EHOSTUNREACH;
		snprintf(why, why_len,
			 "no neighbour entry for %s on %s after %d ms: the AF_XDP transport "
			 "needs the server on the interface's subnet",
			 inet_ntoa(c->server.ip), c->ifname, AFXDP_NEIGH_WAIT_MS);
	}
out_close:
	close(fd);
	return err;
}

/*
 * A netlink attachment outlives its process, even a SIGKILLed one: a bench_client
 * left by a killed run is replaced, any other program is left alone.
 */
static int attach(struct afxdp_client *c, char *why, size_t why_len)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	__u32 flags = XDP_FLAGS_DRV_MODE, id = 0;
	int err, old_fd = -1;

	err = bpf_xdp_query_id((int)c->ifindex, XDP_FLAGS_DRV_MODE, &id);
	if (!err && id) {
		struct bpf_prog_info info = {0};
		__u32 info_len = sizeof(info);

		old_fd = bpf_prog_get_fd_by_id(id);
		if (old_fd < 0 || bpf_obj_get_info_by_fd(old_fd, &info, &info_len) ||
		    strcmp(info.name, PROG_NAME)) {
			snprintf(why, why_len,
				 "XDP program %u (%s) is attached to %s: not ours to replace", id,
				 info.name, c->ifname);
			err = -EBUSY;
			goto out_close_old;
		}
		opts.old_prog_fd = old_fd;
		flags |= XDP_FLAGS_REPLACE;
	} else {
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	}
	err = bpf_xdp_attach((int)c->ifindex, bpf_program__fd(c->skel->progs.bench_client), flags,
			     &opts);
	if (err)
		snprintf(why, why_len, "attaching XDP to %s in native mode: %s", c->ifname,
			 strerror(-err));
	c->attached = !err;
out_close_old:
	if (old_fd >= 0)
		close(old_fd);
	return err;
}

static int load(struct afxdp_client *c, char *why, size_t why_len)
{
	struct in6_addr mapped = {0};
	int err;

	c->skel = bench_client_bpf__open();
	if (!c->skel) {
		snprintf(why, why_len, "opening the XDP program: %s", strerror(errno));
		return -errno;
	}
	mapped.s6_addr[10] = mapped.s6_addr[11] = 0xff;
	memcpy(&mapped.s6_addr[12], &c->server.ip, 4);
	memcpy(c->skel->rodata->server_addr, &mapped, sizeof(mapped));
	c->skel->rodata->server_port = htons(c->server.port);
	err = bench_client_bpf__load(c->skel);
	if (err) {
		snprintf(why, why_len, "loading the XDP program: %s", strerror(-err));
		return err;
	}
	c->xsks_fd = bpf_map__fd(c->skel->maps.bench_xsks);
	c->queues_fd = bpf_map__fd(c->skel->maps.bench_queues);
	return 0;
}

int afxdp_client_open(const char *ifname, uint32_t queue, uint32_t queues, unsigned sockets,
		      const struct sockaddr_in *server, struct afxdp_client **out, char *why,
		      size_t why_len)
{
	struct afxdp_client *c;
	int err;

	if (!queues || queues > AFXDP_QUEUES_MAX || sockets < queues ||
	    sockets > AFXDP_THREADS_MAX) {
		snprintf(why, why_len, "%u sockets on %u queues: 1..%d queues, a socket each",
			 sockets, queues, AFXDP_QUEUES_MAX);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->ifname, sizeof(c->ifname), "%s", ifname);
	c->queue = queue;
	c->nqueues = queues;
	c->sockets = sockets;
	c->server.ip = server->sin_addr;
	c->server.port = ntohs(server->sin_port);
	c->ifindex = if_nametoindex(ifname);
	if (!c->ifindex) {
		err = -errno;
		snprintf(why, why_len, "interface %s: %s", ifname, strerror(errno));
		goto out_close;
	}
	err = resolve(c, why, why_len);
	if (!err)
		err = load(c, why, why_len);
	if (!err)
		err = attach(c, why, why_len);
	if (err)
		goto out_close;
	c->umems = calloc(queues, sizeof(*c->umems));
	if (!c->umems) {
		err = -ENOMEM;
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		goto out_close;
	}
	for (; c->umems_open < queues; c->umems_open++) {
		err = xkv_xsk_queue_open(&c->umems[c->umems_open], queue + c->umems_open);
		if (err) {
			snprintf(why, why_len, "UMEM for %s queue %u: %s", ifname,
				 queue + c->umems_open, strerror(-err));
			goto out_close;
		}
	}
	*out = c;
	return 0;

out_close:
	afxdp_client_close(c);
	return err;
}

void afxdp_client_close(struct afxdp_client *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->umems_open; i++)
		xkv_xsk_queue_close(&c->umems[i]);
	free(c->umems);
	if (c->attached) {
		/* REPLACE with our fd: detaches only if the program there is still ours */
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
			    .old_prog_fd = bpf_program__fd(c->skel->progs.bench_client));

		bpf_xdp_detach((int)c->ifindex, XDP_FLAGS_DRV_MODE | XDP_FLAGS_REPLACE, &opts);
	}
	bench_client_bpf__destroy(c->skel);
	free(c);
}

void afxdp_client_info(const struct afxdp_client *c, struct afxdp_info *info)
{
	const struct bench_client_bpf__bss *bss = c->skel->bss;
	struct xdp_statistics st;

	*info = (struct afxdp_info){
		.iface = c->ifname,
		.queue = c->queue,
		.nqueues = c->nqueues,
		.mode = c->mode == XKV_XSK_ZEROCOPY ? "zero-copy" : "copy",
		.redirected = __atomic_load_n(&bss->redirected, __ATOMIC_RELAXED),
		.wrong_queue = __atomic_load_n(&bss->wrong_queue, __ATOMIC_RELAXED),
		.no_socket = __atomic_load_n(&bss->no_socket, __ATOMIC_RELAXED),
	};
	for (uint32_t i = 0; i < c->nqueues; i++)
		info->queues[i].queue = c->queue + i;
	for (unsigned i = 0; i < c->nsocks; i++) {
		const struct xkv_xsk *s = c->socks[i] ? &c->socks[i]->sock : NULL;
		struct afxdp_queue_info *q = &info->queues[i % c->nqueues];

		if (!s)
			continue;
		q->sent += s->tx_packets;
		q->received += s->rx_packets;
		if (xkv_xsk_kernel_stats(s, &st))
			continue;
		info->rx_dropped += st.rx_dropped;
		info->rx_ring_full += st.rx_ring_full;
		info->fill_empty += st.rx_fill_ring_empty_descs;
	}
}

/* xkv_xsk_poll's receiver: the frame is recycled after this returns, so the reply is copied. */
static void stash(void *ctx, const struct xkv_dgram *d, unsigned n)
{
	struct afxdp_transport *t = ctx;

	/* the XDP program lets only the server's datagrams through: their origin is known */
	for (unsigned i = 0; i < n; i++) {
		uint32_t at = t->tail++ % STASH, len = d[i].len;

		if (len > STASH_BYTES)
			len = 0; /* as struct transport_ops promises */
		memcpy(t->stash + (size_t)at * STASH_BYTES, d[i].data, len);
		t->stash_len[at] = len;
	}
}

/*
 * Receives batches while the stash has room for a whole one, then submits what send
 * queued, and kicks again while the TX ring lags (a kick may stop short of it).
 */
static void collect(struct afxdp_transport *t)
{
	const struct xkv_rx rx = {.batch = stash, .ctx = t};
	struct xkv_xsk *s = &t->sock;

	while (STASH - (t->tail - t->out) >= XKV_XSK_BATCH && xkv_xsk_poll(s, &rx) == XKV_XSK_BATCH)
		;
	xkv_xsk_flush(s);
}

static int afxdp_send(struct transport *tr, const struct bench_dgram *d, unsigned n)
{
	struct afxdp_transport *t = (struct afxdp_transport *)tr;
	struct xkv_xsk *s = &t->sock;
	unsigned i, room = xsk_prod_nb_free(&s->txr, n);

	if (n > room)
		n = room;
	for (i = 0; i < n; i++) {
		size_t cap;
		void *buf;

		if (d[i].len > XKV_DGRAM_MAX)
			return -EMSGSIZE;
		buf = s->tx.reserve(&t->server, &cap);
		if (!buf)
			break; /* no frame free even after reaping completions: later */
		memcpy(buf, d[i].data, d[i].len);
		s->tx.send(&t->server, buf, d[i].len);
	}
	collect(t);
	return (int)i;
}

static int afxdp_recv(struct transport *tr, struct bench_dgram *d, unsigned n, uint64_t timeout_ns)
{
	struct afxdp_transport *t = (struct afxdp_transport *)tr;
	unsigned i;

	t->out = t->head; /* what the last call handed out is free again */
	collect(t);
	if (t->head == t->tail && timeout_ns > 0) {
		struct pollfd pfd = {.fd = t->sock.fd, .events = POLLIN};
		struct timespec ts = bench_timespec(timeout_ns);

		if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
			return -errno;
		collect(t);
	}
	for (i = 0; i < n && t->head != t->tail; i++, t->head++) {
		uint32_t at = t->head % STASH;

		d[i] = (struct bench_dgram){.data = t->stash + (size_t)at * STASH_BYTES,
					    .len = t->stash_len[at]};
	}
	return (int)i;
}

static void afxdp_close(struct transport *tr)
{
	struct afxdp_transport *t = (struct afxdp_transport *)tr;

	if (t->sock_open) {
		for (unsigned i = 0; i < t->c->nsocks; i++)
			if (t->c->socks[i] == t)
				t->c->socks[i] = NULL;
		bpf_map_delete_elem(t->c->xsks_fd, &t->port);
		xkv_xsk_drain(&t->sock);
		xkv_xsk_close(&t->sock);
	}
	if (t->port_fd >= 0)
		close(t->port_fd);
	free(t->stash);
	free(t->stash_len);
	free(t);
}

static const struct transport_ops afxdp_ops = {
	.send = afxdp_send,
	.recv = afxdp_recv,
	.close = afxdp_close,
};

/* The kernel picks a free port and keeps it ours while port_fd is open. */
static int reserve_port(struct afxdp_transport *t)
{
	struct sockaddr_in self = {.sin_family = AF_INET, .sin_addr = t->c->self.ip};
	socklen_t len = sizeof(self);

	t->port_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (t->port_fd < 0 || bind(t->port_fd, (struct sockaddr *)&self, sizeof(self)) ||
	    getsockname(t->port_fd, (struct sockaddr *)&self, &len))
		return -errno;
	t->port = ntohs(self.sin_port);
	return 0;
}

/* The n-th socket's queue, as an index into c->umems. */
static uint32_t queue_of(const struct afxdp_client *c, unsigned n)
{
	return n % c->nqueues;
}

/* Sockets that share queue i's UMEM: thread t is on queue t % nqueues. */
static unsigned queue_sockets(const struct afxdp_client *c, uint32_t i)
{
	return c->sockets / c->nqueues + (i < c->sockets % c->nqueues);
}

static int open_socket(struct afxdp_transport *t)
{
	struct afxdp_client *c = t->c;
	uint32_t i = queue_of(c, c->nsocks);
	bool first = !c->nsocks, queue_first = c->nsocks < c->nqueues;
	enum xkv_xsk_mode mode;
	int err = -EBUSY;

	if (c->nsocks == c->sockets)
		return -ENOSPC;
	for (int tries = 0; tries < BIND_TRIES && err == -EBUSY; tries++) {
		if (tries)
			usleep(BIND_RETRY_US);
		/*
		 * zero-copy where the driver has it; only the first socket of a queue may
		 * fall back, and all must end in the first one's mode
		 */
		err = xkv_xsk_open(&t->sock, &c->umems[i], c->ifname, queue_sockets(c, i),
				   queue_first, first || c->mode == XKV_XSK_ZEROCOPY, &mode);
	}
	if (err)
		return err;
	t->sock_open = true;
	if (first)
		c->mode = mode;
	c->socks[c->nsocks++] = t;
	return mode == c->mode ? 0 : -EOPNOTSUPP;
}

int afxdp_transport_open(struct afxdp_client *c, struct transport **out, char *why,
			 size_t why_len)
{
	struct afxdp_transport *t = calloc(1, sizeof(*t));
	struct afxdp_endpoint client = c->self;
	struct xkv_route route;
	uint32_t queue;
	int err, fd;

	if (!t)
		return -ENOMEM;
	t->base.ops = &afxdp_ops;
	t->c = c;
	t->port_fd = -1;
	t->stash = malloc((size_t)STASH * STASH_BYTES);
	t->stash_len = calloc(STASH, sizeof(*t->stash_len));
	if (!t->stash || !t->stash_len) {
		err = -ENOMEM;
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		goto out_close;
	}
	err = reserve_port(t);
	if (err) {
		snprintf(why, why_len, "reserving a UDP port: %s", strerror(-err));
		goto out_close;
	}
	queue = c->queue + queue_of(c, c->nsocks);
	err = open_socket(t);
	if (err) {
		snprintf(why, why_len, "AF_XDP socket on %s queue %u: %s", c->ifname, queue,
			 err == -EOPNOTSUPP ? "bound in copy mode, the first one in zero-copy"
					    : strerror(-err));
		goto out_close;
	}
	fd = t->sock.fd;
	/* the queue first: the program redirects only once the socket is in the XSKMAP */
	if (bpf_map_update_elem(c->queues_fd, &t->port, &queue, BPF_ANY) ||
	    bpf_map_update_elem(c->xsks_fd, &t->port, &fd, BPF_ANY)) {
		err = -errno;
		snprintf(why, why_len, "the XDP program's maps, port %u: %s", t->port,
			 strerror(errno));
		goto out_close;
	}
	client.port = (uint16_t)t->port;
	afxdp_reply_route(&route, &client, &c->server);
	xkv_xsk_origin(&t->sock, &route, &t->server);
	*out = &t->base;
	return 0;

out_close:
	afxdp_close(&t->base);
	return err;
}
