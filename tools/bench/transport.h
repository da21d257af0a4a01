/* SPDX-License-Identifier: MIT */
/*
 * How the load generator moves datagrams, apart from what it sends. One transport
 * carries one thread's traffic to one server, or to each of a list; it batches (a kernel UDP socket with
 * sendmmsg/recvmmsg today, an AF_XDP socket later) and never blocks longer than asked.
 */
#ifndef XKV_BENCH_TRANSPORT_H
#define XKV_BENCH_TRANSPORT_H

#include <stdint.h>

/* One UDP payload, and the server it goes to: of a list, its index (0: the one). */
struct bench_dgram {
	void *data;
	uint32_t len;
	uint16_t dest;
};

struct transport;

struct transport_ops {
	/*
	 * Sends d[0..n) in order. Returns how many were taken, fewer (even 0) when the
	 * transport is full for now, or -errno (-ECONNREFUSED: nothing listens there).
	 */
	int (*send)(struct transport *t, const struct bench_dgram *d, unsigned n);
	/*
	 * Waits at most timeout_ns (0: not at all) for datagrams and returns how many it
	 * put in d[0..n), or -errno; a datagram arriving meanwhile ends the wait. Their
	 * data stays valid until the next recv. A datagram that did not fit the
	 * transport's buffer comes with len 0.
	 */
	int (*recv)(struct transport *t, struct bench_dgram *d, unsigned n, uint64_t timeout_ns);
	void (*close)(struct transport *t);
};

/* Each transport embeds this first. */
struct transport {
	const struct transport_ops *ops;
};

static inline int transport_send(struct transport *t, const struct bench_dgram *d, unsigned n)
{
	return t->ops->send(t, d, n);
}

static inline int transport_recv(struct transport *t, struct bench_dgram *d, unsigned n,
				 uint64_t timeout_ns)
{
	return t->ops->recv(t, d, n, timeout_ns);
}

static inline void transport_close(struct transport *t)
{
	if (t)
		t->ops->close(t);
}

#endif /* XKV_BENCH_TRANSPORT_H */
