// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xkv/proto.h>
#include "clock.h"
#include "udp.h"

#define RX_BUF	   2048	     /* a reply is at most 32 + 1400 bytes */
#define SOCKET_BUF (8 << 20) /* a deep pipeline's replies may arrive in one burst */

struct udp_transport {
	struct transport base;
	int fd;
	const struct bench_addr *addrs; /* a list's: each datagram to its dest; NULL: connected */
	unsigned batch;
	struct mmsghdr *tx_msgs, *rx_msgs;
	struct iovec *tx_iov, *rx_iov;
	uint8_t *rx_bufs;
};

int udp_resolve(const char *server, struct sockaddr_storage *addr, socklen_t *addr_len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res;
	const char *first_colon = strchr(server, ':'), *port_at = NULL, *host = server;
	char host_buf[256], port_buf[8];
	size_t host_len = strlen(server);
	unsigned long port = XKV_DEFAULT_PORT;
	int err;

	if (server[0] == '[') { /* [V6ADDR] or [V6ADDR]:PORT */
		const char *bracket = strchr(server, ']');

		if (!bracket || (bracket[1] && bracket[1] != ':'))
			return -EINVAL;
		host = server + 1;
		host_len = (size_t)(bracket - host);
		port_at = bracket[1] ? bracket + 2 : NULL;
	} else if (first_colon && !strchr(first_colon + 1, ':')) { /* several: bare IPv6 */
		host_len = (size_t)(first_colon - server);
		port_at = first_colon + 1;
	}
	if (port_at) {
		char *end;

		errno = 0;
		port = strtoul(port_at, &end, 10);
		if (errno || end == port_at || *end || port < 1 || port > 65535)
			return -EINVAL;
	}
	if (!host_len || host_len >= sizeof(host_buf))
		return -EINVAL;
	memcpy(host_buf, host, host_len);
	host_buf[host_len] = '\0';
	snprintf(port_buf, sizeof(port_buf), "%lu", port);

	err = getaddrinfo(host_buf, port_buf, &hints, &res);
	if (err)
		return err == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int udp_send(struct transport *t, const struct bench_dgram *d, unsigned n)
{
	struct udp_transport *u = (struct udp_transport *)t;
	int sent;

	if (n > u->batch)
		n = u->batch;
	for (unsigned i = 0; i < n; i++) {
		u->tx_iov[i] = (struct iovec){.iov_base = d[i].data, .iov_len = d[i].len};
		if (u->addrs) {
			u->tx_msgs[i].msg_hdr.msg_name = (void *)&u->addrs[d[i].dest].addr;
			u->tx_msgs[i].msg_hdr.msg_namelen = u->addrs[d[i].dest].len;
		}
	}
	sent = sendmmsg(u->fd, u->tx_msgs, n, MSG_DONTWAIT);
	if (sent < 0)
		return errno == EAGAIN || errno == ENOBUFS || errno == EINTR ? 0 : -errno;
	return sent;
}

static int udp_recv(struct transport *t, struct bench_dgram *d, unsigned n, uint64_t timeout_ns)
{
	struct udp_transport *u = (struct udp_transport *)t;
	struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
	int got;

	if (n > u->batch)
		n = u->batch;
	got = recvmmsg(u->fd, u->rx_msgs, n, MSG_DONTWAIT, NULL);
	if (got < 0 && errno == EAGAIN && timeout_ns > 0) {
		struct timespec ts = bench_timespec(timeout_ns);

		if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
			return -errno;
		got = recvmmsg(u->fd, u->rx_msgs, n, MSG_DONTWAIT, NULL);
	}
	if (got < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	for (int i = 0; i < got; i++) {
		const struct mmsghdr *m = &u->rx_msgs[i];

		d[i].data = u->rx_iov[i].iov_base;
		d[i].len = m->msg_hdr.msg_flags & MSG_TRUNC ? 0 : m->msg_len;
	}
	return got;
}

static void udp_close(struct transport *t)
{
	struct udp_transport *u = (struct udp_transport *)t;

	if (u->fd >= 0)
		close(u->fd);
	free(u->tx_msgs);
	free(u->rx_msgs);
	free(u->tx_iov);
	free(u->rx_iov);
	free(u->rx_bufs);
	free(u);
}

static const struct transport_ops udp_ops = {
	.send = udp_send,
	.recv = udp_recv,
	.close = udp_close,
};

int udp_transport_open(const struct bench_pool *pool, unsigned batch, struct transport **out)
{
	const struct sockaddr_storage *addr = &pool->addrs[0].addr;
	struct udp_transport *u;
	int rcvbuf = SOCKET_BUF, err;

	if (!batch || batch > UDP_BATCH_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->base.ops = &udp_ops;
	u->batch = batch;
	u->fd = -1;
	u->tx_msgs = calloc(batch, sizeof(*u->tx_msgs));
	u->rx_msgs = calloc(batch, sizeof(*u->rx_msgs));
	u->tx_iov = calloc(batch, sizeof(*u->tx_iov));
	u->rx_iov = calloc(batch, sizeof(*u->rx_iov));
	u->rx_bufs = malloc((size_t)batch * RX_BUF);
	if (!u->tx_msgs || !u->rx_msgs || !u->tx_iov || !u->rx_iov || !u->rx_bufs) {
		err = -ENOMEM;
		goto out_close;
	}
	/* the headers point at fixed iovecs; a call only rewrites what they point to */
	for (unsigned i = 0; i < batch; i++) {
		u->rx_iov[i] = (struct iovec){.iov_base = u->rx_bufs + (size_t)i * RX_BUF,
					      .iov_len = RX_BUF};
		u->tx_msgs[i].msg_hdr = (struct msghdr){.msg_iov = &u->tx_iov[i], .msg_iovlen = 1};
		u->rx_msgs[i].msg_hdr = (struct msghdr){.msg_iov = &u->rx_iov[i], .msg_iovlen = 1};
	}

	u->fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		err = -errno;
		goto out_close;
	}
	/* FORCE passes net.core.rmem_max, for root only; otherwise take what is allowed */
	if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* one server: connected, so that its refusals come back as errors */
	if (pool->n > 1)
		u->addrs = pool->addrs;
	else if (connect(u->fd, (const struct sockaddr *)addr, pool->addrs[0].len)) {
		err = -errno;
		goto out_close;
	}
	*out = &u->base;
	return 0;

out_close:
	udp_close(&u->base);
	return err;
}
