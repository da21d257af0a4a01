/* SPDX-License-Identifier: MIT */
/*
 * The contract between a transport (net/: AF_XDP frames, io_uring UDP sockets) and
 * the layer that executes requests (engine/). It lives here, below both, so that the
 * network layer implements it without knowing who calls it: a transport hands every
 * batch it receives to a struct xkv_rx, and offers a struct xkv_tx to send replies
 * through.
 */
#ifndef XKV_TRANSPORT_H
#define XKV_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/peer.h"

struct xkv_tx;

/*
 * The way back to a request's sender, as the transport that received it needs it
 * (for AF_XDP: addresses, ports, VLAN, the reply header's length): opaque above it.
 */
struct xkv_reply_route {
	_Alignas(8) unsigned char bytes[64];
};

/*
 * Where a request came from, and so how its replies go back: the socket that
 * received it, which sends them; the rx queue it came on; its sender; the transport's
 * route. It comes with every datagram, whatever keeps a request keeps its origin (a
 * compaction window, a hand-off to another worker, which answers through its own
 * socket of the same queue), and every reply is sent to one.
 */
struct xkv_origin {
	struct xkv_tx *tx;
	uint32_t queue;
	struct xkv_peer peer;
	struct xkv_reply_route route;
};

/* One datagram of a batch: its UDP payload, and where it came from. */
struct xkv_dgram {
	const struct xkv_origin *from;
	const void *data;
	uint32_t len;
	/*
	 * Sent to struct xkv_rx's mc_port: memcached over UDP, whose frame cannot be told
	 * from an xkv header by its bytes. Only the AF_XDP transport sets it.
	 */
	bool mc;
};

/* What a transport hands each batch it receives to. */
struct xkv_rx {
	/*
	 * The batch, whole and in arrival order: the receiver may look at every datagram
	 * before it handles any (its cache misses overlap) and handle them in an order of
	 * its own. The datagrams and their origins stay where they are until it returns.
	 */
	void (*batch)(void *ctx, const struct xkv_dgram *d, unsigned n);
	uint16_t mc_port; /* memcached over UDP's port, host order; 0: none */
	void *ctx;
};

/* A transport's reply path, one per socket; to->tx is the one that sends to `to`. */
struct xkv_tx {
	/* A buffer for one reply's UDP payload to `to`, *cap bytes (at least a header), or NULL. */
	void *(*reserve)(const struct xkv_origin *to, size_t *cap);
	/* Sends len bytes of the buffer reserve returned for `to`. */
	void (*send)(const struct xkv_origin *to, void *buf, size_t len);
	/* Gives back a buffer reserve returned for `to`, unsent. */
	void (*release)(const struct xkv_origin *to, void *buf);
	/*
	 * Sends len bytes of the buffer reserve returned for `to` on to addr:port (IPv4,
	 * network order) as from `to`'s sender, who then hears from there straight: a
	 * request sent to the server that must answer it (engine/replicas.h). 0, or a
	 * negative errno, the buffer given back: -EAFNOSUPPORT for a sender not on IPv4.
	 */
	int (*forward)(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
		       uint16_t port);
};

#endif /* XKV_TRANSPORT_H */
