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

#include "proto/peer.h"

/* What a transport hands the UDP payloads of each batch it receives to. */
struct xkv_rx {
	/*
	 * Every datagram of a batch before any is handled, or NULL: the engine starts
	 * loading what each will touch, so that the batch's cache misses overlap.
	 */
	void (*look_ahead)(void *ctx, const void *data, size_t len);
	/* Then each datagram in the same order, with who sent it. */
	void (*datagram)(void *ctx, const struct xkv_peer *peer, const void *data, size_t len);
	/*
	 * memcached over UDP: datagrams sent to mc_port (host order; 0: none) go to these
	 * two instead, since a memcached frame cannot be told from an xkv header by its
	 * bytes. Only the AF_XDP transport looks at it.
	 */
	void (*mc_look_ahead)(void *ctx, const void *data, size_t len);
	void (*mc_datagram)(void *ctx, const struct xkv_peer *peer, const void *data, size_t len);
	uint16_t mc_port;
	void *ctx;
};

/*
 * The way back to a request's sender, as the transport that received it needs it
 * (for AF_XDP: addresses, ports, VLAN): kept so that another worker can answer it.
 */
struct xkv_reply_route {
	_Alignas(8) unsigned char bytes[64];
};

/* A transport's reply path, one per worker. */
struct xkv_tx {
	/* A buffer for one reply's UDP payload, *cap bytes (at least a header), or NULL. */
	void *(*reserve)(struct xkv_tx *tx, size_t *cap);
	/* Sends len bytes of the buffer reserve returned to peer. */
	void (*send)(struct xkv_tx *tx, const struct xkv_peer *peer, void *buf, size_t len);
	/* Gives back a buffer reserve returned, unsent. */
	void (*release)(struct xkv_tx *tx, void *buf);
	/* The route of the request being handled, and sending along a saved one from now on. */
	void (*route_save)(const struct xkv_tx *tx, struct xkv_reply_route *route);
	void (*route_use)(struct xkv_tx *tx, const struct xkv_reply_route *route);
};

#endif /* XKV_TRANSPORT_H */
