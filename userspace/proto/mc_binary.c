// SPDX-License-Identifier: MIT
/*
 * memcached's binary protocol: the response header and statuses (UDP and TCP), and a
 * TCP session's binary commands, each answered as memcached 1.6.18 (proto_bin.c)
 * answers it. docs/MEMCACHED.md, "The binary protocol over TCP", says where xkv differs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <xkv/proto.h>
#include "proto/mc_binary.h"
#include "proto/mc_session.h"

#define BIN_HDR		 sizeof(struct xkv_mc_bin_hdr)
#define BIN_HIT_EXTRAS	 4	    /* a hit's: its flags */
#define BIN_SET_EXTRAS	 8	    /* flags, expiration */
#define BIN_ARITH_EXTRAS 20	    /* delta, initial, expiration */
#define BIN_TOUCH_EXTRAS 4	    /* expiration */
#define BIN_NO_VIVIFY	 0xffffffffu /* incr, decr: this expiration leaves a miss a miss */

void xkv_mc_bin_hdr(uint8_t *p, const struct xkv_mc_req *req, uint16_t status,
		     uint16_t key_len, uint8_t extras_len, uint32_t body_len, uint64_t cas)
{
	const struct xkv_mc_bin_hdr h = {
		.magic = XKV_MC_BIN_RESPONSE,
		.opcode = req->opcode,
		.key_len = htons(key_len),
		.extras_len = extras_len,
		.status = htons(status),
		.body_len = htonl(body_len),
		.opaque = htonl(req->opaque),
		.cas = xkv_be64(cas),
	};

	memcpy(p, &h, sizeof(h));
}

const char *xkv_mc_bin_status_text(uint16_t status)
{
	switch (status) {
	case XKV_MC_BIN_S_NOT_FOUND:
		return "Not found";
	case XKV_MC_BIN_S_EXISTS:
		return "Data exists for key.";
	case XKV_MC_BIN_S_TOO_LARGE:
		return "Too large.";
	case XKV_MC_BIN_S_EINVAL:
		return "Invalid arguments";
	case XKV_MC_BIN_S_NOT_STORED:
		return "Not stored.";
	case XKV_MC_BIN_S_NON_NUMERIC:
		return "Non-numeric server-side value for incr or decr";
	case XKV_MC_BIN_S_UNKNOWN:
		return "Unknown command";
	case XKV_MC_BIN_S_NO_MEMORY:
		return "Out of memory";
	case XKV_MC_BIN_S_NOT_SUPPORTED:
		return "Not supported";
	case XKV_MC_BIN_S_INTERNAL:
		return "Reply too large";
	case XKV_MC_BIN_S_BUSY:
		return "Busy";
	default:
		return "";
	}
}

/* One request's header in host order; extras and key point into what arrived. */
struct bin_req {
	struct xkv_mc_req mc; /* its opcode as sent and its opaque, for the replies */
	uint8_t cmd;	      /* the opcode, a quiet one as its loud twin */
	bool quiet;
	uint8_t extras_len;
	uint16_t key_len;
	uint32_t body_len;
	uint64_t cas;
	const uint8_t *extras;
	const char *key;
};

/* A quiet opcode's loud twin, or 0xff for an opcode that is not quiet. */
static uint8_t loud_twin(uint8_t opcode)
{
	switch (opcode) {
	case XKV_MC_BIN_GETQ:
		return XKV_MC_BIN_GET;
	case XKV_MC_BIN_GETKQ:
		return XKV_MC_BIN_GETK;
	case XKV_MC_BIN_SETQ:
		return XKV_MC_BIN_SET;
	case XKV_MC_BIN_ADDQ:
		return XKV_MC_BIN_ADD;
	case XKV_MC_BIN_REPLACEQ:
		return XKV_MC_BIN_REPLACE;
	case XKV_MC_BIN_DELETEQ:
		return XKV_MC_BIN_DELETE;
	case XKV_MC_BIN_INCREMENTQ:
		return XKV_MC_BIN_INCREMENT;
	case XKV_MC_BIN_DECREMENTQ:
		return XKV_MC_BIN_DECREMENT;
	case XKV_MC_BIN_QUITQ:
		return XKV_MC_BIN_QUIT;
	case XKV_MC_BIN_FLUSHQ:
		return XKV_MC_BIN_FLUSH;
	case XKV_MC_BIN_APPENDQ:
		return XKV_MC_BIN_APPEND;
	case XKV_MC_BIN_PREPENDQ:
		return XKV_MC_BIN_PREPEND;
	case XKV_MC_BIN_GATQ:
		return XKV_MC_BIN_GAT;
	case XKV_MC_BIN_GATKQ:
		return XKV_MC_BIN_GATK;
	default:
		return 0xff;
	}
}

