// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "proto/mc_buf.h"

char *xkv_mc_buf_reserve(struct xkv_mc_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *data;

		while (cap - b->len < n)
			cap *= 2;
		data = realloc(b->data, cap);
		if (!data) {
			b->failed = true;
			return NULL;
		}
		b->data = data;
		b->cap = cap;
	}
	return b->data + b->len;
}

void xkv_mc_buf_append(struct xkv_mc_buf *b, const void *p, size_t n)
{
	char *dst = xkv_mc_buf_reserve(b, n);

	if (!dst)
		return;
	memcpy(dst, p, n);
	b->len += n;
}

void xkv_mc_buf_free(struct xkv_mc_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
