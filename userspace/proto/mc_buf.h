/* SPDX-License-Identifier: MIT */
/* memcached's replies, as a session appends them for its connection to send. */
#ifndef XKV_MC_BUF_H
#define XKV_MC_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* A growable output buffer: the replies, in order, for the connection to send. */
struct xkv_mc_buf {
	char *data;
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed: the replies are incomplete, close */
};

/* Room for n more bytes at data + len (len unchanged), or NULL with failed set. */
char *xkv_mc_buf_reserve(struct xkv_mc_buf *b, size_t n);
void xkv_mc_buf_append(struct xkv_mc_buf *b, const void *p, size_t n);
void xkv_mc_buf_free(struct xkv_mc_buf *b);

#endif /* XKV_MC_BUF_H */