/* The request whose 24-byte header is at p, its extras and key after it. */
static void req_read(struct bin_req *r, const uint8_t *p)
{
	struct xkv_mc_bin_hdr h;
	uint8_t loud;

	memcpy(&h, p, sizeof(h));
	loud = loud_twin(h.opcode);
	*r = (struct bin_req){
		.mc = {.dialect = XKV_DIALECT_MC_BINARY, .opcode = h.opcode, .opaque = ntohl(h.opaque)},
		.cmd = loud == 0xff ? h.opcode : loud,
		.quiet = loud != 0xff,
		.extras_len = h.extras_len,
		.key_len = ntohs(h.key_len),
		.body_len = ntohl(h.body_len),
		.cas = xkv_be64(h.cas),
		.extras = p + BIN_HDR,
		.key = (const char *)p + BIN_HDR + h.extras_len,
	};
}

static uint32_t extras_u32(const struct bin_req *r, size_t at)
{
	uint32_t v;

	memcpy(&v, r->extras + at, sizeof(v));
	return ntohl(v);
}

static uint64_t extras_u64(const struct bin_req *r, size_t at)
{
	uint64_t v;

	memcpy(&v, r->extras + at, sizeof(v));
	return xkv_be64(v);
}

/* A response: the header, then extras, key and value, each of which may be empty. */
static void reply(struct mc_ctx *c, const struct bin_req *r, uint16_t status, const void *extras,
		  uint8_t extras_len, const void *key, uint16_t key_len, const void *value,
		  uint32_t value_len, uint64_t cas)
{
	uint32_t body = (uint32_t)extras_len + key_len + value_len;
	char *p = xkv_mc_buf_reserve(c->out, BIN_HDR + body);

	if (!p)
		return;
	xkv_mc_bin_hdr((uint8_t *)p, &r->mc, status, key_len, extras_len, body, cas);
	p += BIN_HDR;
	if (extras_len)
		memcpy(p, extras, extras_len);
	if (key_len)
		memcpy(p + extras_len, key, key_len);
	if (value_len)
		memcpy(p + extras_len + key_len, value, value_len);
	c->out->len += BIN_HDR + body;
}

static void reply_ok(struct mc_ctx *c, const struct bin_req *r, uint64_t cas)
{
	if (!r->quiet)
		reply(c, r, XKV_MC_BIN_S_OK, NULL, 0, NULL, 0, NULL, 0, cas);
}

/* An error, its message as the value; sent whether the opcode is quiet or not. */
static void reply_error(struct mc_ctx *c, const struct bin_req *r, uint16_t status)
{
	const char *text = xkv_mc_bin_status_text(status);

	reply(c, r, status, NULL, 0, NULL, 0, text, (uint32_t)strlen(text), 0);
}

/* A request memcached cannot read on from: EINVAL, then the connection closes. */
static int protocol_error(struct mc_ctx *c, const struct bin_req *r)
{
	reply_error(c, r, XKV_MC_BIN_S_EINVAL);
	*c->close = true;
	return 0;
}

/* A miss: nothing for a quiet opcode, the key for GETK and GATK, else "Not found". */
static void reply_miss(struct mc_ctx *c, const struct bin_req *r)
{
	if (r->quiet)
		return;
	if (r->cmd == XKV_MC_BIN_GETK || r->cmd == XKV_MC_BIN_GATK)
		reply(c, r, XKV_MC_BIN_S_NOT_FOUND, NULL, 0, r->key, r->key_len, NULL, 0, 0);
	else
		reply_error(c, r, XKV_MC_BIN_S_NOT_FOUND);
}

