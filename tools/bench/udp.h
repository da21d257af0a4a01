/* SPDX-License-Identifier: MIT */
/*
 * The kernel UDP transport: one socket, sendmmsg and recvmmsg; connected to its one
 * server, or sending each datagram to its own of a list.
 */
#ifndef XKV_BENCH_UDP_H
#define XKV_BENCH_UDP_H

#include <sys/socket.h>

#include "pool.h"
#include "transport.h"

#define UDP_BATCH_MAX 1024 /* UIO_MAXIOV: the most datagrams one sendmmsg takes */

/*
 * HOST, HOST:PORT, [V6ADDR]:PORT or a bare IPv6 address; the port defaults to 7411.
 * Returns 0, -EINVAL (not of that form) or -EHOSTUNREACH (the host does not resolve).
 */
int udp_resolve(const char *server, struct sockaddr_storage *addr, socklen_t *addr_len);

/*
 * Opens a socket to pool's servers (all of one address family) that moves up to
 * `batch` datagrams per call (at most UDP_BATCH_MAX). Returns 0 and *out, or -errno.
 */
int udp_transport_open(const struct bench_pool *pool, unsigned batch, struct transport **out);

#endif /* XKV_BENCH_UDP_H */
