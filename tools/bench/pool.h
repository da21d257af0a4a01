/* SPDX-License-Identifier: MIT */
/*
 * The servers the load goes to: one, or a list the keys are spread over by ketama as
 * twemproxy spreads them (userspace/client/servers.h), each key's server worked out
 * once, before the run, so that a request costs a table lookup.
 */
#ifndef XKV_BENCH_POOL_H
#define XKV_BENCH_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "workload.h"

#define BENCH_POOL_MAX 255 /* a key's server is a byte */

struct bench_addr {
	struct sockaddr_storage addr;
	socklen_t len;
};

struct bench_pool {
	uint32_t n;
	struct bench_addr *addrs; /* n of them, in the list's order */
	uint8_t *dest;		  /* a list's: the server of each of the workload's keys */
};

/*
 * servers: one server (udp_resolve's forms) or a list ("S1,S2,..."), over the
 * workload w's keys. 0, or -EINVAL (with why) or -errno.
 */
int bench_pool_open(struct bench_pool *p, const char *servers, const struct workload *w,
		    char *why, size_t why_len);
void bench_pool_close(struct bench_pool *p);

#endif /* XKV_BENCH_POOL_H */
