// SPDX-License-Identifier: MIT
/* memcached's write commands on the partition's writer, as memcached 1.6 answers them. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/proto.h>
#include "engine/mc_exec.h"

uint32_t xkv_mc_exptime(const struct xkv_store *s, int64_t exptime)
{
	return xkv_mc_exptime_at(xkv_store_now(s), exptime);
}

/* A write on its way through the store: the request, its key's hash, its exptime read. */
struct mc_run {
	struct xkv_store *s;
	const struct xkv_msg *m;
	const struct xkv_mc_cmd *cmd;
	uint64_t hash;
	uint32_t exptime; /* absolute, the store's clock */
};

/* The item's meta, its value into buf when cap allows: 0, -ENOENT or -ENOBUFS. */
static int item_read(const struct mc_run *w, void *buf, size_t cap, uint32_t *len,
		     struct xkv_item_meta *meta)
{
	return xkv_store_get_meta(w->s, w->m->key, w->m->key_len, w->hash, buf, cap, len, meta);
}

static enum xkv_mc_status store_error(int err)
{
	return err == -E2BIG ? XKV_MC_TOO_LARGE : XKV_MC_NO_MEMORY;
}

/* Stores value under w's key with flags and exptime; r says how it went. */
static void store(const struct mc_run *w, const void *value, uint32_t len, uint32_t flags,
		  uint32_t exptime, struct xkv_mc_result *r)
{
	struct xkv_item_meta meta = {.flags = flags, .exptime = exptime};
	int err = xkv_store_put_meta(w->s, w->m->key, w->m->key_len, w->hash, value, len, &meta);

	if (err) {
		r->status = store_error(err);
		return;
	}
	r->status = XKV_MC_STORED;
	r->cas = meta.cas;
	r->flags = flags;
	r->exptime = exptime;
}

/*
 * memcached's safe_strtoull on a value, which in memcached ends in "\r\n": leading
 * blanks and a sign pass, anything but a blank after the digits fails, and so does a
 * minus sign on a number too large for a signed 64-bit one.
 */
static bool value_number(char *text, uint32_t len, uint64_t *out)
{
	unsigned long long n;
	char *end;

	memcpy(text + len, "\r\n", 3);
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno == ERANGE || end == text || !(*end == ' ' || (*end >= '\t' && *end <= '\r')))
		return false;
	if ((long long)n < 0 && memchr(text, '-', (size_t)(end - text)))
		return false;
	*out = n;
	return true;
}

/*
 * incr and decr, as memcached's do_add_delta: a result no longer than the old value
 * is padded with spaces to its length (memcached rewrites it in place), a longer one
 * is a new value; flags and exptime stay. A miss vivifies with opts XKV_MC_VIVIFY.
 */
static void arithmetic(const struct mc_run *w, char *scratch, struct xkv_mc_result *r)
{
	const struct xkv_mc_cmd *cmd = w->cmd;
	struct xkv_item_meta meta;
	uint32_t len, new_len, exptime;
	uint64_t n;
	int err;

	/* room for the "\r\n" and the NUL that value_number adds */
	err = item_read(w, scratch, XKV_VALUE_MAX - 3, &len, &meta);
	if (err == -ENOENT && (cmd->opts & XKV_MC_VIVIFY)) {
		len = (uint32_t)sprintf(scratch, "%" PRIu64, cmd->initial);
		store(w, scratch, len, 0, xkv_mc_exptime(w->s, cmd->vivify_exptime), r);
		if (r->status == XKV_MC_STORED) {
			r->status = XKV_MC_NUMBER;
			r->number = cmd->initial;
		}
		return;
	}
	if (err == -ENOENT) {
		r->status = XKV_MC_NOT_FOUND;
		return;
	}
	if (cmd->cas && meta.cas != cmd->cas) {
		r->status = XKV_MC_EXISTS;
		return;
	}
	if (err == -ENOBUFS || len == 0 || !value_number(scratch, len, &n)) {
		r->status = XKV_MC_NON_NUMERIC;
		return;
	}
	if (cmd->op == XKV_MC_INCR)
		n += cmd->delta;
	else
		n = cmd->delta > n ? 0 : n - cmd->delta;
	new_len = (uint32_t)sprintf(scratch, "%" PRIu64, n);
	if (new_len < len) {
		memset(scratch + new_len, ' ', len - new_len);
		new_len = len;
	}
	exptime = cmd->opts & XKV_MC_NEW_TTL ? w->exptime : meta.exptime;
	store(w, scratch, new_len, meta.flags, exptime, r);
	if (r->status == XKV_MC_STORED) {
		r->status = XKV_MC_NUMBER;
		r->number = n;
	}
}

