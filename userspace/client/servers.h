/* SPDX-License-Identifier: MIT */
/*
 * A server list as clients take it: "SERVER[,SERVER...]", each HOST[:PORT[:WEIGHT]]
 * (an IPv6 address in brackets when a port follows) and optionally " NAME". As in
 * twemproxy's configuration, a server's name places its keys (client/ketama.h): NAME
 * if given, else "HOST:PORT", or "HOST" alone on memcached's port 11211.
 */
#ifndef XKV_CLIENT_SERVERS_H
#define XKV_CLIENT_SERVERS_H

#include <stdint.h>

#include "client/ketama.h"

struct xkv_server_addr {
	char host[256];
	char port[8];
	char name[300]; /* at most XKV_KETAMA_NAME_MAX: longer is refused */
	uint32_t weight;
};

/*
 * Parses list into *out (malloc'ed, *n entries; free() it): 0, -EINVAL (with *bad
 * the entry's position, from 0) or -ENOMEM. A port left out is default_port.
 */
int xkv_servers_parse(const char *list, uint16_t default_port, struct xkv_server_addr **out,
		      uint32_t *n, uint32_t *bad);

/* Their ketama continuum, by the names and weights parsed: xkv_ketama_init's result. */
int xkv_servers_ketama(const struct xkv_server_addr *s, uint32_t n, struct xkv_ketama *k);

#endif /* XKV_CLIENT_SERVERS_H */
