// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <linux/sock_diag.h>

#include "net/udp_uring.h"
#include "util/clock.h"

static void *tx_reserve(const struct xkv_origin *to, size_t *cap);
static void tx_send(const struct xkv_origin *to, void *buf, size_t len);
static void tx_release(const struct xkv_origin *to, void *buf);
static int tx_forward(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
		      uint16_t port);

static void slot_init(struct xkv_uring_slot *s, uint8_t *buf, size_t len)
{
	s->iov = (struct iovec){.iov_base = buf, .iov_len = len};
	s->msg = (struct msghdr){
		.msg_name = &s->addr,
		.msg_namelen = sizeof(s->addr),
		.msg_iov = &s->iov,
		.msg_iovlen = 1,
	};
}

static void rx_post(struct xkv_uring *u, uint32_t i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->rx_ring);

	/* the ring has a slot per receive, so there is always room */
	slot_init(&u->rx[i], u->rx_bufs + (size_t)i * XKV_URING_RX_BUF, XKV_URING_RX_BUF);
	u->rx[i].msg.msg_control = u->rx[i].control;
	u->rx[i].msg.msg_controllen = sizeof(u->rx[i].control);
	/* MSG_TRUNC: the result is the datagram's real length, so truncation shows */
	io_uring_prep_recvmsg(sqe, u->fd, &u->rx[i].msg, MSG_TRUNC);
	io_uring_sqe_set_data64(sqe, i);
}

static int socket_open(uint16_t port, int steer_prog_fd)
{
	struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	int fd, one = 1, zero = 0, rcvbuf = XKV_URING_SOCKET_BUF;

	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* room for a whole 1 MiB value in pieces; FORCE passes rmem_max when root */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* the steering program goes on before bind: no datagram may see the socket without it */
	/* each datagram's receive time (CLOCK_REALTIME), for latency inside the server */
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    (steer_prog_fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF,
					      &steer_prog_fd, sizeof(steer_prog_fd))) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int xkv_uring_open(struct xkv_uring *u, uint16_t port, int steer_prog_fd)
{
	int err;

	memset(u, 0, sizeof(*u));
	u->tx = (struct xkv_tx){
		.reserve = tx_reserve, .send = tx_send, .release = tx_release, .forward = tx_forward};
	u->fd = socket_open(port, steer_prog_fd);
	if (u->fd < 0)
		return u->fd;
	/* a datagram from another's address needs its IP header written: CAP_NET_RAW, or none */
	u->raw_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	u->rx_bufs = malloc((size_t)XKV_URING_RX_DEPTH * XKV_URING_RX_BUF);
	u->tx_bufs = malloc((size_t)XKV_URING_TX_DEPTH * XKV_URING_TX_BUF);
	if (!u->rx_bufs || !u->tx_bufs) {
		err = -ENOMEM;
		goto out_free;
	}
	err = io_uring_queue_init(XKV_URING_RX_DEPTH, &u->rx_ring, 0);
	if (err)
		goto out_free;
	err = io_uring_queue_init(XKV_URING_TX_DEPTH, &u->tx_ring, 0);
	if (err)
		goto out_exit_rx;
	for (uint32_t i = 0; i < XKV_URING_TX_DEPTH; i++)
		u->tx_free[u->ntx_free++] = i;
	for (uint32_t i = 0; i < XKV_URING_RX_DEPTH; i++)
		rx_post(u, i);
	err = io_uring_submit(&u->rx_ring);
	if (err < 0)
		goto out_exit_tx;
	return 0;

out_exit_tx:
	io_uring_queue_exit(&u->tx_ring);
out_exit_rx:
	io_uring_queue_exit(&u->rx_ring);
out_free:
	free(u->rx_bufs);
	free(u->tx_bufs);
	if (u->raw_fd >= 0)
		close(u->raw_fd);
	close(u->fd);
	return err;
}

void xkv_uring_close(struct xkv_uring *u)
{
	/* closing the rings cancels the posted receives before their buffers go */
	io_uring_queue_exit(&u->rx_ring);
	io_uring_queue_exit(&u->tx_ring);
	if (u->raw_fd >= 0)
		close(u->raw_fd);
	close(u->fd);
	free(u->rx_bufs);
	free(u->tx_bufs);
}

