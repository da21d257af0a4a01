// SPDX-License-Identifier: MIT
/*
 * memcached's text protocol: framing of lines and data blocks, the session's waiting
 * for writes, and the classic commands, each reply as memcached 1.6.18 gives it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>
#include <xkv/memcached.h>
#include <xkv/proto.h>
#include "proto/mc_session.h"

/*
 * memcached closes a connection whose first 2048 bytes hold no newline, unless the
 * line is a get (a long multiget); we bound that one at what a value may be.
 */
#define MC_LINE_MAX	2048
#define MC_GET_LINE_MAX XKV_VALUE_MAX

/* The last token is "noreply": memcached's set_noreply_maybe. */
static bool noreply(const struct mc_line *l)
{
	return l->ntok > 1 && mc_tok_is(&l->tok[l->ntok - 1], "noreply");
}

static void reply_unless(struct mc_ctx *c, bool quiet, const char *text)
{
	if (!quiet)
		mc_reply(c->out, text);
}

static const char *const status_text[] = {
	[XKV_MC_STORED] = "STORED",
	[XKV_MC_NOT_STORED] = "NOT_STORED",
	[XKV_MC_EXISTS] = "EXISTS",
	[XKV_MC_NOT_FOUND] = "NOT_FOUND",
	[XKV_MC_DELETED] = "DELETED",
	[XKV_MC_TOUCHED] = "TOUCHED",
	[XKV_MC_NON_NUMERIC] = "CLIENT_ERROR cannot increment or decrement non-numeric value",
	[XKV_MC_NO_MEMORY] = "SERVER_ERROR out of memory storing object",
	[XKV_MC_TOO_LARGE] = "SERVER_ERROR object too large for cache",
};

/* A text command's reply to its write: the status line, or incr's number. */
static void reply_result(struct mc_ctx *c, bool quiet, const struct xkv_mc_result *r)
{
	if (quiet)
		return;
	if (r->status == XKV_MC_NUMBER)
		mc_printf(c->out, "%" PRIu64 "\r\n", r->number);
	else
		mc_reply(c->out, status_text[r->status]);
}

/* Runs w and replies now, or when it completes (resume calls the command again). */
static void write_and_reply(struct mc_ctx *c, bool quiet, const struct xkv_msg *w)
{
	struct xkv_mc_result r;

	if (mc_write(c, w, &r))
		reply_result(c, quiet, &r);
}

/*
 * A write command with its arguments checked: on resume, its reply from done; else a
 * key over 250 bytes is an error. True: build the write.
 */
static bool write_start(struct mc_ctx *c, bool quiet)
{
	if (c->done) {
		reply_result(c, quiet, c->done);
		return false;
	}
	if (c->line->tok[1].len > MC_KEY_MAX) {
		reply_unless(c, quiet, "CLIENT_ERROR bad command line format");
		return false;
	}
	return true;
}

/* A refused value: its bytes and "\r\n" are skipped whatever they are, as memcached's swallow. */
static int swallow(struct mc_ctx *c, int32_t vlen)
{
	c->s->swallow = (uint64_t)vlen + 2;
	return 0;
}

/*
 * set, add, replace, append, prepend, cas:
 * "<cmd> <key> <flags> <exptime> <bytes> [<cas>] [noreply]"
 */
