// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "engine/compact.h"

struct xkv_compact *xkv_compact_create(uint32_t slo)
{
	struct xkv_compact *c = calloc(1, sizeof(*c));

	if (c)
		c->slo = slo < 2 ? 2 : slo;
	return c;
}

void xkv_compact_destroy(struct xkv_compact *c)
{
	free(c);
}

bool xkv_compact_fits(const struct xkv_msg *req)
{
	/* a directory's writes apply by version, not by arrival: not compacted (yet) */
	return req->op == XKV_OP_PUT && req->frag_offset == 0 && req->frag_len == req->value_len &&
	       req->value_len <= XKV_COMPACT_VALUE_MAX && !xkv_msg_steered(req);
}

static bool same_key(const struct xkv_compact_window *win, uint64_t hash,
		     const struct xkv_msg *req)
{
	return win->nputs && win->hash == hash && win->key_len == req->key_len &&
	       !memcmp(win->key, req->key, req->key_len);
}

struct xkv_compact_window *xkv_compact_find(struct xkv_compact *c, uint64_t hash,
					    const struct xkv_msg *req)
{
	if (!c->nopen)
		return NULL;
	for (unsigned i = 0; i < XKV_COMPACT_WINDOWS; i++)
		if (same_key(&c->windows[i], hash, req))
			return &c->windows[i];
	return NULL;
}

static void first_deadline(struct xkv_compact *c)
{
	c->first_ns = UINT64_MAX;
	for (unsigned i = 0; i < XKV_COMPACT_WINDOWS; i++)
		if (c->windows[i].nputs && c->windows[i].deadline_ns < c->first_ns)
			c->first_ns = c->windows[i].deadline_ns;
}

struct xkv_compact_window *xkv_compact_open(struct xkv_compact *c, uint64_t hash,
					    const struct xkv_msg *req, uint64_t now_ns,
					    uint64_t service_ns)
{
	struct xkv_compact_window *win = NULL;

	for (unsigned i = 0; i < XKV_COMPACT_WINDOWS && !win; i++)
		if (!c->windows[i].nputs)
			win = &c->windows[i];
	if (!win)
		return NULL;
	win->hash = hash;
	win->deadline_ns = now_ns + service_ns * (c->slo - 1);
	win->key_len = req->key_len;
	memcpy(win->key, req->key, req->key_len);
	if (!c->nopen++ || win->deadline_ns < c->first_ns)
		c->first_ns = win->deadline_ns;
	return win;
}

bool xkv_compact_hold(struct xkv_compact_window *win, const struct xkv_msg *req,
		      const struct xkv_origin *from, uint64_t now_ns)
{
	struct xkv_compact_put *put = &win->puts[win->nputs++];

	/* last wins: the PUTs before it are answered as if each was overwritten at once */
	memcpy(win->value, req->frag, req->value_len);
	win->value_len = req->value_len;
	*put = (struct xkv_compact_put){
		.from = *from,
		.request_id = req->request_id,
		.timestamp = req->timestamp,
		.mc = req->mc,
		.held_ns = now_ns,
	};
	return win->nputs == XKV_COMPACT_WRITES;
}

struct xkv_msg xkv_compact_request(const struct xkv_compact_window *win, uint32_t i)
{
	return (struct xkv_msg){
		.op = XKV_OP_PUT,
		.key_len = win->key_len,
		.request_id = win->puts[i].request_id,
		.value_len = win->value_len,
		.frag_len = win->value_len,
		.timestamp = win->puts[i].timestamp,
		.key = win->key,
		.frag = win->value,
		.mc = win->puts[i].mc,
	};
}

struct xkv_msg xkv_compact_final(const struct xkv_compact_window *win)
{
	return xkv_compact_request(win, win->nputs - 1);
}

void xkv_compact_free(struct xkv_compact *c, struct xkv_compact_window *win)
{
	win->nputs = 0;
	c->nopen--;
	first_deadline(c);
}

struct xkv_compact_window *xkv_compact_due(struct xkv_compact *c, uint64_t now_ns)
{
	if (!c->nopen || now_ns < c->first_ns)
		return NULL;
	for (unsigned i = 0; i < XKV_COMPACT_WINDOWS; i++)
		if (c->windows[i].nputs && c->windows[i].deadline_ns <= now_ns)
			return &c->windows[i];
	return NULL;
}

struct xkv_compact_window *xkv_compact_any(struct xkv_compact *c)
{
	for (unsigned i = 0; c->nopen && i < XKV_COMPACT_WINDOWS; i++)
		if (c->windows[i].nputs)
			return &c->windows[i];
	return NULL;
}
