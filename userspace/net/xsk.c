// SPDX-License-Identifier: MIT
#include <errno.h>
#include <arpa/inet.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xkv/latency.h>

#include "net/xsk.h"

#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* newer UAPI: frames per copy-mode TX kick */
#endif

/* How long a reply waits for a frame or a TX slot: some 60 ms; 2048 frames take 25 at 1 Gbit/s */
#define TX_WAIT_TRIES 500
#define TX_WAIT_US    50 /* between tries */
#define TX_RESERVE    (XKV_XSK_FRAMES / 8) /* frames the fill ring leaves to replies */

static void *tx_reserve(const struct xkv_origin *to, size_t *cap);
static void tx_send(const struct xkv_origin *to, void *buf, size_t len);
static int tx_forward(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
		      uint16_t port);
static void tx_release(const struct xkv_origin *to, void *buf);

/*
 * What an origin's route holds on this transport: the request's addresses, ports and
 * VLAN, and the length of the reply's headers they make. may_alias: it is read and
 * written in the origin's bytes.
 */
struct __attribute__((may_alias)) xsk_route {
	struct xkv_route route;
	uint32_t hdr_len; /* xkv_reply_hdr_len(&route) */
};

_Static_assert(sizeof(struct xsk_route) <= sizeof(struct xkv_reply_route), "a route fits");

static const struct xsk_route *route_of(const struct xkv_origin *o)
{
	return (const struct xsk_route *)o->route.bytes;
}

int xkv_xsk_queue_open(struct xkv_xsk_queue *q, uint32_t queue_id)
{
	struct xsk_umem_config cfg = {
		.fill_size = XKV_XSK_RING,
		.comp_size = XKV_XSK_RING,
		.frame_size = XKV_XSK_FRAME_SIZE,
		.frame_headroom = XKV_XSK_HEADROOM,
	};
	size_t size = (size_t)XKV_XSK_FRAMES * XKV_XSK_FRAME_SIZE;
	int err;

	memset(q, 0, sizeof(*q)); /* libxdp 1.3 leaves the rings' cached counters unset */
	q->id = queue_id;
	q->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->area == MAP_FAILED)
		return -errno;
	err = xsk_umem__create(&q->umem, q->area, size, &q->fill, &q->comp, &cfg);
	if (err) {
		munmap(q->area, size);
		return err;
	}
	pthread_spin_init(&q->lock, PTHREAD_PROCESS_PRIVATE);
	for (uint32_t i = 0; i < XKV_XSK_FRAMES; i++)
		q->pool[q->npool++] = (uint64_t)i * XKV_XSK_FRAME_SIZE;
	return 0;
}

void xkv_xsk_queue_close(struct xkv_xsk_queue *q)
{
	xsk_umem__delete(q->umem);
	munmap(q->area, (size_t)XKV_XSK_FRAMES * XKV_XSK_FRAME_SIZE);
	pthread_spin_destroy(&q->lock);
}

/* Under q->lock: completed TX frames back to the pool. */
static void comp_reap_locked(struct xkv_xsk_queue *q)
{
	uint32_t idx, n = xsk_ring_cons__peek(&q->comp, XKV_XSK_RING, &idx);

	for (uint32_t i = 0; i < n; i++)
		q->pool[q->npool++] = *xsk_ring_cons__comp_addr(&q->comp, idx + i);
	xsk_ring_cons__release(&q->comp, n);
	atomic_fetch_sub_explicit(&q->in_tx, n, memory_order_relaxed);
}

/*
 * Under q->lock: the fill ring topped up from the pool, but for TX_RESERVE frames. A
 * stopped socket's full RX ring holds XKV_XSK_RING frames, the fill ring as many: the
 * two would take every frame of the queue, and the other sockets' replies would find
 * none to be sent in.
 */
