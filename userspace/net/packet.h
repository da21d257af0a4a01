/* SPDX-License-Identifier: MIT */
/*
 * Frames for the AF_XDP backend: find the UDP payload of a request (Ethernet, one
 * VLAN tag, IPv4 with options or IPv6 with extension headers), and write the
 * headers of its reply. The XDP program checked these headers before redirecting;
 * this parser checks them again, since a frame is just bytes to userspace.
 */
#ifndef XKV_PACKET_H
#define XKV_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/peer.h"

/* What a reply needs to know of its request. */
struct xkv_route {
	uint8_t eth_src[6], eth_dst[6];
	uint16_t vlan_proto, vlan_tci; /* network order; vlan_proto 0: untagged */
	uint8_t ip_version;	       /* 4 or 6 */
	uint8_t ip_src[16], ip_dst[16]; /* IPv4 in the first 4 bytes */
	uint16_t port_src, port_dst;   /* network order */
};

/*
 * Parses frame[0..len). Returns 0 and sets the route and the UDP payload's offset
 * and length, or -EINVAL for a frame that is not a well-formed UDP datagram.
 */
int xkv_frame_parse(const uint8_t *frame, uint32_t len, struct xkv_route *route,
		    uint32_t *payload_off, uint32_t *payload_len);

/* The requester, as the executor and reassembly name peers. */
void xkv_route_peer(const struct xkv_route *route, struct xkv_peer *peer);

/* Bytes of Ethernet, IP and UDP header before a reply's payload. */
uint32_t xkv_reply_hdr_len(const struct xkv_route *route);

/*
 * Writes the headers of a reply to route's request in front of the payload_len
 * bytes already at frame + xkv_reply_hdr_len(route): addresses and ports swapped,
 * IPv4 header checksum, UDP checksum (0 over IPv4, computed over IPv6 where it is
 * mandatory). Returns the frame length; 0, having written nothing, when the reply would go
 * to or come from a multicast or broadcast MAC or IP address (include/xkv/addr.h).
 */
uint32_t xkv_reply_write_hdr(uint8_t *frame, const struct xkv_route *route, uint32_t payload_len);

/*
 * The route along which xkv_reply_write_hdr writes, instead of a reply, route's request
 * sent on to addr:port (IPv4, network order) from its sender's address and port, out
 * the way it came in (to the MAC it came from). Only for an IPv4 route.
 */
void xkv_route_onward(const struct xkv_route *route, uint32_t addr, uint16_t port,
		      struct xkv_route *out);

#endif /* XKV_PACKET_H */
