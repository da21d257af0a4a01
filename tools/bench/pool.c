// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/proto.h>
#include "client/servers.h"
#include "pool.h"
#include "udp.h"

/* One server: resolved as --server always was, IPv6 without brackets included. */
static int open_one(struct bench_pool *p, const char *server, char *why, size_t why_len)
{
	int err;

	p->addrs = calloc(1, sizeof(*p->addrs));
	if (!p->addrs)
		return -ENOMEM;
	p->n = 1;
	err = udp_resolve(server, &p->addrs[0].addr, &p->addrs[0].len);
	if (err)
		snprintf(why, why_len, "--server %s: %s", server,
			 err == -EINVAL ? "not HOST, HOST:PORT or [IPV6]:PORT"
					: "the host does not resolve");
	return err;
}

/* Each key's server: where its name falls on the list's continuum. */
static int place_keys(struct bench_pool *p, const struct xkv_server_addr *s,
		      const struct workload *w)
{
	uint8_t key[XKV_KEY_MAX];
	struct xkv_ketama ring;
	int err = xkv_servers_ketama(s, p->n, &ring);

	if (err)
		return err;
	p->dest = malloc(w->cfg.keys);
	if (!p->dest) {
		xkv_ketama_fini(&ring);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < w->cfg.keys; k++) {
		workload_key(w, k, key);
		p->dest[k] = (uint8_t)xkv_ketama_place(&ring, key, w->cfg.key_size);
	}
	xkv_ketama_fini(&ring);
	return 0;
}

int bench_pool_open(struct bench_pool *p, const char *servers, const struct workload *w,
		    char *why, size_t why_len)
{
	struct xkv_server_addr *s;
	uint32_t bad;
	char one[sizeof(s->host) + sizeof(s->port) + 4];
	int err;

	*p = (struct bench_pool){0};
	if (!strchr(servers, ','))
		return open_one(p, servers, why, why_len);
	err = xkv_servers_parse(servers, XKV_DEFAULT_PORT, &s, &p->n, &bad);
	if (err == -EINVAL)
		snprintf(why, why_len, "--server: server %u of the list is not HOST[:PORT[:WEIGHT]][ NAME]",
			 bad + 1);
	if (err)
		return err;
	if (p->n > BENCH_POOL_MAX) {
		snprintf(why, why_len, "--server: %u servers, at most %u", p->n, BENCH_POOL_MAX);
		err = -EINVAL;
		goto free_list;
	}
	p->addrs = calloc(p->n, sizeof(*p->addrs));
	if (!p->addrs) {
		err = -ENOMEM;
		goto free_list;
	}
	for (uint32_t i = 0; i < p->n; i++) {
		snprintf(one, sizeof(one), strchr(s[i].host, ':') ? "[%s]:%s" : "%s:%s", s[i].host,
			 s[i].port);
		err = udp_resolve(one, &p->addrs[i].addr, &p->addrs[i].len);
		if (err) {
			snprintf(why, why_len, "--server: %s does not resolve", one);
			goto free_list;
		}
	}
	err = place_keys(p, s, w);
free_list:
	free(s);
	return err;
}

void bench_pool_close(struct bench_pool *p)
{
	free(p->addrs);
	free(p->dest);
	*p = (struct bench_pool){0};
}