static int cmd_update(struct mc_ctx *c, enum xkv_mc_op op)
{
	const struct mc_line *l = c->line;
	bool is_cas = op == XKV_MC_CAS, quiet = noreply(l);
	uint32_t base = is_cas ? 6 : 5;
	struct xkv_msg w;
	int32_t exptime, vlen;

	if (l->ntok != base && l->ntok != base + 1) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (c->done) {
		reply_result(c, quiet, c->done);
		return 0;
	}
	w = mc_write_msg(op, &l->tok[1]);
	if (l->tok[1].len > MC_KEY_MAX || !mc_tok_u32(&l->tok[2], &w.mc.cmd.flags) ||
	    !mc_tok_i32(&l->tok[3], &exptime) || !mc_tok_i32(&l->tok[4], &vlen) ||
	    (is_cas && !mc_tok_u64(&l->tok[5], &w.mc.cmd.cas)) || vlen < 0) {
		reply_unless(c, quiet, "CLIENT_ERROR bad command line format");
		return 0;
	}
	if ((uint32_t)vlen > XKV_VALUE_MAX) {
		reply_unless(c, quiet, "SERVER_ERROR object too large for cache");
		/* memcached unlinks the old value rather than leave it stale */
		if (op == XKV_MC_SET) {
			struct xkv_msg del = mc_write_msg(XKV_MC_DELETE, &l->tok[1]);
			struct xkv_mc_result r;

			/* its reply is the error above: resume has nothing to add */
			c->line = NULL;
			mc_write(c, &del, &r);
		}
		return swallow(c, vlen);
	}
	if (c->avail < (size_t)vlen + 2)
		return MC_NEED_MORE;
	if (memcmp(c->data + vlen, "\r\n", 2) != 0) {
		reply_unless(c, quiet, "CLIENT_ERROR bad data chunk");
		return vlen + 2;
	}
	w.mc.cmd.exptime = exptime;
	mc_write_value(&w, c->data, (uint32_t)vlen);
	write_and_reply(c, quiet, &w);
	return vlen + 2;
}

/* "delete <key> [0] [noreply]" */
static int cmd_delete(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	bool quiet = noreply(l);
	struct xkv_msg w;

	if (l->ntok < 2 || l->ntok > 4) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (l->ntok > 2) {
		bool hold_zero = mc_tok_is(&l->tok[2], "0");

		if (!(l->ntok == 3 ? hold_zero || quiet : hold_zero && quiet)) {
			reply_unless(c, quiet, "CLIENT_ERROR bad command line format.  "
					       "Usage: delete <key> [noreply]");
			return 0;
		}
	}
	if (!write_start(c, quiet))
		return 0;
	w = mc_write_msg(XKV_MC_DELETE, &l->tok[1]);
	write_and_reply(c, quiet, &w);
	return 0;
}

/* "incr|decr <key> <delta> [noreply]", "touch <key> <exptime> [noreply]" */
static int cmd_key_arg(struct mc_ctx *c, enum xkv_mc_op op)
{
	const struct mc_line *l = c->line;
	bool quiet = noreply(l);
	struct xkv_msg w;
	int32_t exptime;

	if (l->ntok != 3 && l->ntok != 4) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (!write_start(c, quiet))
		return 0;
	w = mc_write_msg(op, &l->tok[1]);
	if (op == XKV_MC_TOUCH) {
		if (!mc_tok_i32(&l->tok[2], &exptime)) {
			reply_unless(c, quiet, "CLIENT_ERROR invalid exptime argument");
			return 0;
		}
		w.mc.cmd.exptime = exptime;
	} else if (!mc_tok_u64(&l->tok[2], &w.mc.cmd.delta)) {
		reply_unless(c, quiet, "CLIENT_ERROR invalid numeric delta argument");
		return 0;
	}
	write_and_reply(c, quiet, &w);
	return 0;
}

#define VALUE_ROOM 320 /* "VALUE <250-byte key> <flags> <bytes> <cas>\r\n" fits */

/* One key's "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\n", or nothing on a miss. */
static void get_one(struct mc_ctx *c, const struct mc_tok *key, bool cas)
{
	struct xkv_item_meta meta;
	uint32_t len;
	char hdr[VALUE_ROOM];
	int n;

	if (mc_read(c, key->p, key->len, VALUE_ROOM, &len, &meta))
		return;
	n = snprintf(hdr, sizeof(hdr), "VALUE %.*s %u %u", (int)key->len, key->p, meta.flags, len);
	if (cas)
		n += snprintf(hdr + n, sizeof(hdr) - n, " %" PRIu64, meta.cas);
	memcpy(hdr + n, "\r\n", 2);
	mc_put_value(c->out, hdr, (size_t)n + 2, VALUE_ROOM, len);
}

/*
 * get, gets, and gat, gats, which touch each key first (a write, perhaps in progress:
 * resume comes back here with the key's result and goes on with the next key).
 */
