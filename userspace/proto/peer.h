/* SPDX-License-Identifier: MIT */
/* Who sent a datagram, in one form for every transport. */
#ifndef XKV_PEER_H
#define XKV_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xkv/maps.h>

struct xkv_peer {
	uint8_t addr[16]; /* IPv6, or IPv4 mapped as ::ffff:a.b.c.d */
	uint16_t port;	  /* network byte order */
	/*
	 * When the kernel received the datagram (CLOCK_MONOTONIC; 0: not stamped), carried
	 * with its sender wherever the request goes (include/xkv/latency.h). Not part of
	 * who the peer is.
	 */
	uint64_t arrival_ns;
};

static inline bool xkv_peer_equal(const struct xkv_peer *a, const struct xkv_peer *b)
{
	return a->port == b->port && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

/* Whether peer's address lies in one of the n networks. */
static inline bool xkv_peer_in(const struct xkv_peer *peer, const struct xkv_allow_key *nets,
			       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t bytes = nets[i].prefixlen / 8, bits = nets[i].prefixlen % 8;
		uint8_t mask = (uint8_t)(0xff00 >> bits);

		if (!memcmp(peer->addr, nets[i].addr, bytes) &&
		    (!bits || !((peer->addr[bytes] ^ nets[i].addr[bytes]) & mask)))
			return true;
	}
	return false;
}

#endif /* XKV_PEER_H */