/* Takes back the buffers of finished sends; waits for one if wait and none are back. */
static void tx_reap(struct xkv_uring *u, bool wait)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	if (u->tx_unsubmitted) {
		io_uring_submit(&u->tx_ring);
		u->tx_unsubmitted = 0;
	}
	if (wait && io_uring_wait_cqe(&u->tx_ring, &cqe))
		return;
	io_uring_for_each_cqe(&u->tx_ring, head, cqe) {
		if (cqe->res < 0)
			u->tx_errors++;
		u->tx_free[u->ntx_free++] = (uint32_t)io_uring_cqe_get_data64(cqe);
		n++;
	}
	io_uring_cq_advance(&u->tx_ring, n);
}

static void *tx_reserve(const struct xkv_origin *to, size_t *cap)
{
	struct xkv_uring *u = (struct xkv_uring *)to->tx;

	if (!u->ntx_free)
		tx_reap(u, true);
	if (!u->ntx_free)
		return NULL;
	*cap = XKV_URING_TX_BUF;
	return u->tx_bufs + (size_t)u->tx_free[--u->ntx_free] * XKV_URING_TX_BUF;
}

static void tx_release(const struct xkv_origin *to, void *buf)
{
	struct xkv_uring *u = (struct xkv_uring *)to->tx;

	u->tx_free[u->ntx_free++] = (uint32_t)(((uint8_t *)buf - u->tx_bufs) / XKV_URING_TX_BUF);
}

/* A reply is addressed by its peer alone: the origin's route holds nothing here. */
static void tx_send(const struct xkv_origin *to, void *buf, size_t len)
{
	struct xkv_tx *tx = to->tx;
	const struct xkv_peer *peer = &to->peer;
	struct xkv_uring *u = (struct xkv_uring *)tx;
	uint32_t i = (uint32_t)(((uint8_t *)buf - u->tx_bufs) / XKV_URING_TX_BUF);
	struct xkv_uring_slot *s = &u->txs[i];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->tx_ring);

	if (!sqe) {
		io_uring_submit(&u->tx_ring);
		u->tx_unsubmitted = 0;
		sqe = io_uring_get_sqe(&u->tx_ring);
	}
	slot_init(s, buf, len);
	s->addr = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = peer->port};
	memcpy(&s->addr.sin6_addr, peer->addr, sizeof(peer->addr));
	io_uring_prep_sendmsg(sqe, u->fd, &s->msg, 0);
	io_uring_sqe_set_data64(sqe, i);
	u->tx_unsubmitted++;
}

/*
 * Sent at once, not through the ring: a request goes on rarely (a stray sent home),
 * and its IP header, written here, names its sender as the source.
 */
static int tx_forward(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
		      uint16_t port)
{
	static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
	struct xkv_uring *u = (struct xkv_uring *)to->tx;
	struct {
		struct iphdr ip;
		struct udphdr udp;
	} __attribute__((packed)) hdr = {
		.ip = {.version = 4,
		       .ihl = 5,
		       .tot_len = htons((uint16_t)(sizeof(hdr) + len)),
		       .frag_off = htons(IP_DF),
		       .ttl = 64,
		       .protocol = IPPROTO_UDP,
		       .daddr = addr},
		.udp = {.source = to->peer.port,
			.dest = port,
			.len = htons((uint16_t)(sizeof(struct udphdr) + len))},
	};
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_addr.s_addr = addr};
	struct iovec iov[2] = {{.iov_base = &hdr, .iov_len = sizeof(hdr)},
			       {.iov_base = buf, .iov_len = len}};
	struct msghdr msg = {.msg_name = &dst, .msg_namelen = sizeof(dst), .msg_iov = iov,
			     .msg_iovlen = 2};
	int err = 0;

	if (memcmp(to->peer.addr, v4_mapped, sizeof(v4_mapped))) {
		err = -EAFNOSUPPORT;
	} else if (u->raw_fd < 0) {
		err = -EPERM;
	} else {
		memcpy(&hdr.ip.saddr, to->peer.addr + 12, 4);
		/* the kernel sums the IP header; UDP over IPv4 may go without */
		if (sendmsg(u->raw_fd, &msg, MSG_DONTWAIT) < 0)
			err = -errno;
	}
	tx_release(to, buf);
	return err;
}