static int cmd_get(struct mc_ctx *c, bool cas, bool touch)
{
	struct xkv_mc_session *s = c->s;
	const struct mc_line *l = c->line;
	const char *keys = l->ntok > 1 ? l->tok[1].p : NULL, *p, *end = l->p + l->len;
	uint32_t index = 0;
	struct mc_tok key;
	int32_t exptime = 0;

	if (l->ntok < 2) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (touch) {
		/* there is one: ntok counted it */
		if (!mc_next_token(&keys, end, &key) || !mc_tok_i32(&key, &exptime)) {
			mc_reply(c->out, "CLIENT_ERROR invalid exptime argument");
			return 0;
		}
	}
	/* memcached answers a key too long with the error alone: check them all first */
	for (p = keys; mc_next_token(&p, end, &key);) {
		if (key.len > MC_KEY_MAX) {
			mc_reply(c->out, "CLIENT_ERROR bad command line format");
			return 0;
		}
	}
	for (p = keys; mc_next_token(&p, end, &key); index++) {
		const struct xkv_mc_result *touched = c->done;
		struct xkv_mc_result r;

		if (c->done && index < s->key_index)
			continue;
		if (touch && !(c->done && index == s->key_index)) {
			struct xkv_msg w = mc_write_msg(XKV_MC_TOUCH, &key);

			w.mc.cmd.exptime = exptime;
			if (!mc_write(c, &w, &r)) {
				s->key_index = index;
				return 0;
			}
			touched = &r;
		}
		if (!touch || touched->status == XKV_MC_TOUCHED)
			get_one(c, &key, cas);
	}
	mc_reply(c->out, "END");
	return 0;
}

/* "flush_all [delay] [noreply]": at once, or once the delay has passed (the backend's). */
static int cmd_flush_all(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	const struct xkv_mc_backend *b = c->s->backend;
	bool quiet = noreply(l);
	int32_t delay = 0;

	if (l->ntok > 3) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (l->ntok == (quiet ? 3u : 2u) && !mc_tok_i32(&l->tok[1], &delay)) {
		reply_unless(c, quiet, "CLIENT_ERROR invalid exptime argument");
		return 0;
	}
	b->flush(b->ctx, delay);
	reply_unless(c, quiet, "OK");
	return 0;
}

/* "verbosity <level> [noreply]": accepted, as there is no log to make louder. */
static int cmd_verbosity(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	uint32_t level;

	if (l->ntok != 2 && l->ntok != 3) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (!mc_tok_u32(&l->tok[1], &level)) {
		reply_unless(c, noreply(l), "CLIENT_ERROR bad command line format");
		return 0;
	}
	reply_unless(c, noreply(l), "OK");
	return 0;
}

/*
 * "refresh_certs [noreply]", as memcached 1.6.18 answers: OK (or nothing with noreply),
 * else a line saying why, noreply or not.
 */
static int cmd_refresh_certs(struct mc_ctx *c)
{
	const struct xkv_mc_backend *b = c->s->backend;
	char why[384], line[sizeof(why) + 40];
	int err = b->refresh_certs ? b->refresh_certs(b->ctx, why, sizeof(why)) : -ENOTSUP;

	if (!err) {
		reply_unless(c, noreply(c->line), "OK");
		return 0;
	}
	if (err == -ENOTSUP) {
		mc_reply(c->out, "Error TLS not enabled");
		return 0;
	}
	/* one line, whatever a file's name holds */
	for (char *p = why; *p; p++)
		if (*p == '\r' || *p == '\n')
			*p = ' ';
	snprintf(line, sizeof(line), "Error refreshing the certificates: %s", why);
	mc_reply(c->out, line);
	return 0;
}

/*
 * "cache_memlimit <megabytes> [noreply]", answered as memcached 1.6.18 answers: its
 * number read as memcached reads it (safe_strtoul into 32 bits: a larger one wraps), at
 * least 8 MiB and at most 10^9; a limit the backend cannot take is an adjustment that
 * failed.
 */
static int cmd_cache_memlimit(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	const struct xkv_mc_backend *b = c->s->backend;
	bool quiet = noreply(l);
	uint32_t mib;

	if (l->ntok != 2 && l->ntok != 3) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (!mc_tok_u32(&l->tok[1], &mib)) {
		reply_unless(c, quiet, "ERROR");
		return 0;
	}
	if (mib < 8)
		reply_unless(c, quiet, "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m");
	else if (mib > 1000000000)
		reply_unless(c, quiet, "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes");
	else if (!b->memlimit || b->memlimit(b->ctx, (size_t)mib << 20))
		reply_unless(c, quiet, "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust");
	else
		reply_unless(c, quiet, "OK");
	return 0;
}