static void fill_top_up_locked(struct xkv_xsk_queue *q)
{
	uint32_t idx, n, spare = q->npool > TX_RESERVE ? q->npool - TX_RESERVE : 0;

	n = xsk_prod_nb_free(&q->fill, spare);
	if (n > spare)
		n = spare;
	if (!n || xsk_ring_prod__reserve(&q->fill, n, &idx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&q->fill, idx + i) = q->pool[--q->npool];
	xsk_ring_prod__submit(&q->fill, n);
	atomic_fetch_add_explicit(&q->in_fill, n, memory_order_relaxed);
}

/*
 * One trip to the shared rings: the cache brought to keep frames (surplus back to the
 * pool first, frames from it last), completions reaped, the fill ring topped up.
 */
static void queue_exchange(struct xkv_xsk *s, uint32_t keep)
{
	struct xkv_xsk_queue *q = s->q;

	pthread_spin_lock(&q->lock);
	while (s->ncache > keep)
		q->pool[q->npool++] = s->cache[--s->ncache];
	comp_reap_locked(q);
	fill_top_up_locked(q);
	while (s->ncache < keep && q->npool)
		s->cache[s->ncache++] = q->pool[--q->npool];
	pthread_spin_unlock(&q->lock);
}

/* Half full: room for the frames RX hands back, frames for the replies TX sends. */
static void cache_refit(struct xkv_xsk *s)
{
	queue_exchange(s, s->cache_max / 2);
}

/* Little left for the kernel to receive into (frames waiting on RX rings count too). */
static bool fill_starving(struct xkv_xsk_queue *q)
{
	return atomic_load_explicit(&q->in_fill, memory_order_relaxed) < XKV_XSK_BATCH;
}

static void kick_tx(struct xkv_xsk *s)
{
	s->kicks++;
	/* copy mode sends from this call; EAGAIN/EBUSY: the kernel is still busy, kick again later */
	sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/* Descriptors on the TX ring that the kernel has not taken yet. */
static bool tx_pending(struct xkv_xsk *s)
{
	return xsk_prod_nb_free(&s->txr, XKV_XSK_RING) < XKV_XSK_RING;
}

void xkv_xsk_flush(struct xkv_xsk *s)
{
	if (s->tx_unsent) {
		xsk_ring_prod__submit(&s->txr, s->tx_unsent);
		atomic_fetch_add_explicit(&s->q->in_tx, s->tx_unsent, memory_order_relaxed);
		s->tx_unsent = 0;
	}
	/* not only after a submit: a kick that met EAGAIN left descriptors behind */
	if (tx_pending(s))
		kick_tx(s);
}

int xkv_xsk_open(struct xkv_xsk *s, struct xkv_xsk_queue *q, const char *ifname,
		 uint32_t queue_sockets, bool first, bool zerocopy, enum xkv_xsk_mode *mode)
{
	struct xsk_socket_config cfg = {
		.rx_size = XKV_XSK_RING,
		.tx_size = XKV_XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* ours is attached */
		.bind_flags = XDP_USE_NEED_WAKEUP | (zerocopy ? XDP_ZEROCOPY : XDP_COPY),
	};
	struct xdp_options opts;
	socklen_t optlen = sizeof(opts);
	int err, budget = XKV_XSK_RING;

	memset(s, 0, sizeof(*s));
	s->tx = (struct xkv_tx){.reserve = tx_reserve,
				.send = tx_send,
				.release = tx_release,
				.forward = tx_forward};
	s->q = q;
	/* idle frames in caches are out of the fill ring's reach: all together hold a quarter */
	s->cache_max = XKV_XSK_FRAMES / 4 / (queue_sockets ? queue_sockets : 1);
	if (s->cache_max > XKV_XSK_CACHE)
		s->cache_max = XKV_XSK_CACHE;
	if (s->cache_max < 2) /* half of it must hold a frame to reply from */
		return -EINVAL;
	err = xsk_socket__create_shared(&s->xsk, ifname, q->id, q->umem, &s->rx, &s->txr,
					&q->fill, &q->comp, &cfg);
	if (err && zerocopy && first) {
		/* a silent fallback is a classic AF_XDP complaint: the caller reports the mode */
		cfg.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY;
		err = xsk_socket__create_shared(&s->xsk, ifname, q->id, q->umem, &s->rx,
						&s->txr, &q->fill, &q->comp, &cfg);
	}
	if (err)
		return err;
	s->fd = xsk_socket__fd(s->xsk);
	*mode = getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen) == 0 &&
				(opts.flags & XDP_OPTIONS_ZEROCOPY)
			? XKV_XSK_ZEROCOPY
			: XKV_XSK_COPY;
	/* copy mode sends 32 frames per kick unless told more; older kernels refuse: fine */
	setsockopt(s->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
	if (first)
		cache_refit(s);
	return 0;
}

void xkv_xsk_drain(struct xkv_xsk *s)
{
	xkv_xsk_flush(s);
	for (int i = 0; i < 100 && atomic_load(&s->q->in_tx); i++) {
		kick_tx(s);
		usleep(1000);
		pthread_spin_lock(&s->q->lock);
		comp_reap_locked(s->q);
		pthread_spin_unlock(&s->q->lock);
	}
	queue_exchange(s, 0);
}

void xkv_xsk_close(struct xkv_xsk *s)
{
	xsk_socket__delete(s->xsk);
}

static uint64_t frame_of(uint64_t addr)
{
	return addr - addr % XKV_XSK_FRAME_SIZE;
}

/*
 * Until ready(s), or TX_WAIT_TRIES: kicks what waits on the TX ring and takes back
 * completions. It sleeps between tries, as the kernel drains at the peer's pace, which
 * may need this CPU (a NAPI thread, an interrupt).
 */
static bool tx_wait(struct xkv_xsk *s, bool (*ready)(struct xkv_xsk *s))
{
	for (int tries = 0; !ready(s); tries++) {
		if (tries == TX_WAIT_TRIES)
			return false;
		if (tries) {
			s->tx_waits++;
			usleep(TX_WAIT_US);
		}
		xkv_xsk_flush(s);
		cache_refit(s);
	}
	return true;
}

static bool tx_has_frame(struct xkv_xsk *s)
{
	return s->ncache;
}

static bool tx_has_slot(struct xkv_xsk *s)
{
	return xsk_prod_nb_free(&s->txr, 1);
}

static void *tx_reserve(const struct xkv_origin *to, size_t *cap)
{
	struct xkv_xsk *s = (struct xkv_xsk *)to->tx;
	uint32_t hdr = route_of(to)->hdr_len, room = XKV_XSK_FRAME_SIZE - hdr;

	/* a large reply can use every frame: wait for them to come back */
	if (!tx_wait(s, tx_has_frame))
		return NULL;
	/* the IP packet must fit a 1500-byte MTU */
	*cap = room < 1500 + 14 - hdr ? room : 1500 + 14 - hdr;
	return s->q->area + s->cache[--s->ncache] + hdr;
}

/* The len bytes at buf, reserved for `to`, sent along route with its headers: 0 or -errno. */
static int tx_submit(const struct xkv_origin *to, void *buf, size_t len,
		     const struct xkv_route *route)
{
	struct xkv_xsk *s = (struct xkv_xsk *)to->tx;
	uint8_t *frame = (uint8_t *)buf - route_of(to)->hdr_len;
	uint64_t addr = (uint64_t)(frame - s->q->area);
	struct xdp_desc *desc;
	uint32_t idx, frame_len;

	frame_len = xkv_reply_write_hdr(frame, route, (uint32_t)len);
	if (!frame_len) {
		s->tx_to_group++;
		s->cache[s->ncache++] = addr;
		return -EADDRNOTAVAIL;
	}
	if (!tx_wait(s, tx_has_slot) || !xsk_ring_prod__reserve(&s->txr, 1, &idx)) {
		s->tx_ring_full++;
		s->cache[s->ncache++] = addr;
		return -ENOBUFS;
	}
	desc = xsk_ring_prod__tx_desc(&s->txr, idx);
	desc->addr = addr;
	desc->len = frame_len;
	desc->options = 0;
	s->tx_packets++;
	if (++s->tx_unsent == XKV_XSK_BATCH)
		xkv_xsk_flush(s);
	return 0;
}

static void tx_send(const struct xkv_origin *to, void *buf, size_t len)
{
	/* the reply goes back the way its request came: addresses swapped */
	tx_submit(to, buf, len, &route_of(to)->route);
}

static int tx_forward(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
		      uint16_t port)
{
	struct xkv_route onward;

	if (route_of(to)->route.ip_version != 4) {
		tx_release(to, buf);
		return -EAFNOSUPPORT;
	}
	/* the same headers' length as a reply's: the frame was reserved for one */
	xkv_route_onward(&route_of(to)->route, addr, port, &onward);
	return tx_submit(to, buf, len, &onward);
}

static void tx_release(const struct xkv_origin *to, void *buf)
{
	struct xkv_xsk *s = (struct xkv_xsk *)to->tx;

	s->cache[s->ncache++] = (uint64_t)((uint8_t *)buf - route_of(to)->hdr_len - s->q->area);
}

void xkv_xsk_origin(struct xkv_xsk *s, const struct xkv_route *route, struct xkv_origin *out)
{
	*out = (struct xkv_origin){.tx = &s->tx, .queue = s->q->id};
	*(struct xsk_route *)out->route.bytes =
		(struct xsk_route){.route = *route, .hdr_len = xkv_reply_hdr_len(route)};
	xkv_route_peer(route, &out->peer);
}

/*
 * When the kernel received the frame at addr: XDP's stamp in the metadata before it,
 * cleared once read, since the frame comes back with whatever it held; 0: none.
 */
_Static_assert((XDP_PACKET_HEADROOM + XKV_XSK_HEADROOM) % 64 >= sizeof(struct xkv_arrival_meta),
	       "the stamp lies in the cache line the frame starts in");

static uint64_t frame_arrival(struct xkv_xsk *s, uint64_t addr)
{
	struct xkv_arrival_meta *meta =
		(struct xkv_arrival_meta *)(s->q->area + addr) - 1; /* in the kernel's headroom */
	uint64_t ns = meta->ns;

	if (meta->check != (ns ^ XKV_ARRIVAL_MAGIC))
		return 0;
	meta->check = 0;
	return ns;
}

/* Parses each frame of the batch once, into s->parsed; the well-formed ones into s->batch. */
static void batch_parse(struct xkv_xsk *s, const struct xkv_rx *rx, uint32_t idx, uint32_t n,
			uint32_t *nd)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&s->rx, idx + i);
		const uint8_t *frame = s->q->area + desc->addr;
		struct xkv_parsed_frame *p = &s->parsed[i];
		struct xkv_route route;

		p->ok = xkv_frame_parse(frame, desc->len, &route, &p->off, &p->len) == 0;
		p->mc = p->ok && rx->mc_port && route.port_dst == htons(rx->mc_port);
		if (!p->ok) {
			s->rx_unparsable++;
			continue;
		}
		p->from.tx = &s->tx;
		p->from.queue = s->q->id;
		*(struct xsk_route *)p->from.route.bytes =
			(struct xsk_route){.route = route, .hdr_len = xkv_reply_hdr_len(&route)};
		xkv_route_peer(&route, &p->from.peer);
		p->from.peer.arrival_ns = frame_arrival(s, desc->addr);
		s->batch[(*nd)++] = (struct xkv_dgram){.from = &p->from, .data = frame + p->off,
						       .len = p->len, .mc = p->mc};
	}
}

