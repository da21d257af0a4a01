// SPDX-License-Identifier: MIT
/*
 * What the text, meta and binary commands share: tokens, replies, reads, writes that
 * wait, the stats groups.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>
#include "proto/mc_session.h"

void mc_reply(struct xkv_mc_buf *out, const char *text)
{
	xkv_mc_buf_append(out, text, strlen(text));
	xkv_mc_buf_append(out, "\r\n", 2);
}

void mc_printf(struct xkv_mc_buf *out, const char *fmt, ...)
{
	char piece[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(piece, sizeof(piece), fmt, ap);
	va_end(ap);
	xkv_mc_buf_append(out, piece, (size_t)n < sizeof(piece) ? (size_t)n : sizeof(piece) - 1);
}

bool mc_next_token(const char **p, const char *end, struct mc_tok *t)
{
	const char *q = *p;

	while (q < end && *q == ' ')
		q++;
	if (q == end)
		return false;
	t->p = q;
	while (q < end && *q != ' ')
		q++;
	t->len = (uint32_t)(q - t->p);
	*p = q;
	return true;
}

bool mc_tok_is(const struct mc_tok *t, const char *word)
{
	return t->len == strlen(word) && memcmp(t->p, word, t->len) == 0;
}

struct xkv_msg mc_write_msg(enum xkv_mc_op op, const struct mc_tok *key)
{
	return (struct xkv_msg){
		.op = op == XKV_MC_DELETE ? XKV_OP_DELETE : XKV_OP_PUT,
		.key = key->p,
		.key_len = (uint16_t)key->len,
		.mc = {.dialect = XKV_DIALECT_MC_TCP, .cmd = {.op = op}},
	};
}

void mc_write_value(struct xkv_msg *w, const void *value, uint32_t len)
{
	w->frag = value;
	w->frag_len = len;
	w->value_len = len;
}

int64_t mc_ttl(struct mc_ctx *c, uint32_t exptime)
{
	const struct xkv_mc_backend *b = c->s->backend;

	return exptime ? (int64_t)exptime - b->now(b->ctx) : -1;
}

int mc_read(struct mc_ctx *c, const char *key, uint32_t key_len, size_t room, uint32_t *value_len,
	    struct xkv_item_meta *meta)
{
	const struct xkv_mc_backend *b = c->s->backend;
	uint64_t hash = xkv_hash(key, key_len);
	size_t want = 0;

	for (;;) {
		/* the value's "\r\n" after it */
		char *p = xkv_mc_buf_reserve(c->out, room + want + 2);
		int err;

		if (!p)
			return -ENOMEM;
		err = b->read(b->ctx, key, (uint16_t)key_len, hash, p + room,
			      c->out->cap - c->out->len - room - 2, value_len, meta);
		if (err != -ENOBUFS)
			return err;
		want = *value_len; /* it grew under us: try again with room for it */
	}
}

void mc_put_value(struct xkv_mc_buf *out, const char *hdr, size_t hdr_len, size_t room,
		  uint32_t value_len)
{
	char *p = out->data + out->len;

	memmove(p + hdr_len, p + room, value_len);
	memcpy(p, hdr, hdr_len);
	memcpy(p + hdr_len + value_len, "\r\n", 2);
	out->len += hdr_len + value_len + 2;
}

bool mc_write(struct mc_ctx *c, const struct xkv_msg *w, struct xkv_mc_result *r)
{
	struct xkv_mc_session *s = c->s;
	const struct mc_line *l = c->line;
	int err = s->backend->write(s->backend->ctx, w, xkv_hash(w->key, w->key_len), r);

	if (err != -EINPROGRESS) {
		if (err) /* a backend that could not take it: as memcached out of memory */
			*r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
		return true;
	}
	/* resume formats the reply from the line; it may be the saved line already (gat) */
	if (!l) {
		s->line_len = 0;
	} else if (l->p != s->line) {
		if (s->line_cap < l->len) {
			char *line = realloc(s->line, l->len);

			if (!line) { /* the reply will be lost: the connection must go */
				c->out->failed = true;
				return false;
			}
			s->line = line;
			s->line_cap = l->len;
		}
		memcpy(s->line, l->p, l->len);
		s->line_len = l->len;
	}
	s->waiting = true;
	return false;
}

bool mc_stats_group(const struct xkv_mc_backend *b, const struct mc_tok *group,
		    struct xkv_mc_buf *out)
{
	if (!group) {
		if (b->stats)
			b->stats(b->ctx, out);
	} else if (mc_tok_is(group, "settings")) {
		if (b->stats_settings)
			b->stats_settings(b->ctx, out);
	} else if (mc_tok_is(group, "sizes")) {
		mc_reply(out, "STAT sizes_status disabled");
	} else if (mc_tok_is(group, "items")) {
		if (b->stats_items)
			b->stats_items(b->ctx, out);
	} else if (mc_tok_is(group, "slabs")) {
		if (b->stats_slabs)
			b->stats_slabs(b->ctx, out);
	} else {
		return false;
	}
	return true;
}