/*
 * "stats [group ...]", as memcached 1.6.18 answers the groups xkv has (docs/MEMCACHED.md),
 * by the group's word alone, as memcached reads it: the general counters, "settings",
 * "reset" (RESET), "sizes" (off, as memcached's is by default), "detail dump" (nothing
 * recorded) and "detail off". "detail on" would record per-prefix counters xkv does not
 * keep: refused, saying so. Any other group answers as memcached answers one it does
 * not know.
 */
static int cmd_stats(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	const struct xkv_mc_backend *b = c->s->backend;
	const struct mc_tok *group = &l->tok[1], *arg = &l->tok[2];

	if (l->ntok > 1 && mc_tok_is(group, "reset")) {
		if (b->stats_reset)
			b->stats_reset(b->ctx);
		mc_reply(c->out, "RESET");
		return 0;
	}
	if (l->ntok > 1 && mc_tok_is(group, "detail")) {
		if (l->ntok > 2 && mc_tok_is(arg, "off"))
			mc_reply(c->out, "OK");
		else if (l->ntok > 2 && mc_tok_is(arg, "on"))
			mc_reply(c->out, "CLIENT_ERROR stats detail on is not supported");
		else if (l->ntok > 2 && mc_tok_is(arg, "dump"))
			mc_reply(c->out, "END");
		else
			mc_reply(c->out, "CLIENT_ERROR usage: stats detail on|off|dump");
		return 0;
	}
	if (mc_stats_group(b, l->ntok > 1 ? group : NULL, c->out))
		mc_reply(c->out, "END");
	else
		mc_reply(c->out, "ERROR");
	return 0;
}

/* One command, its line in c->line: the data bytes it consumed, or MC_NEED_MORE. */
static int dispatch(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	const struct mc_tok *cmd = &l->tok[0];
	static const struct {
		const char *name;
		enum xkv_mc_op op;
	} updates[] = {
		{"set", XKV_MC_SET},	 {"add", XKV_MC_ADD},	      {"replace", XKV_MC_REPLACE},
		{"append", XKV_MC_APPEND}, {"prepend", XKV_MC_PREPEND}, {"cas", XKV_MC_CAS},
	};

	if (l->ntok == 0) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (mc_tok_is(cmd, "get") || mc_tok_is(cmd, "gets"))
		return cmd_get(c, cmd->len == 4, false);
	if (mc_tok_is(cmd, "gat") || mc_tok_is(cmd, "gats"))
		return cmd_get(c, cmd->len == 4, true);
	for (size_t i = 0; i < sizeof(updates) / sizeof(updates[0]); i++)
		if (mc_tok_is(cmd, updates[i].name))
			return cmd_update(c, updates[i].op);
	if (mc_tok_is(cmd, "delete"))
		return cmd_delete(c);
	if (mc_tok_is(cmd, "incr"))
		return cmd_key_arg(c, XKV_MC_INCR);
	if (mc_tok_is(cmd, "decr"))
		return cmd_key_arg(c, XKV_MC_DECR);
	if (mc_tok_is(cmd, "touch"))
		return cmd_key_arg(c, XKV_MC_TOUCH);
	if (cmd->len == 2 && cmd->p[0] == 'm')
		return mc_meta(c);
	if (mc_tok_is(cmd, "stats"))
		return cmd_stats(c);
	/* an HTTP request, say a browser pointed at the port: memcached hangs up */
	if (l->tok[l->ntok - 1].len >= 5 && memcmp(l->tok[l->ntok - 1].p, "HTTP/", 5) == 0) {
		*c->close = true;
		return 0;
	}
	if (mc_tok_is(cmd, "flush_all"))
		return cmd_flush_all(c);
	if (mc_tok_is(cmd, "version")) {
		mc_reply(c->out, "VERSION " XKV_MC_VERSION);
		return 0;
	}
	if (mc_tok_is(cmd, "verbosity"))
		return cmd_verbosity(c);
	if (mc_tok_is(cmd, "cache_memlimit"))
		return cmd_cache_memlimit(c);
	if (mc_tok_is(cmd, "refresh_certs"))
		return cmd_refresh_certs(c);
	if (mc_tok_is(cmd, "quit")) {
		*c->close = true;
		return 0;
	}
	mc_reply(c->out, "ERROR");
	return 0;
}

