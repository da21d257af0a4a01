/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP backend's transport. Per rx queue, one UMEM whose fill and completion
 * rings all sockets on the queue share (the kernel insists): they are single
 * producer / single consumer, so a spinlock guards them and workers use them in
 * batches. Per worker and queue, one socket with its own RX and TX rings, placed in
 * the XDP program's XSKMAP at rx_queue * workers + worker.
 *
 * Every UMEM frame is always in exactly one place: the queue's pool, a socket's
 * cache, the kernel (fill ring to RX ring, or TX ring to completion ring), or in
 * the hands of the worker handling it. The counters below make a leak visible.
 */
#ifndef XKV_XSK_H
#define XKV_XSK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <xdp/xsk.h>
#include <xkv/stats.h>

#include "net/packet.h"
#include "proto/transport.h"

#define XKV_XSK_FRAME_SIZE 2048
/*
 * Bytes left free before a received frame, besides the kernel's: the arrival stamp
 * XDP puts in front of a request (struct xkv_arrival_meta) then shares the cache line
 * the frame starts in, which the worker reads anyway.
 */
#define XKV_XSK_HEADROOM   16
#define XKV_XSK_FRAMES	   4096 /* per queue */
#define XKV_XSK_RING	   2048 /* descriptors in each ring */
#define XKV_XSK_CACHE	   1024 /* the most idle frames one socket holds */
#define XKV_XSK_BATCH	   64

/*
 * The largest frame a socket receives: the kernel keeps XDP_PACKET_HEADROOM of each
 * UMEM frame, and refuses a larger one after XDP redirected it (xsk_rcv_check), so
 * XDP drops it first (the config's frame_max).
 */
#define XKV_XSK_RX_MAX (XKV_XSK_FRAME_SIZE - XDP_PACKET_HEADROOM - XKV_XSK_HEADROOM)

enum xkv_xsk_mode { XKV_XSK_COPY, XKV_XSK_ZEROCOPY };

struct xkv_xsk_queue {
	pthread_spinlock_t lock; /* fill ring, completion ring, pool */
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_umem *umem;
	uint8_t *area;
	uint32_t id;
	uint64_t pool[XKV_XSK_FRAMES]; /* idle frame addresses */
	uint32_t npool;
	_Atomic int64_t in_fill; /* given to the fill ring, not yet received */
	_Atomic int64_t in_tx;	 /* put on a TX ring, not yet completed */
};

/* The frame accounting of one queue, for stats and tests. */
struct xkv_xsk_frames {
	uint64_t total, idle, in_fill, in_tx;
	int64_t unaccounted; /* total - idle - in_fill - in_tx: nonzero is a leak */
};

/* A received frame, parsed once for the two passes over its batch. */
struct xkv_parsed_frame {
	struct xkv_origin from; /* its route, the reply header's length beside it */
	uint32_t off, len;	/* of the UDP payload */
	bool ok;	   /* a well-formed UDP datagram */
	bool mc;	   /* ... sent to the memcached port (struct xkv_rx's mc_port) */
};

struct xkv_xsk {
	struct xkv_tx tx; /* the executor's reply path; first, so the two convert */
	struct xkv_xsk_queue *q;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod txr;
	int fd;
	uint64_t cache[XKV_XSK_CACHE]; /* idle frames this socket holds */
	uint32_t ncache;
	uint32_t cache_max; /* its share of the caches' quarter; a trip to the pool leaves half */
	uint32_t tx_unsent; /* descriptors written, not yet submitted */
	struct xkv_parsed_frame parsed[XKV_XSK_BATCH]; /* the batch being handled */
	struct xkv_dgram batch[XKV_XSK_BATCH];	       /* ... as the receiver takes it */
	uint64_t rx_packets, rx_unparsable, tx_packets, tx_ring_full, tx_to_group, kicks,
		tx_waits;
	uint64_t kernel_drops_seen; /* xkv_xsk_kernel_drops' last total */
};

/* Creates the queue's UMEM. Returns 0 or -errno. */
int xkv_xsk_queue_open(struct xkv_xsk_queue *q, uint32_t queue_id);
void xkv_xsk_queue_close(struct xkv_xsk_queue *q);

/*
 * Opens one of queue_sockets sockets on ifname's queue q, the first one bringing the
 * fill ring up. The sockets' caches share a quarter of the queue's frames, at least
 * two each: -EINVAL above XKV_XSK_FRAMES / 8 sockets. zerocopy asks for zero-copy
 * first and falls back to copy; *mode says which was bound. Returns 0 or -errno.
 */
int xkv_xsk_open(struct xkv_xsk *s, struct xkv_xsk_queue *q, const char *ifname,
		 uint32_t queue_sockets, bool first, bool zerocopy, enum xkv_xsk_mode *mode);
void xkv_xsk_close(struct xkv_xsk *s);

/*
 * Receives a batch, hands its requests' UDP payloads to rx at once (their frames kept
 * until it returns), sends the replies, recycles frames. Returns the frames received.
 */
unsigned xkv_xsk_poll(struct xkv_xsk *s, const struct xkv_rx *rx);

/*
 * An origin that sends through s along route (the way back a reply would take): for
 * a client, whose requests retrace the route of the server's replies.
 */
void xkv_xsk_origin(struct xkv_xsk *s, const struct xkv_route *route, struct xkv_origin *out);

/*
 * Submits the replies tx has written, and kicks while the TX ring holds any the kernel
 * has not taken: copy mode sends only from a kick, which may stop short (EAGAIN).
 */
void xkv_xsk_flush(struct xkv_xsk *s);

/*
 * How far the kernel has filled the RX ring (a position, counting every frame ever
 * put on it), read by any thread; and whether the socket's owner has read it that far.
 */
uint32_t xkv_xsk_rx_filled(const struct xkv_xsk *s);
bool xkv_xsk_rx_read_to(const struct xkv_xsk *s, uint32_t filled);

/* Gives back what the socket holds and reaps completions: for shutdown and tests. */
void xkv_xsk_drain(struct xkv_xsk *s);

/* The kernel's counters of the socket: RX drops, full rings, empty fill ring. */
int xkv_xsk_kernel_stats(const struct xkv_xsk *s, struct xdp_statistics *st);

/*
 * Frames steered to the socket that the kernel dropped (RX ring full, no fill frame)
 * since the last call, read by the socket's owner: a request XDP counted and no
 * worker will see. 0 if the kernel does not say.
 */
uint64_t xkv_xsk_kernel_drops(struct xkv_xsk *s);

/* Adds the socket's counters, and the kernel's for it, to c. */
void xkv_xsk_add_counters(const struct xkv_xsk *s, struct xkv_socket_counters *c);

void xkv_xsk_queue_frames(struct xkv_xsk_queue *q, struct xkv_xsk **socks, unsigned nsocks,
			  struct xkv_xsk_frames *f);

#endif /* XKV_XSK_H */
