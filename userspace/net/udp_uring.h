/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend's transport: one kernel UDP socket per worker, all bound to
 * the server port with SO_REUSEPORT, requests received and replies sent through
 * io_uring (one ring for each direction, so waiting for a free reply buffer never
 * consumes a request). For machines and interfaces without XDP, loopback included.
 *
 * Few receives stay posted: io_uring arms a poll per receive, and every datagram
 * wakes them all. Measured on loopback, one request in flight: 256 posted gave a
 * 100 us round trip, 4 gave 16 us (a multishot receive over provided buffers: 64 us).
 */
#ifndef XKV_UDP_URING_H
#define XKV_UDP_URING_H

#include <liburing.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <xkv/stats.h>

#include "proto/peer.h"
#include "proto/transport.h"

#define XKV_URING_RX_DEPTH 4 /* receives kept posted: see above */
#define XKV_URING_TX_DEPTH 1024 /* reply buffers; a 1 MiB reply takes ~720 */
#define XKV_URING_RX_BUF   2048 /* larger datagrams are truncated and dropped */
#define XKV_URING_TX_BUF   XKV_DGRAM_MAX /* a reply's payload */
#define XKV_URING_SOCKET_BUF (8 << 20) /* receive buffer: a 1 MiB value is ~720 datagrams */

struct xkv_uring_slot {
	struct msghdr msg;
	struct iovec iov;
	struct sockaddr_in6 addr;
	/* a receive's SCM_TIMESTAMPNS: when the kernel took the datagram in */
	_Alignas(struct cmsghdr) uint8_t control[CMSG_SPACE(sizeof(struct timespec))];
};

struct xkv_uring {
	struct xkv_tx tx; /* the executor's reply path; first, so the two convert */
	int fd;
	int raw_fd; /* requests sent on as from their sender (xkv_tx.forward); -1: none */
	struct io_uring rx_ring, tx_ring;
	uint8_t *rx_bufs, *tx_bufs;
	struct xkv_uring_slot rx[XKV_URING_RX_DEPTH], txs[XKV_URING_TX_DEPTH];
	struct xkv_origin from[XKV_URING_RX_DEPTH]; /* the batch being handled */
	struct xkv_dgram batch[XKV_URING_RX_DEPTH];
	uint32_t tx_free[XKV_URING_TX_DEPTH]; /* indices of idle reply buffers */
	uint32_t ntx_free;
	uint32_t tx_unsubmitted;
	uint64_t rx_truncated; /* datagrams over XKV_URING_RX_BUF */
	uint64_t tx_errors;    /* sends the kernel failed */
	uint64_t rx_dropped;   /* the kernel's drops on the socket: a full receive buffer */
};

/*
 * Opens the socket (IPv6, dual-stack, SO_REUSEPORT) on port, joins the group of
 * sockets already bound there. The first socket of the group brings the
 * SK_REUSEPORT program steer_prog_fd (-1 for the others). Returns 0 or -errno.
 */
int xkv_uring_open(struct xkv_uring *u, uint16_t port, int steer_prog_fd);
void xkv_uring_close(struct xkv_uring *u);

/*
 * Datagrams the kernel dropped on the socket since the last call (a full receive
 * buffer), after steering chose it: requests the SK_REUSEPORT program counted on the
 * socket's queue depth that no worker will see. Counted in rx_dropped too.
 */
uint64_t xkv_uring_kernel_drops(struct xkv_uring *u);

#define XKV_URING_WAIT_FDS 2 /* fds xkv_uring_wait watches besides the socket */

/*
 * Submits posted work and waits up to timeout_ms for a request, or for one of the
 * nfds fds (at most XKV_URING_WAIT_FDS; -1 entries ignored) to be readable.
 * Returns 0 or -errno.
 */
int xkv_uring_wait(struct xkv_uring *u, const int *fds, unsigned nfds, int timeout_ms);

/* Adds the socket's counters to c. */
void xkv_uring_add_counters(const struct xkv_uring *u, struct xkv_socket_counters *c);

/*
 * Hands the requests received to rx as one batch, then posts their receives again and
 * sends the replies it queued; returns how many completions it took.
 */
unsigned xkv_uring_drain(struct xkv_uring *u, const struct xkv_rx *rx);

#endif /* XKV_UDP_URING_H */
