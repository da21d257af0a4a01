// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/servers.h"

#define MEMCACHED_PORT 11211 /* twemproxy leaves it out of a server's name */

/* Whether s[0..len) is 1 to 5 digits. */
static bool digits(const char *s, size_t len)
{
	if (!len || len > 5)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Splits HOST[:PORT], [V6]:PORT or a bare IPv6 address, port defaulted already. */
static int split_host_port(const char *a, struct xkv_server_addr *s)
{
	const char *colon = strrchr(a, ':');
	size_t host_len;

	if (a[0] == '[') {
		const char *end = strchr(a, ']');

		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		host_len = (size_t)(end - a - 1);
		a++;
		colon = end[1] ? end + 1 : NULL;
	} else if (colon && strchr(a, ':') != colon) {
		colon = NULL; /* several colons: an IPv6 address with no port */
		host_len = strlen(a);
	} else {
		host_len = colon ? (size_t)(colon - a) : strlen(a);
	}
	if (!host_len || host_len >= sizeof(s->host))
		return -EINVAL;
	memcpy(s->host, a, host_len);
	s->host[host_len] = '\0';
	if (colon) {
		if (!digits(colon + 1, strlen(colon + 1)) || atoi(colon + 1) > 65535)
			return -EINVAL;
		snprintf(s->port, sizeof(s->port), "%s", colon + 1);
	}
	return 0;
}

/* Colons in s outside an IPv6 address's brackets. */
static unsigned colons(const char *s)
{
	const char *end = s[0] == '[' ? strchr(s, ']') : NULL;
	unsigned n = 0;

	for (s = end ? end : s; *s; s++)
		n += *s == ':';
	return n;
}

/* Takes ":WEIGHT" off the end of a: HOST:PORT:WEIGHT, [V6]:PORT:WEIGHT. */
static int take_weight(char *a, uint32_t *weight)
{
	const char *end = a[0] == '[' ? strchr(a, ']') : a;
	char *last = strrchr(a, ':');
	const char *first = end ? strchr(end, ':') : NULL;

	/* HOST, HOST:PORT, [V6]:PORT, or a bare IPv6 address ("fe80::1": no port between) */
	if (colons(a) != 2 || !first || !digits(first + 1, (size_t)(last - first - 1)))
		return 0;
	if (!digits(last + 1, strlen(last + 1)) || !(*weight = (uint32_t)atoi(last + 1)))
		return -EINVAL;
	*last = '\0';
	return 0;
}

/* One entry, e[0..len): "ADDR[:WEIGHT][ NAME]". */
static int parse_one(const char *e, size_t len, struct xkv_server_addr *s)
{
	char buf[512], *space;
	size_t name_len;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, e, len);
	buf[len] = '\0';
	space = strchr(buf, ' ');
	if (space) {
		*space = '\0';
		name_len = strlen(space + 1);
		if (!name_len || name_len >= sizeof(s->name))
			return -EINVAL;
		memcpy(s->name, space + 1, name_len + 1);
	}
	if (take_weight(buf, &s->weight) || split_host_port(buf, s))
		return -EINVAL;
	if (!s->name[0]) {
		if (atoi(s->port) == MEMCACHED_PORT)
			snprintf(s->name, sizeof(s->name), "%s", s->host);
		else
			snprintf(s->name, sizeof(s->name), "%s:%s", s->host, s->port);
	}
	/* twemproxy hashes "NAME-159" in 86 bytes: a longer name places keys its own way */
	return strlen(s->name) <= XKV_KETAMA_NAME_MAX ? 0 : -EINVAL;
}

int xkv_servers_parse(const char *list, uint16_t default_port, struct xkv_server_addr **out,
		      uint32_t *n, uint32_t *bad)
{
	uint32_t count = 1;
	struct xkv_server_addr *s;

	for (const char *p = list; *p; p++)
		count += *p == ',';
	if (count > XKV_KETAMA_SERVERS_MAX) {
		*bad = XKV_KETAMA_SERVERS_MAX; /* the first one too many */
		return -EINVAL;
	}
	s = calloc(count, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		s[i].weight = 1;
		snprintf(s[i].port, sizeof(s[i].port), "%u", default_port);
		if (parse_one(list, len, &s[i])) {
			*bad = i;
			free(s);
			return -EINVAL;
		}
		list += len + 1;
	}
	*out = s;
	*n = count;
	return 0;
}

int xkv_servers_ketama(const struct xkv_server_addr *s, uint32_t n, struct xkv_ketama *k)
{
	struct xkv_ketama_server *ks = calloc(n ? n : 1, sizeof(*ks));
	int err;

	if (!ks)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ks[i] = (struct xkv_ketama_server){.name = s[i].name, .weight = s[i].weight};
	err = xkv_ketama_init(k, ks, n);
	free(ks);
	return err;
}
