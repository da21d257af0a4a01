/* SPDX-License-Identifier: MIT */
/* Who sent a datagram, in one form for every transport. */
#ifndef XKV_PEER_H
#define XKV_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct xkv_peer {
	uint8_t addr[16]; /* IPv6, or IPv4 mapped as ::ffff:a.b.c.d */
	uint16_t port;	  /* network byte order */
	uint16_t pad;	  /* zero, so peers compare as bytes */
};

static inline bool xkv_peer_equal(const struct xkv_peer *a, const struct xkv_peer *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

#endif /* XKV_PEER_H */