unsigned xkv_xsk_poll(struct xkv_xsk *s, const struct xkv_rx *rx)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&s->rx, XKV_XSK_BATCH, &idx); /* idx: set if n */

	uint32_t nd = 0;

	batch_parse(s, rx, idx, n, &nd);
	if (nd)
		rx->batch(rx->ctx, s->batch, nd);
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&s->rx, idx + i);

		/* replies went out in frames of their own: the batch's are free again */
		s->cache[s->ncache++] = frame_of(desc->addr);
		if (s->ncache == s->cache_max)
			cache_refit(s);
	}
	if (n) {
		xsk_ring_cons__release(&s->rx, n);
		atomic_fetch_sub_explicit(&s->q->in_fill, n, memory_order_relaxed);
		s->rx_packets += n;
	}
	xkv_xsk_flush(s);
	if (n || tx_pending(s)) {
		/*
		 * The fill ring only drains as frames arrive: refill (under the lock) after a
		 * batch. And reap while TX waits: a full completion ring stops the kernel sending.
		 */
		cache_refit(s);
	} else if (fill_starving(s->q) &&
		   (s->ncache || atomic_load_explicit(&s->q->in_tx, memory_order_relaxed))) {
		/* a dry fill ring brings no batch to refill it: give it our idle frames, reap */
		queue_exchange(s, 0);
	}
	if (xsk_ring_prod__needs_wakeup(&s->q->fill))
		recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return n;
}

