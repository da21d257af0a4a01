/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP transport: each thread sends and receives whole frames on an AF_XDP
 * socket of its own on the client interface, so the kernel's UDP stack does no work
 * on either side of the client (on veth it would run on the server's CPU).
 *
 * One client per run: it attaches bpf/bench_client.bpf.c to the interface in native
 * mode (replies from the server's address and port go to the socket of the thread
 * whose port they name; all else passes), and owns the UMEM that every thread's
 * socket shares on the one rx queue they are bound to (userspace/net/xsk.c: frame
 * pool, shared fill and completion rings, copy or zero-copy as the driver allows).
 * Each thread reserves its UDP port with a kernel socket that it keeps open.
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
#define AFXDP_PAYLOAD_MAX   1472 /* UDP payload of a 1500-byte IPv4 packet */
#define AFXDP_NEIGH_WAIT_MS 3000 /* for the server's neighbour entry */

struct afxdp_endpoint {
	uint8_t mac[6];
	struct in_addr ip;
	uint16_t port; /* host order */
};

/* What a run reports of the transport. */
struct afxdp_info {
	const char *iface;
	uint32_t queue;
	const char *mode; /* "copy" or "zero-copy", as the first socket was bound */
	uint64_t redirected, wrong_queue, no_socket; /* counted by the client XDP program */
	uint64_t rx_dropped, rx_ring_full, fill_empty; /* the kernel's, summed over the sockets */
};

struct afxdp_client;

/*
 * Resolves both ends, loads and attaches the XDP program, creates the UMEM for
 * `sockets` sockets (one per thread) on queue `queue` of ifname. Replaces a
 * bench_client program that a killed run left attached; refuses any other XDP
 * program there. Returns 0 and *out, or -errno with
 * the reason in why.
 */
int afxdp_client_open(const char *ifname, uint32_t queue, unsigned sockets,
		      const struct sockaddr_in *server, struct afxdp_client **out, char *why,
		      size_t why_len);
/* Detaches the program (if it is still ours) and frees the UMEM: after every transport. */
void afxdp_client_close(struct afxdp_client *c);
void afxdp_client_info(const struct afxdp_client *c, struct afxdp_info *info);

/* One thread's socket. Returns 0 and *out, or -errno with the reason in why. */
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