/*
 * The sender, and when the kernel received the datagram on CLOCK_MONOTONIC (the
 * stamp is CLOCK_REALTIME, realtime_ahead ahead of it); 0 without a stamp.
 */
static void peer_from(struct xkv_peer *peer, const struct xkv_uring_slot *s,
		      uint64_t realtime_ahead)
{
	struct cmsghdr *c;

	memset(peer, 0, sizeof(*peer));
	memcpy(peer->addr, &s->addr.sin6_addr, sizeof(peer->addr));
	peer->port = s->addr.sin6_port;
	for (c = CMSG_FIRSTHDR(&s->msg); c; c = CMSG_NXTHDR((struct msghdr *)&s->msg, c)) {
		struct timespec ts;
		uint64_t real;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		real = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		if (real > realtime_ahead)
			peer->arrival_ns = real - realtime_ahead;
	}
}

int xkv_uring_wait(struct xkv_uring *u, const int *fds, unsigned nfds, int timeout_ms)
{
	struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
				       .tv_nsec = (timeout_ms % 1000) * 1000000L};
	struct pollfd pfd[1 + XKV_URING_WAIT_FDS] = {{.fd = u->rx_ring.ring_fd, .events = POLLIN}};
	struct io_uring_cqe *cqe;
	unsigned n = 1;
	int err;

	for (unsigned i = 0; i < nfds && i < XKV_URING_WAIT_FDS; i++)
		if (fds[i] >= 0)
			pfd[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	if (n == 1) {
		err = io_uring_submit_and_wait_timeout(&u->rx_ring, &cqe, 1, &ts, NULL);
		return err < 0 && err != -ETIME && err != -EINTR ? err : 0;
	}
	/* the ring's fd is readable while it holds completions */
	err = io_uring_submit(&u->rx_ring);
	if (err < 0)
		return err;
	if (io_uring_cq_ready(&u->rx_ring))
		return 0;
	return poll(pfd, n, timeout_ms) < 0 && errno != EINTR ? -errno : 0;
}

uint64_t xkv_uring_kernel_drops(struct xkv_uring *u)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);
	uint64_t n;

	if (getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) || len < sizeof(mem))
		return 0;
	n = (uint32_t)(mem[SK_MEMINFO_DROPS] - (uint32_t)u->rx_dropped); /* the kernel's wraps */
	u->rx_dropped += n;
	return n;
}

void xkv_uring_add_counters(const struct xkv_uring *u, struct xkv_socket_counters *c)
{
	c->uring_rx_truncated += u->rx_truncated;
	c->uring_tx_errors += u->tx_errors;
	c->uring_rx_dropped += u->rx_dropped;
}

unsigned xkv_uring_drain(struct xkv_uring *u, const struct xkv_rx *rx)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, nd = 0;
	uint32_t done[XKV_URING_RX_DEPTH];
	uint64_t realtime_ahead = 0;

	if (io_uring_cq_ready(&u->rx_ring))
		realtime_ahead = xkv_clock_ns(CLOCK_REALTIME) - xkv_clock_ns(CLOCK_MONOTONIC);
	/* one completion a posted receive: the batch is at most their number */
	io_uring_for_each_cqe(&u->rx_ring, head, cqe) {
		uint32_t i = (uint32_t)io_uring_cqe_get_data64(cqe);
		struct xkv_uring_slot *s = &u->rx[i];

		if (n == XKV_URING_RX_DEPTH)
			break;
		done[n++] = i;
		if (cqe->res > XKV_URING_RX_BUF) {
			u->rx_truncated++;
		} else if (cqe->res >= 0) {
			/* one socket, one queue, no route: the sender is the way back */
			u->from[nd] = (struct xkv_origin){.tx = &u->tx};
			peer_from(&u->from[nd].peer, s, realtime_ahead);
			u->batch[nd] = (struct xkv_dgram){.from = &u->from[nd],
							  .data = s->iov.iov_base,
							  .len = (uint32_t)cqe->res};
			nd++;
		}
	}
	if (nd)
		rx->batch(rx->ctx, u->batch, nd);
	for (unsigned k = 0; k < n; k++)
		rx_post(u, done[k]);
	io_uring_cq_advance(&u->rx_ring, n);
	/* one submit for every reply this batch queued, then take back finished buffers */
	tx_reap(u, false);
	return n;
}