/* What set, add and replace are: a compare-and-swap whenever the request has a CAS. */
static enum xkv_mc_op update_op(const struct bin_req *r)
{
	switch (r->cmd) {
	case XKV_MC_BIN_APPEND:
		return XKV_MC_APPEND;
	case XKV_MC_BIN_PREPEND:
		return XKV_MC_PREPEND;
	default:
		break;
	}
	if (r->cas)
		return XKV_MC_CAS;
	return r->cmd == XKV_MC_BIN_ADD	       ? XKV_MC_ADD
	       : r->cmd == XKV_MC_BIN_REPLACE ? XKV_MC_REPLACE
					       : XKV_MC_SET;
}

/* A write's outcome, as memcached's binary replies map its store results. */
static void reply_write(struct mc_ctx *c, const struct bin_req *r, enum xkv_mc_op op,
			const struct xkv_mc_result *res)
{
	uint64_t number;

	switch (res->status) {
	case XKV_MC_STORED:
		reply_ok(c, r, res->cas);
		return;
	case XKV_MC_DELETED:
		reply_ok(c, r, 0);
		return;
	case XKV_MC_NUMBER:
		number = xkv_be64(res->number);
		if (!r->quiet)
			reply(c, r, XKV_MC_BIN_S_OK, NULL, 0, NULL, 0, &number, sizeof(number),
			      res->cas);
		return;
	case XKV_MC_NOT_STORED:
		reply_error(c, r,
			    op == XKV_MC_ADD       ? XKV_MC_BIN_S_EXISTS
			    : op == XKV_MC_REPLACE ? XKV_MC_BIN_S_NOT_FOUND
						   : XKV_MC_BIN_S_NOT_STORED);
		return;
	case XKV_MC_EXISTS:
		reply_error(c, r, XKV_MC_BIN_S_EXISTS);
		return;
	case XKV_MC_NOT_FOUND:
		reply_error(c, r, XKV_MC_BIN_S_NOT_FOUND);
		return;
	case XKV_MC_NON_NUMERIC:
		reply_error(c, r, XKV_MC_BIN_S_NON_NUMERIC);
		return;
	case XKV_MC_TOO_LARGE:
		reply_error(c, r, XKV_MC_BIN_S_TOO_LARGE);
		return;
	default:
		reply_error(c, r, XKV_MC_BIN_S_NO_MEMORY);
		return;
	}
}

static struct xkv_msg write_msg(enum xkv_mc_op op, const struct bin_req *r)
{
	const struct mc_tok key = {.p = r->key, .len = r->key_len};
	struct xkv_msg w = mc_write_msg(op, &key);

	w.mc.cmd.cas = r->cas;
	return w;
}

/* Runs w and replies now, or when it completes (resume calls the command again). */
static void write_and_reply(struct mc_ctx *c, const struct bin_req *r, const struct xkv_msg *w)
{
	struct xkv_mc_result res;

	if (mc_write(c, w, &res))
		reply_write(c, r, w->mc.cmd.op, &res);
}

/* A hit: flags, the key for GETK and GATK, the value, the item's CAS. */
static void reply_hit(struct mc_ctx *c, const struct bin_req *r)
{
	bool with_key = r->cmd == XKV_MC_BIN_GETK || r->cmd == XKV_MC_BIN_GATK;
	uint16_t key_len = with_key ? r->key_len : 0;
	size_t room = BIN_HDR + BIN_HIT_EXTRAS + key_len;
	struct xkv_item_meta meta;
	uint32_t value_len, flags;
	char *p;
	int err = mc_read(c, r->key, r->key_len, room, &value_len, &meta);

	if (err == -ENOMEM)
		return;
	if (err) {
		reply_miss(c, r);
		return;
	}
	/* the value is in place after the room left for what comes before it */
	p = c->out->data + c->out->len;
	xkv_mc_bin_hdr((uint8_t *)p, &r->mc, XKV_MC_BIN_S_OK, key_len, BIN_HIT_EXTRAS,
		       (uint32_t)(room - BIN_HDR) + value_len, meta.cas);
	flags = htonl(meta.flags);
	memcpy(p + BIN_HDR, &flags, sizeof(flags));
	memcpy(p + BIN_HDR + BIN_HIT_EXTRAS, r->key, key_len);
	c->out->len += room + value_len;
}

