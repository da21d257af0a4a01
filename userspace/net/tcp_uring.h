/* SPDX-License-Identifier: MIT */
/*
 * TCP connections served through io_uring, for a worker that never blocks on them
 * (memcached's protocols): one listening socket per worker, all bound to one port
 * with SO_REUSEPORT so that the kernel spreads connections; a multishot accept; per
 * connection, one receive into a growable input buffer and one send of a growable
 * output buffer in flight at a time. What the bytes mean is the handler's. The
 * worker reaps the ring every round (xkv_tcp_reap) and polls its fd while asleep.
 * TLS (net/tls.h) sits between the ring and the buffers: the ring moves ciphertext,
 * the handler sees plaintext.
 */
#ifndef XKV_TCP_URING_H
#define XKV_TCP_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/tls.h"
#include "proto/peer.h"

#define XKV_TCP_RING 256	      /* submission entries */
#define XKV_TCP_RECV_MIN 16384	      /* room offered to each receive, at least */
#define XKV_TCP_OUT_HIGH (4u << 20)   /* unsent output over this: input waits */
#define XKV_TCP_TLS_RECV 16384	      /* TLS: each receive of ciphertext */
/*
 * At the limit, a new connection takes the place of the one that has gone longest
 * without a request, if that is this long (memcached's idle_kicks): so idle
 * connections, or a client sending a byte a minute, cannot keep others out.
 */
#define XKV_TCP_IDLE_KICK_NS 1000000000ull

/* Bytes of output; a buffer in flight never moves, so appends go to another one. */
struct xkv_tcp_buf {
	char *data;
	size_t len, cap;
};

struct xkv_tcp_conn {
	struct xkv_peer peer;
	int fd;
	uint32_t slot;		 /* in the listener's table */
	uint32_t gen;		 /* the slot's use: tells a late reference from a new one */
	char *in;		 /* received, not yet consumed: in[in_off..in_len) */
	size_t in_off, in_len, in_cap;
	struct xkv_tcp_buf out;	 /* replies appended since the send in flight began */
	struct xkv_tcp_buf wire; /* the send in flight: wire.data[wire_sent..wire.len) */
	size_t wire_sent;
	bool recv_posted, send_posted;
	bool paused;		 /* the handler waits for something: no input is fed */
	bool close_after;	 /* closes once its replies are sent */
	bool eof;		 /* the peer sends no more: close once what it sent is answered */
	bool closing;		 /* shut down: freed once nothing is posted */
	bool kicked;		 /* ... to make room for a new one */
	uint64_t progress_ns;	 /* when it was opened, or the handler last took a request */
	struct xkv_tls_conn *tls; /* TLS: what is received goes through it to in, out to wire */
	char *tls_in;		 /* TLS: ciphertext received, fed to tls at once */
	void *session;		 /* the handler's */
};

struct xkv_tcp_handler {
	/* A connection from c->peer: 0 serves it (c->session set), else it is closed. */
	int (*open)(void *ctx, struct xkv_tcp_conn *c);
	/*
	 * Consumes whole requests from in[0..len), appending replies to c->out; returns
	 * the bytes consumed. Sets *close to close the connection once its replies are
	 * sent.
	 */
	size_t (*input)(void *ctx, struct xkv_tcp_conn *c, const char *in, size_t len,
			bool *close);
	/* The connection goes: c->session is freed. */
	void (*close)(void *ctx, struct xkv_tcp_conn *c);
	void *ctx;
};

struct xkv_tcp {
	struct io_uring ring;
	int listen_fd;
	struct xkv_tcp_handler handler;
	struct xkv_tls *tls;		/* NULL: plain TCP */
	size_t in_max;			/* an input buffer grows up to this */
	struct xkv_tcp_conn **conns;	/* [slots]; NULL: a free slot */
	uint32_t *gens;			/* each slot's uses */
	uint32_t max_conns, nconns;	/* open at most; in the table (kicked ones too) */
	uint32_t slots, nkicked;	/* the table: max_conns and room for those kicked */
	bool accept_posted;
	uint32_t unsubmitted;
	uint64_t accepted;		/* connections served since start */
	uint64_t refused;		/* closed at accept: the handler's, or no slot free */
	uint64_t kicks;			/* idle connections closed for a new one */
	uint64_t tls_handshake_errors;	/* connections closed by a failed handshake */
};

/*
 * Listens on port (IPv6, dual-stack, every address, SO_REUSEPORT) for at most
 * max_conns connections at once, whose input buffers grow to in_max bytes (a
 * longer request closes its connection); with tls, each connection is a TLS session
 * the handler sees only the plaintext of. Returns 0 or -errno.
 */
int xkv_tcp_open(struct xkv_tcp *t, uint16_t port, uint32_t max_conns, size_t in_max,
		 struct xkv_tls *tls, const struct xkv_tcp_handler *handler);
/* Closes every connection (the handler's close for each) and the listener. */
void xkv_tcp_close(struct xkv_tcp *t);

/* The fd to poll(2) for POLLIN while asleep: readable when the ring has completions. */
static inline int xkv_tcp_fd(const struct xkv_tcp *t)
{
	return t->ring.ring_fd;
}

/* Handles every completion and submits what follows, without blocking; returns how many. */
unsigned xkv_tcp_reap(struct xkv_tcp *t);

/* Appends len bytes to c's output. 0, or -ENOMEM. */
int xkv_tcp_append(struct xkv_tcp_conn *c, const void *data, size_t len);

/* Room for at least len more bytes at b->data + b->len. 0, or -ENOMEM. */
int xkv_tcp_reserve(struct xkv_tcp_buf *b, size_t len);

/*
 * The handler waits for something (input stops being fed), or has it now: its output
 * is sent and the input left is fed again. Kick sends what the handler appended
 * outside input, paused or not.
 */
void xkv_tcp_pause(struct xkv_tcp_conn *c);
void xkv_tcp_resume(struct xkv_tcp *t, struct xkv_tcp_conn *c);
void xkv_tcp_kick(struct xkv_tcp *t, struct xkv_tcp_conn *c);

/* The connection in slot with gen, or NULL when it has gone since. */
struct xkv_tcp_conn *xkv_tcp_conn_of(const struct xkv_tcp *t, uint32_t slot, uint32_t gen);

#endif /* XKV_TCP_URING_H */