static void line_cut(struct mc_line *l, const char *p, size_t len)
{
	const char *q = p, *end = p + len;

	l->p = p;
	l->len = len;
	l->ntok = 0;
	while (l->ntok < MC_TOKENS_MAX && mc_next_token(&q, end, &l->tok[l->ntok]))
		l->ntok++;
}

/* No newline in len bytes: wait for more, unless memcached would hang up by now. */
static bool line_too_long(const char *in, size_t len)
{
	size_t spaces = 0;

	if (len <= MC_LINE_MAX)
		return false;
	while (spaces < len && in[spaces] == ' ')
		spaces++;
	if (spaces > 100 || len > MC_GET_LINE_MAX)
		return true;
	return !(len - spaces >= 4 && memcmp(in + spaces, "get ", 4) == 0) &&
	       !(len - spaces >= 5 && memcmp(in + spaces, "gets ", 5) == 0);
}

void xkv_mc_session_init(struct xkv_mc_session *s, const struct xkv_mc_backend *backend)
{
	memset(s, 0, sizeof(*s));
	s->backend = backend;
}

void xkv_mc_session_free(struct xkv_mc_session *s)
{
	free(s->line);
	memset(s, 0, sizeof(*s));
}

size_t xkv_mc_session_feed(struct xkv_mc_session *s, const char *in, size_t len,
			   struct xkv_mc_buf *out, bool *close)
{
	size_t done = 0;

	*close = false;
	if (!s->negotiated && len) {
		s->negotiated = true;
		s->binary = (uint8_t)in[0] == XKV_MC_BIN_REQUEST;
	}
	if (s->binary)
		return mc_binary_feed(s, in, len, out, close);
	while (!s->waiting && !*close && !out->failed && done < len) {
		const char *p = in + done, *nl;
		struct mc_line line;
		struct mc_ctx c = {.s = s, .line = &line, .out = out, .close = close};
		size_t line_len, used, reply_from;
		int data;

		if (s->swallow) {
			size_t n = s->swallow < len - done ? s->swallow : len - done;

			s->swallow -= n;
			done += n;
			continue;
		}
		nl = memchr(p, '\n', len - done);
		if (!nl) {
			*close = line_too_long(p, len - done);
			break;
		}
		used = (size_t)(nl - p) + 1;
		line_len = nl - p > 0 && nl[-1] == '\r' ? used - 2 : used - 1;
		line_cut(&line, p, line_len);
		c.data = p + used;
		c.avail = len - done - used;
		reply_from = out->len;
		data = dispatch(&c);
		if (data == MC_NEED_MORE) {
			/* a command whose data has not all arrived: nothing of it is done yet */
			break;
		}
		done += used + (size_t)data;
		if (!s->waiting && s->backend->answered)
			s->backend->answered(s->backend->ctx, (size_t)data + out->len - reply_from);
	}
	if (out->failed)
		*close = true;
	return done;
}

void xkv_mc_session_resume(struct xkv_mc_session *s, const struct xkv_mc_result *r,
			   struct xkv_mc_buf *out)
{
	struct mc_line line;
	bool close = false;
	struct mc_ctx c = {.s = s, .line = &line, .out = out, .done = r, .close = &close};
	size_t reply_from = out->len;

	if (s->binary) {
		mc_binary_resume(s, r, out);
		return;
	}
	s->waiting = false;
	if (!s->line_len) /* a write whose reply was given already (a set too large) */
		return;
	line_cut(&line, s->line, s->line_len);
	s->line_len = 0;
	dispatch(&c);
	if (!s->waiting && s->backend->answered)
		s->backend->answered(s->backend->ctx, out->len - reply_from);
	/* gat's next touch went in progress: the line is still needed */
	if (s->waiting)
		s->line_len = line.len;
}