/*
 * GET, GETK; TOUCH, GAT and GATK touch first (a write, perhaps in progress: resume
 * comes back with its result). TOUCH answers the flags alone.
 */
static int cmd_get(struct mc_ctx *c, const struct bin_req *r)
{
	const struct xkv_mc_result *touched = c->done;
	struct xkv_mc_result res;
	uint32_t flags;

	if (r->cmd == XKV_MC_BIN_GET || r->cmd == XKV_MC_BIN_GETK) {
		reply_hit(c, r);
		return 0;
	}
	if (!touched) {
		struct xkv_msg w = write_msg(XKV_MC_TOUCH, r);

		w.mc.cmd.exptime = extras_u32(r, 0); /* unsigned, unlike the text's */
		if (!mc_write(c, &w, &res))
			return 0;
		touched = &res;
	}
	if (touched->status == XKV_MC_NO_MEMORY) {
		reply_error(c, r, XKV_MC_BIN_S_NO_MEMORY);
	} else if (touched->status != XKV_MC_TOUCHED) {
		reply_miss(c, r);
	} else if (r->cmd == XKV_MC_BIN_TOUCH) {
		flags = htonl(touched->flags);
		reply(c, r, XKV_MC_BIN_S_OK, &flags, sizeof(flags), NULL, 0, NULL, 0, touched->cas);
	} else {
		reply_hit(c, r);
	}
	return 0;
}

/* SET, ADD, REPLACE, APPEND, PREPEND: the value bytes consumed, or MC_NEED_MORE. */
static int cmd_update(struct mc_ctx *c, const struct bin_req *r)
{
	enum xkv_mc_op op = update_op(r);
	uint32_t value_len = r->body_len - r->extras_len - r->key_len;
	struct xkv_msg w;

	if (c->done) {
		reply_write(c, r, op, c->done);
		return 0;
	}
	if (value_len > XKV_VALUE_MAX) {
		reply_error(c, r, XKV_MC_BIN_S_TOO_LARGE);
		/* memcached unlinks the old value rather than leave it stale */
		if (r->cmd == XKV_MC_BIN_SET) {
			struct xkv_msg del = write_msg(XKV_MC_DELETE, r);
			struct xkv_mc_result res;

			del.mc.cmd.cas = 0;
			c->line = NULL; /* its reply is the error above: resume has nothing to add */
			mc_write(c, &del, &res);
		}
		c->s->swallow = value_len;
		return 0;
	}
	if (c->avail < value_len)
		return MC_NEED_MORE;
	w = write_msg(op, r);
	if (r->extras_len == BIN_SET_EXTRAS) {
		w.mc.cmd.flags = extras_u32(r, 0);
		w.mc.cmd.exptime = extras_u32(r, 4);
	}
	mc_write_value(&w, c->data, value_len);
	write_and_reply(c, r, &w);
	return (int)value_len;
}

/* INCREMENT, DECREMENT: a miss is created with the initial value, unless told not to. */
static int cmd_arithmetic(struct mc_ctx *c, const struct bin_req *r)
{
	enum xkv_mc_op op = r->cmd == XKV_MC_BIN_INCREMENT ? XKV_MC_INCR : XKV_MC_DECR;
	uint32_t exptime = extras_u32(r, 16);
	struct xkv_msg w;

	if (c->done) {
		reply_write(c, r, op, c->done);
		return 0;
	}
	w = write_msg(op, r);
	w.mc.cmd.delta = extras_u64(r, 0);
	if (exptime != BIN_NO_VIVIFY) {
		w.mc.cmd.opts |= XKV_MC_VIVIFY;
		w.mc.cmd.initial = extras_u64(r, 8);
		w.mc.cmd.vivify_exptime = exptime;
	}
	write_and_reply(c, r, &w);
	return 0;
}

static int cmd_delete(struct mc_ctx *c, const struct bin_req *r)
{
	struct xkv_msg w;

	if (c->done) {
		reply_write(c, r, XKV_MC_DELETE, c->done);
		return 0;
	}
	w = write_msg(XKV_MC_DELETE, r);
	write_and_reply(c, r, &w);
	return 0;
}