/* append and prepend: the old value and the new in scratch, under the old flags and exptime. */
static void concatenate(const struct mc_run *w, uint8_t *scratch, struct xkv_mc_result *r)
{
	bool append = w->cmd->op == XKV_MC_APPEND;
	uint32_t value_len = w->m->value_len, len;
	struct xkv_item_meta meta;
	int err;

	err = item_read(w, scratch + (append ? 0 : value_len), XKV_VALUE_MAX - value_len, &len,
			&meta);
	if (err == -ENOENT) {
		r->status = XKV_MC_NOT_STORED;
		return;
	}
	if (w->cmd->cas && meta.cas != w->cmd->cas) {
		r->status = XKV_MC_EXISTS;
		return;
	}
	if (err == -ENOBUFS) {
		r->status = XKV_MC_TOO_LARGE;
		return;
	}
	memcpy(scratch + (append ? len : 0), w->m->frag, value_len);
	store(w, scratch, len + value_len, meta.flags, meta.exptime, r);
}

void xkv_mc_apply(struct xkv_store *s, const struct xkv_msg *m, uint64_t hash, void *scratch,
		  struct xkv_mc_result *r)
{
	const struct xkv_mc_cmd *cmd = &m->mc.cmd;
	const struct mc_run w = {.s = s, .m = m, .cmd = cmd, .hash = hash,
				 .exptime = xkv_mc_exptime(s, cmd->exptime)};
	struct xkv_item_meta meta;
	uint32_t len;
	int err;

	memset(r, 0, sizeof(*r));
	switch (cmd->op) {
	case XKV_MC_APPEND:
	case XKV_MC_PREPEND:
		if (m->value_len > XKV_VALUE_MAX) {
			r->status = XKV_MC_TOO_LARGE;
			return;
		}
		concatenate(&w, scratch, r);
		return;
	case XKV_MC_INCR:
	case XKV_MC_DECR:
		arithmetic(&w, scratch, r);
		return;
	case XKV_MC_TOUCH:
		if (xkv_store_touch(s, m->key, m->key_len, hash, w.exptime, &meta)) {
			r->status = XKV_MC_NOT_FOUND;
			return;
		}
		r->status = XKV_MC_TOUCHED;
		r->cas = meta.cas;
		r->flags = meta.flags;
		r->exptime = meta.exptime;
		return;
	default:
		break;
	}

	/* the others ask only whether the key is there, and at which CAS */
	err = item_read(&w, scratch, 0, &len, &meta);
	if (err == -ENOENT) {
		if (cmd->op == XKV_MC_DELETE || cmd->op == XKV_MC_CAS || cmd->cas) {
			r->status = XKV_MC_NOT_FOUND;
			return;
		}
		if (cmd->op == XKV_MC_REPLACE) {
			r->status = XKV_MC_NOT_STORED;
			return;
		}
	} else {
		if ((cmd->op == XKV_MC_CAS || cmd->cas) && meta.cas != cmd->cas) {
			r->status = XKV_MC_EXISTS;
			return;
		}
		if (cmd->op == XKV_MC_ADD) {
			r->status = XKV_MC_NOT_STORED;
			return;
		}
	}
	if (cmd->op == XKV_MC_DELETE) {
		xkv_store_delete(s, m->key, m->key_len, hash);
		r->status = XKV_MC_DELETED;
		return;
	}
	store(&w, m->frag, m->value_len, cmd->flags, w.exptime, r);
}