uint32_t xkv_xsk_rx_filled(const struct xkv_xsk *s)
{
	return __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE);
}

bool xkv_xsk_rx_read_to(const struct xkv_xsk *s, uint32_t filled)
{
	return (int32_t)(s->rx.cached_cons - filled) >= 0; /* positions wrap */
}

int xkv_xsk_kernel_stats(const struct xkv_xsk *s, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	return getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, st, &len) ? -errno : 0;
}

uint64_t xkv_xsk_kernel_drops(struct xkv_xsk *s)
{
	struct xdp_statistics k;
	uint64_t total, n;

	if (xkv_xsk_kernel_stats(s, &k))
		return 0;
	total = k.rx_dropped + k.rx_ring_full; /* every frame xsk_rcv refused, once */
	n = total - s->kernel_drops_seen;
	s->kernel_drops_seen = total;
	return n;
}

void xkv_xsk_add_counters(const struct xkv_xsk *s, struct xkv_socket_counters *c)
{
	struct xdp_statistics k = {0};

	c->sockets++;
	c->rx_packets += s->rx_packets;
	c->rx_unparsable += s->rx_unparsable;
	c->tx_packets += s->tx_packets;
	c->tx_ring_full += s->tx_ring_full;
	c->tx_to_group += s->tx_to_group;
	c->kicks += s->kicks;
	c->tx_waits += s->tx_waits;
	/* a socket that is not bound (yet) has no kernel counters: zeros */
	xkv_xsk_kernel_stats(s, &k);
	c->kernel_rx_dropped += k.rx_dropped;
	c->kernel_rx_ring_full += k.rx_ring_full;
	c->kernel_fill_empty += k.rx_fill_ring_empty_descs;
	c->kernel_tx_invalid += k.tx_invalid_descs;
}

void xkv_xsk_queue_frames(struct xkv_xsk_queue *q, struct xkv_xsk **socks, unsigned nsocks,
			  struct xkv_xsk_frames *f)
{
	f->total = XKV_XSK_FRAMES;
	pthread_spin_lock(&q->lock);
	f->idle = q->npool;
	pthread_spin_unlock(&q->lock);
	for (unsigned i = 0; i < nsocks; i++)
		f->idle += socks[i]->ncache;
	f->in_fill = (uint64_t)atomic_load(&q->in_fill);
	f->in_tx = (uint64_t)atomic_load(&q->in_tx);
	f->unaccounted = (int64_t)f->total - (int64_t)(f->idle + f->in_fill + f->in_tx);
}