static int cmd_flush(struct mc_ctx *c, const struct bin_req *r)
{
	const struct xkv_mc_backend *b = c->s->backend;
	uint32_t delay = r->extras_len ? extras_u32(r, 0) : 0;

	/* by the exptime rule: past INT32_MAX it is a Unix time decades away either way */
	b->flush(b->ctx, delay > INT32_MAX ? INT32_MAX : (int32_t)delay);
	reply_ok(c, r, 0);
	return 0;
}

/* The STAT lines "STAT name value\r\n" in text[0..len) as binary STAT replies. */
static void stat_lines(struct mc_ctx *c, const struct bin_req *r, const char *text, size_t len)
{
	const char *end;

	if (!len) /* no lines (stats items of an empty store): text may be NULL */
		return;
	end = text + len;
	while (text < end) {
		const char *eol = memchr(text, '\r', (size_t)(end - text));
		struct mc_tok word, name, value = {0};
		const char *p = text;

		if (!eol)
			break;
		if (mc_next_token(&p, eol, &word) && mc_next_token(&p, eol, &name)) {
			while (p < eol && *p == ' ')
				p++;
			value = (struct mc_tok){.p = p, .len = (uint32_t)(eol - p)};
			reply(c, r, XKV_MC_BIN_S_OK, NULL, 0, name.p, (uint16_t)name.len, value.p,
			      value.len, 0);
		}
		text = eol + 2;
	}
}

/*
 * STAT, its group in the key: one reply per counter, then an empty one. "reset" and
 * "detail off|dump" answer the empty one alone; "detail on" is not supported, as in
 * the text protocol; a group xkv does not have is "Not found", as memcached's.
 */
static int cmd_stat(struct mc_ctx *c, const struct bin_req *r)
{
	const struct xkv_mc_backend *b = c->s->backend;
	const char *p = r->key, *end = r->key + r->key_len;
	struct mc_tok group, arg;
	bool has_group = mc_next_token(&p, end, &group);
	bool has_arg = has_group && mc_next_token(&p, end, &arg);
	struct xkv_mc_buf lines = {0};

	if (has_group && mc_tok_is(&group, "reset")) {
		if (b->stats_reset)
			b->stats_reset(b->ctx);
	} else if (has_group && mc_tok_is(&group, "detail")) {
		if (has_arg && mc_tok_is(&arg, "on")) {
			reply_error(c, r, XKV_MC_BIN_S_NOT_SUPPORTED);
			return 0;
		}
		if (!has_arg || !(mc_tok_is(&arg, "off") || mc_tok_is(&arg, "dump"))) {
			reply_error(c, r, XKV_MC_BIN_S_NOT_FOUND);
			return 0;
		}
	} else if (mc_stats_group(b, has_group ? &group : NULL, &lines)) {
		c->out->failed |= lines.failed;
		stat_lines(c, r, lines.data, lines.len);
		xkv_mc_buf_free(&lines);
	} else {
		reply_error(c, r, XKV_MC_BIN_S_NOT_FOUND);
		return 0;
	}
	reply(c, r, XKV_MC_BIN_S_OK, NULL, 0, NULL, 0, NULL, 0, 0);
	return 0;
}

/*
 * One request, its header, extras and key at hand: the value bytes it consumed after
 * them, or MC_NEED_MORE. Each command's shape is checked as memcached checks it.
 */
