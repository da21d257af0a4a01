/* SPDX-License-Identifier: MIT */
/*
 * The contract between a transport (net/: AF_XDP frames, io_uring UDP sockets) and
 * the layer that executes requests (engine/). It lives here, below both, so that the
 * network layer implements it without knowing who calls it: a transport hands every
 * datagram it receives to an xkv_datagram_fn, and offers a struct xkv_tx to send
 * replies through.
 */
#ifndef XKV_TRANSPORT_H
#define XKV_TRANSPORT_H

#include <stddef.h>

#include "proto/peer.h"

/* A transport hands each datagram's UDP payload, and who sent it, to one of these. */
typedef void (*xkv_datagram_fn)(void *ctx, const struct xkv_peer *peer, const void *data,
				size_t len);

/* A transport's reply path, one per worker. */
struct xkv_tx {
	/* A buffer for one reply's UDP payload, *cap bytes (at least a header), or NULL. */
	void *(*reserve)(struct xkv_tx *tx, size_t *cap);
	/* Sends len bytes of the buffer reserve returned to peer. */
	void (*send)(struct xkv_tx *tx, const struct xkv_peer *peer, void *buf, size_t len);
};

#endif /* XKV_TRANSPORT_H */
