/* SPDX-License-Identifier: MIT */
/*
 * Keys placed over several servers by ketama exactly as twemproxy (nutcracker) places
 * them with `distribution: ketama` and `hash: md5`: 160 points a server in proportion
 * to its weight, 4 from each md5 of "NAME-i", a key going to the first point at or
 * after the md5 of the key. So one pool serves xkv's clients and nutcracker alike.
 */
#ifndef XKV_CLIENT_KETAMA_H
#define XKV_CLIENT_KETAMA_H

#include <stddef.h>
#include <stdint.h>

#define XKV_KETAMA_SERVERS_MAX 256
#define XKV_KETAMA_NAME_MAX    81 /* "NAME-159" and its NUL in twemproxy's 86 bytes */

struct xkv_ketama_server {
	const char *name; /* twemproxy's: "HOST:PORT", or "HOST" on 11211, or as named */
	uint32_t weight;  /* 1 or more */
};

struct xkv_ketama_point;

struct xkv_ketama {
	struct xkv_ketama_point *points; /* sorted by value */
	uint32_t npoints;
};

/* The continuum of n servers (1..XKV_KETAMA_SERVERS_MAX): 0, -EINVAL or -ENOMEM. */
int xkv_ketama_init(struct xkv_ketama *k, const struct xkv_ketama_server *servers, uint32_t n);
void xkv_ketama_fini(struct xkv_ketama *k);

/* The index, in the list given to xkv_ketama_init, of the server that holds key. */
uint32_t xkv_ketama_place(const struct xkv_ketama *k, const void *key, size_t key_len);

#endif /* XKV_CLIENT_KETAMA_H */