static int dispatch(struct mc_ctx *c, const struct bin_req *r)
{
	uint32_t ek = (uint32_t)r->extras_len + r->key_len;
	bool key = r->key_len > 0, exact = r->body_len == ek;

	if (ek > r->body_len) { /* lengths that lie: memcached gives up on the connection */
		reply_error(c, r, XKV_MC_BIN_S_UNKNOWN);
		*c->close = true;
		return 0;
	}
	if (r->key_len > MC_KEY_MAX)
		return protocol_error(c, r);
	switch (r->cmd) {
	case XKV_MC_BIN_GET:
	case XKV_MC_BIN_GETK:
		return key && !r->extras_len && exact ? cmd_get(c, r) : protocol_error(c, r);
	case XKV_MC_BIN_TOUCH:
	case XKV_MC_BIN_GAT:
	case XKV_MC_BIN_GATK:
		return key && r->extras_len == BIN_TOUCH_EXTRAS ? cmd_get(c, r) : protocol_error(c, r);
	case XKV_MC_BIN_SET:
	case XKV_MC_BIN_ADD:
	case XKV_MC_BIN_REPLACE:
		return key && r->extras_len == BIN_SET_EXTRAS ? cmd_update(c, r)
							       : protocol_error(c, r);
	case XKV_MC_BIN_APPEND:
	case XKV_MC_BIN_PREPEND:
		return key && !r->extras_len ? cmd_update(c, r) : protocol_error(c, r);
	case XKV_MC_BIN_DELETE:
		return key && !r->extras_len && exact ? cmd_delete(c, r) : protocol_error(c, r);
	case XKV_MC_BIN_INCREMENT:
	case XKV_MC_BIN_DECREMENT:
		return key && r->extras_len == BIN_ARITH_EXTRAS && exact ? cmd_arithmetic(c, r)
									  : protocol_error(c, r);
	case XKV_MC_BIN_FLUSH:
		return !key && exact && (r->extras_len == 0 || r->extras_len == 4)
			       ? cmd_flush(c, r)
			       : protocol_error(c, r);
	case XKV_MC_BIN_STAT:
		return !r->extras_len ? cmd_stat(c, r) : protocol_error(c, r);
	case XKV_MC_BIN_NOOP:
	case XKV_MC_BIN_VERSION:
	case XKV_MC_BIN_QUIT:
		if (r->body_len)
			return protocol_error(c, r);
		if (r->cmd == XKV_MC_BIN_VERSION)
			reply(c, r, XKV_MC_BIN_S_OK, NULL, 0, NULL, 0, XKV_MC_VERSION,
			      sizeof(XKV_MC_VERSION) - 1, 0);
		else
			reply_ok(c, r, 0);
		*c->close = r->cmd == XKV_MC_BIN_QUIT;
		return 0;
	default: /* SASL's too: xkv has no authentication to offer */
		reply_error(c, r, XKV_MC_BIN_S_UNKNOWN);
		c->s->swallow = r->body_len - ek;
		return 0;
	}
}

size_t mc_binary_feed(struct xkv_mc_session *s, const char *in, size_t len,
		      struct xkv_mc_buf *out, bool *close)
{
	size_t done = 0;

	*close = false;
	while (!s->waiting && !*close && !out->failed && done < len) {
		const uint8_t *p = (const uint8_t *)in + done;
		size_t avail = len - done, reply_from = out->len;
		struct mc_line line = {0};
		struct mc_ctx c = {.s = s, .line = &line, .out = out, .close = close};
		struct bin_req r;
		int used;

		if (s->swallow) {
			size_t n = s->swallow < avail ? s->swallow : avail;

			s->swallow -= n;
			done += n;
			continue;
		}
		if (avail < BIN_HDR)
			break;
		if (p[0] != XKV_MC_BIN_REQUEST) { /* no request: memcached closes, saying nothing */
			*close = true;
			break;
		}
		req_read(&r, p);
		/* the request's header, extras and key: what a write in progress keeps */
		line.p = (const char *)p;
		line.len = BIN_HDR + r.extras_len + r.key_len;
		if (avail < line.len)
			break;
		c.data = line.p + line.len;
		c.avail = avail - line.len;
		used = dispatch(&c, &r);
		if (used == MC_NEED_MORE)
			break;
		done += line.len + (size_t)used;
		if (!s->waiting && s->backend->answered)
			s->backend->answered(s->backend->ctx, (size_t)used + out->len - reply_from);
	}
	if (out->failed)
		*close = true;
	return done;
}

void mc_binary_resume(struct xkv_mc_session *s, const struct xkv_mc_result *res,
		      struct xkv_mc_buf *out)
{
	struct mc_line line = {.p = s->line, .len = s->line_len};
	bool close = false;
	struct mc_ctx c = {.s = s, .line = &line, .out = out, .done = res, .close = &close};
	size_t reply_from = out->len;
	struct bin_req r;

	s->waiting = false;
	if (!s->line_len) /* a write whose reply was given already (a set too large) */
		return;
	req_read(&r, (const uint8_t *)s->line);
	s->line_len = 0;
	dispatch(&c, &r);
	if (s->backend->answered)
		s->backend->answered(s->backend->ctx, out->len - reply_from);
}
