/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP transport: each thread sends and receives whole frames on an AF_XDP
 * socket of its own on the client interface, so the kernel's UDP stack does no work
 * on either side of the client (on veth it would run on the server's CPU).
 *
 * One client per run: it attaches tools/bench/bench_client.bpf.c to the interface in native
 * mode (replies from the server's address and port go to the socket of the thread
 * whose port they name, if they came in on its queue; all else passes), and owns one
 * UMEM per rx queue it uses, which the sockets bound to that queue share
 * (userspace/net/xsk.c: frame pool, shared fill and completion rings, copy or
 * zero-copy as the driver allows). Thread t's socket is bound to queue
 * first + t % queues: it sends on that queue, and a server answering through the
 * socket the request came in on (xkv-server --backend xdp) answers on it. Each
 * thread reserves its UDP port with a kernel socket that it keeps open.
 *
 * Frames are Ethernet + IPv4 + UDP with checksum 0 (IPv4 only). The server's MAC
 * comes from the kernel's neighbour table (/proc/net/arp), which an empty
 * datagram to the server's discard port fills when needed: the server must be on
 * the interface's subnet, not behind a router.
 */
#ifndef XKV_BENCH_AFXDP_H
#define XKV_BENCH_AFXDP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "net/packet.h"
#include "transport.h"

/* The sockets' caches share a quarter of the UMEM's frames: up to this many, a batch each. */
#define AFXDP_THREADS_MAX   16
#define AFXDP_QUEUES_MAX    AFXDP_THREADS_MAX /* each queue has a thread at least */
#define AFXDP_NEIGH_WAIT_MS 3000 /* for the server's neighbour entry */

struct afxdp_endpoint {
	uint8_t mac[6];
	struct in_addr ip;
	uint16_t port; /* host order */
};

/* Frames the sockets bound to one queue sent and received, over the run so far (the load too). */
struct afxdp_queue_info {
	uint32_t queue;
	uint64_t sent, received;
};

/* What a run reports of the transport. */
struct afxdp_info {
	const char *iface;
	uint32_t queue, nqueues; /* the first queue, and how many from it */
	const char *mode; /* "copy" or "zero-copy", as the first socket was bound */
	uint64_t redirected, wrong_queue, no_socket; /* counted by the client XDP program */
	uint64_t rx_dropped, rx_ring_full, fill_empty; /* the kernel's, summed over the sockets */
	struct afxdp_queue_info queues[AFXDP_QUEUES_MAX]; /* [nqueues] */
};

struct afxdp_client;

/*
 * Resolves both ends, loads and attaches the XDP program, creates a UMEM on each of
 * queues queue .. queue + queues - 1 of ifname for `sockets` sockets (one per thread,
 * at least one per queue) spread over them. Replaces a bench_client program that a
 * killed run left attached; refuses any other XDP program there. Returns 0 and *out,
 * or -errno with the reason in why.
 */
int afxdp_client_open(const char *ifname, uint32_t queue, uint32_t queues, unsigned sockets,
		      const struct sockaddr_in *server, struct afxdp_client **out, char *why,
		      size_t why_len);
/* Detaches the program (if it is still ours) and frees the UMEM: after every transport. */
void afxdp_client_close(struct afxdp_client *c);
void afxdp_client_info(const struct afxdp_client *c, struct afxdp_info *info);

/*
 * The next thread's socket: the n-th opened is bound to queue first + n % queues.
 * Returns 0 and *out, or -errno with the reason in why.
 */
int afxdp_transport_open(struct afxdp_client *c, struct transport **out, char *why,
			 size_t why_len);

/*
 * The route the server's replies to client take, as xkv_frame_parse() reads it off
 * a reply: a request is written by xkv_reply_write_hdr() along it, which swaps it.
 */
void afxdp_reply_route(struct xkv_route *r, const struct afxdp_endpoint *client,
		       const struct afxdp_endpoint *server);

/*
 * The MAC of ip on ifname in a table in /proc/net/arp's format, from a complete
 * entry only. Returns 0 or -ENOENT.
 */
int afxdp_arp_lookup(FILE *table, const char *ifname, struct in_addr ip, uint8_t mac[6]);

#endif /* XKV_BENCH_AFXDP_H */
