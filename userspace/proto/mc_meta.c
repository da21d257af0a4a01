// SPDX-License-Identifier: MIT
/*
 * memcached's meta commands: mg, ms, md, ma, mn and me, with the flags
 * docs/MEMCACHED.md lists, each reply as memcached 1.6.18 gives it. Flags that xkv does
 * not implement (invalidation, stale-while-revalidate, recache, last access) are
 * refused one by one rather than ignored.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sodium.h>
#include <string.h>

#include <xkv/hash.h>
#include <xkv/proto.h>
#include "proto/mc_session.h"

#define META_OPAQUE_MAX 32 /* memcached's opaque token limit */
#define META_ROOM	512 /* "VA <len>" and every return flag, the key among them */

/* What a meta command's flags asked for. */
struct meta {
	uint64_t seen[2]; /* by flag character: duplicates are refused */
	bool quiet, value;
	struct mc_tok key; /* the key token, or with b the bytes it decodes to, in key_bytes */
	char key_bytes[MC_KEY_MAX];
	bool has_cas, has_ttl, has_vivify;
	int32_t ttl, vivify_ttl; /* T, N */
	uint32_t flags;		 /* F */
	uint64_t cas, initial, delta; /* C, J, D */
	char mode;		      /* M */
};

/* Per command: the flags it takes, those xkv refuses, its words for a bad flag or key. */
struct meta_spec {
	const char *name;
	const char *valid;
	const char *refused;
	const char *invalid_msg, *duplicate_msg, *bad_key_msg;
};

static const struct meta_spec mg_spec = {"mg", "bcfhkOqstvTu", "lNR",
					 "CLIENT_ERROR invalid flag", "CLIENT_ERROR duplicate flag",
					 "CLIENT_ERROR error decoding key"};
static const struct meta_spec ms_spec = {"ms", "bcCFkOqTMN", "IS",
					 "CLIENT_ERROR invalid flag", "CLIENT_ERROR duplicate flag",
					 "CLIENT_ERROR error decoding key"};
static const struct meta_spec md_spec = {"md", "bCkOq", "IT",
					 "CLIENT_ERROR invalid or duplicate flag",
					 "CLIENT_ERROR invalid or duplicate flag",
					 "CLIENT_ERROR invalid or duplicate flag"};
static const struct meta_spec ma_spec = {"ma", "bCNJDTMOqtcvk", "",
					 "CLIENT_ERROR invalid or duplicate flag",
					 "CLIENT_ERROR invalid or duplicate flag",
					 "CLIENT_ERROR invalid or duplicate flag"};

#define BAD_TOKEN "CLIENT_ERROR bad token in command line format"

/* A flag's argument: the token after its first character. */
static struct mc_tok flag_arg(const struct mc_tok *t)
{
	return (struct mc_tok){.p = t->p + 1, .len = t->len - 1};
}

static const char *meta_number(const struct mc_tok *t, struct meta *m)
{
	struct mc_tok arg = flag_arg(t);

	switch (t->p[0]) {
	case 'T':
		m->has_ttl = true;
		return mc_tok_i32(&arg, &m->ttl) ? NULL : BAD_TOKEN;
	case 'N':
		m->has_vivify = true;
		return mc_tok_i32(&arg, &m->vivify_ttl) ? NULL : BAD_TOKEN;
	case 'C':
		m->has_cas = true;
		return mc_tok_u64(&arg, &m->cas) ? NULL : BAD_TOKEN;
	case 'J':
		return mc_tok_u64(&arg, &m->initial) ? NULL : BAD_TOKEN;
	case 'D':
		return mc_tok_u64(&arg, &m->delta) ? NULL : BAD_TOKEN;
	case 'F':
		return mc_tok_u32(&arg, &m->flags) ? NULL : "CLIENT_ERROR bad command line format";
	case 'O':
		return arg.len > META_OPAQUE_MAX ? "CLIENT_ERROR opaque token too long" : NULL;
	case 'M':
		m->mode = arg.len ? arg.p[0] : 0;
		return NULL;
	default:
		return NULL;
	}
}

/*
 * The key of a b flag: canonical base64 (memcached's alphabet, padded), decoded into
 * out; false when it is not, or decodes to nothing.
 */
static bool key_decode(const struct mc_tok *t, char *out, struct mc_tok *key)
{
	size_t len;

	if (sodium_base642bin((unsigned char *)out, MC_KEY_MAX, t->p, t->len, NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) ||
	    !len)
		return false;
	*key = (struct mc_tok){.p = out, .len = (uint32_t)len};
	return true;
}

/* Reads the flags from token first on; the error line to answer, or NULL. */
static const char *meta_parse(const struct mc_line *l, uint32_t first, const struct meta_spec *spec,
			      struct meta *m)
{
	memset(m, 0, sizeof(*m));
	m->delta = 1;
	m->key = l->tok[1];
	for (uint32_t i = first; i < l->ntok; i++) {
		const struct mc_tok *t = &l->tok[i];
		unsigned char f = (unsigned char)t->p[0];
		const char *err;

		if (f < 128 && strchr(spec->refused, f))
			return "CLIENT_ERROR unsupported flag";
		if (f >= 128 || !strchr(spec->valid, f))
			return spec->invalid_msg;
		if (m->seen[f / 64] & 1ull << (f % 64))
			return spec->duplicate_msg;
		m->seen[f / 64] |= 1ull << (f % 64);
		err = meta_number(t, m);
		if (err)
			return err;
		m->quiet |= f == 'q';
		m->value |= f == 'v';
		if (f == 'b' && !key_decode(&l->tok[1], m->key_bytes, &m->key))
			return spec->bad_key_msg;
	}
	return NULL;
}

/* Whether the request's key is base64 (a b flag among its flags from token first on). */
static bool key_in_base64(const struct mc_line *l, uint32_t first)
{
	for (uint32_t i = first; i < l->ntok; i++)
		if (l->tok[i].p[0] == 'b')
			return true;
	return false;
}

/* What the return flags show besides the request's own tokens. */
struct meta_shown {
	const struct xkv_mc_result *r; /* c, f */
	uint32_t value_len;	       /* s */
	int64_t ttl;		       /* t */
	bool fetched;		       /* h */
};

/*
 * The return flags, in the order they were asked: those of kinds that apply (O and k
 * always, the others as the command and its outcome have them).
 */
static int meta_flags_out(char *buf, size_t cap, const struct mc_line *l, const char *kinds,
			  const struct meta_shown *v)
{
	int n = 0;

	for (uint32_t i = 2; i < l->ntok; i++) {
		const struct mc_tok *t = &l->tok[i];

		if (!strchr(kinds, t->p[0]))
			continue;
		switch (t->p[0]) {
		case 'O':
			n += snprintf(buf + n, cap - n, " %.*s", (int)t->len, t->p);
			break;
		case 'k': /* a base64 key as it came, which is how memcached encodes it back */
			n += snprintf(buf + n, cap - n, " k%.*s%s", (int)l->tok[1].len, l->tok[1].p,
				      key_in_base64(l, 2) ? " b" : "");
			break;
		case 'c':
			n += snprintf(buf + n, cap - n, " c%" PRIu64, v->r->cas);
			break;
		case 'f':
			n += snprintf(buf + n, cap - n, " f%u", v->r->flags);
			break;
		case 's':
			n += snprintf(buf + n, cap - n, " s%u", v->value_len);
			break;
		case 't':
			n += snprintf(buf + n, cap - n, " t%" PRId64, v->ttl);
			break;
		case 'h':
			n += snprintf(buf + n, cap - n, " h%d", v->fetched);
			break;
		}
	}
	return n;
}

/* A status line: code, the return flags of kinds, "\r\n". */
static void meta_status(struct mc_ctx *c, const char *code, const char *kinds,
			const struct xkv_mc_result *r)
{
	const struct meta_shown v = {.r = r};
	char line[META_ROOM];
	int n = snprintf(line, sizeof(line), "%s", code);

	n += meta_flags_out(line + n, sizeof(line) - n, c->line, kinds, &v);
	memcpy(line + n, "\r\n", 2);
	xkv_mc_buf_append(c->out, line, (size_t)n + 2);
}

static const char *failure_text(enum xkv_mc_status status)
{
	switch (status) {
	case XKV_MC_NON_NUMERIC:
		return "CLIENT_ERROR cannot increment or decrement non-numeric value";
	case XKV_MC_TOO_LARGE:
		return "SERVER_ERROR object too large for cache";
	case XKV_MC_NO_MEMORY:
		return "SERVER_ERROR out of memory storing object";
	default:
		return NULL;
	}
}

/* The reply codes of a write's outcome: HD on success, else NS, EX or NF. */
static const char *meta_code(enum xkv_mc_status status)
{
	switch (status) {
	case XKV_MC_NOT_STORED:
		return "NS";
	case XKV_MC_EXISTS:
		return "EX";
	case XKV_MC_NOT_FOUND:
		return "NF";
	default:
		return "HD";
	}
}

/* "mg <key> <flags>*": with T, a touch first (a write, perhaps in progress), then the read. */
static int cmd_mg(struct mc_ctx *c, const struct meta *m)
{
	const struct mc_line *l = c->line;
	const struct xkv_mc_result *touched = c->done; /* with T: the touch's outcome */
	struct xkv_mc_result r = {0};
	struct xkv_item_meta meta;
	struct meta_shown shown;
	char hdr[META_ROOM];
	uint32_t len;
	int n;

	if (m->has_ttl && !c->done) {
		struct xkv_msg w = mc_write_msg(XKV_MC_TOUCH, &m->key);

		w.mc.cmd.exptime = m->ttl;
		if (!mc_write(c, &w, &r))
			return 0;
		touched = &r;
	}
	/* a touch that could not be done is an error, not a miss nor a hit */
	if (touched && failure_text(touched->status)) {
		mc_reply(c->out, failure_text(touched->status));
		return 0;
	}
	if ((touched && touched->status != XKV_MC_TOUCHED) ||
	    mc_read(c, m->key.p, m->key.len, META_ROOM, &len, &meta)) {
		if (!m->quiet)
			meta_status(c, "EN", "Ok", &r);
		return 0;
	}
	r.cas = meta.cas;
	r.flags = meta.flags;
	shown = (struct meta_shown){.r = &r, .value_len = len, .ttl = mc_ttl(c, meta.exptime),
				    .fetched = meta.fetched};
	n = m->value ? snprintf(hdr, sizeof(hdr), "VA %u", len) : snprintf(hdr, sizeof(hdr), "HD");
	n += meta_flags_out(hdr + n, sizeof(hdr) - n, l, "Okcfsth", &shown);
	memcpy(hdr + n, "\r\n", 2);
	if (m->value)
		mc_put_value(c->out, hdr, (size_t)n + 2, META_ROOM, len);
	else
		xkv_mc_buf_append(c->out, hdr, (size_t)n + 2);
	return 0;
}

static bool ms_op(char mode, enum xkv_mc_op *op)
{
	static const char modes[] = "SEAPR";
	static const enum xkv_mc_op ops[] = {XKV_MC_SET, XKV_MC_ADD, XKV_MC_APPEND,
					     XKV_MC_PREPEND, XKV_MC_REPLACE};
	const char *p = mode ? strchr(modes, mode) : modes;

	if (!p)
		return false;
	*op = ops[p - modes];
	return true;
}

/* The write's reply: a failure's error line, else its code and flags (q hides success). */
static void meta_reply(struct mc_ctx *c, const struct meta *m, const struct xkv_mc_result *r,
		       const char *kinds)
{
	const char *failure = failure_text(r->status);

	if (failure)
		mc_reply(c->out, failure);
	else if (!(m->quiet && r->status == XKV_MC_STORED))
		meta_status(c, meta_code(r->status), kinds, r);
}

/*
 * "ms <key> <datalen> <flags>*\r\n<data>\r\n". N is taken and, as memcached 1.6.18
 * does, not acted on: an append to a missing key is NS.
 */
static int cmd_ms(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	struct xkv_mc_result r;
	struct xkv_msg w;
	const char *err;
	struct meta m;
	int32_t vlen;

	if (l->ntok < 3 || !mc_tok_i32(&l->tok[2], &vlen) || vlen < 0) {
		mc_reply(c->out, "CLIENT_ERROR bad command line format");
		return 0;
	}
	err = meta_parse(l, 3, &ms_spec, &m);
	w = mc_write_msg(XKV_MC_SET, &m.key);
	if (!err && !ms_op(m.mode, &w.mc.cmd.op))
		err = "CLIENT_ERROR invalid mode for ms M token";
	if (c->done) {
		meta_reply(c, &m, c->done, "Okc");
		return 0;
	}
	if (err || (uint32_t)vlen > XKV_VALUE_MAX) {
		mc_reply(c->out, err ? err : "SERVER_ERROR object too large for cache");
		c->s->swallow = (uint64_t)vlen + 2;
		if (!err) { /* as memcached, drop the old value rather than keep it stale */
			struct xkv_msg del = mc_write_msg(XKV_MC_DELETE, &m.key);

			c->line = NULL;
			mc_write(c, &del, &r);
		}
		return 0;
	}
	if (c->avail < (size_t)vlen + 2)
		return MC_NEED_MORE;
	if (memcmp(c->data + vlen, "\r\n", 2) != 0) {
		mc_reply(c->out, "CLIENT_ERROR bad data chunk");
		return vlen + 2;
	}
	if (m.has_cas) {
		if (w.mc.cmd.op == XKV_MC_SET)
			w.mc.cmd.op = XKV_MC_CAS;
		w.mc.cmd.cas = m.cas;
	}
	w.mc.cmd.flags = m.flags;
	w.mc.cmd.exptime = m.has_ttl ? m.ttl : 0;
	mc_write_value(&w, c->data, (uint32_t)vlen);
	if (mc_write(c, &w, &r))
		meta_reply(c, &m, &r, "Okc");
	return vlen + 2;
}

/* "md <key> <flags>*" */
static int cmd_md(struct mc_ctx *c, const struct meta *m)
{
	struct xkv_msg w = mc_write_msg(XKV_MC_DELETE, &m->key);
	const struct xkv_mc_result *res = c->done;
	struct xkv_mc_result r;
	const char *failure;

	w.mc.cmd.cas = m->cas;
	if (!res) {
		if (!mc_write(c, &w, &r))
			return 0;
		res = &r;
	}
	/* a delete that could not be done is an error, as in ms and ma: never HD */
	failure = failure_text(res->status);
	if (failure)
		mc_reply(c->out, failure);
	else if (!(m->quiet && res->status == XKV_MC_DELETED))
		meta_status(c, meta_code(res->status), "Ok", res);
	return 0;
}

/* "ma <key> <flags>*": incr or decr, N and J to create a missing counter. */
static int cmd_ma(struct mc_ctx *c, const struct meta *m)
{
	struct xkv_msg w = mc_write_msg(XKV_MC_INCR, &m->key);
	const struct xkv_mc_result *res = c->done;
	const char *failure;
	struct xkv_mc_result r;
	struct meta_shown shown;
	char hdr[META_ROOM], num[24];
	int n, len;

	if (m->mode == 'D' || m->mode == '-')
		w.mc.cmd.op = XKV_MC_DECR;
	else if (m->mode && m->mode != 'I' && m->mode != '+') {
		mc_reply(c->out, "CLIENT_ERROR invalid mode for ma M token");
		return 0;
	}
	if (!res) {
		w.mc.cmd.delta = m->delta;
		w.mc.cmd.cas = m->cas;
		if (m->has_vivify) {
			w.mc.cmd.opts |= XKV_MC_VIVIFY;
			w.mc.cmd.initial = m->initial;
			w.mc.cmd.vivify_exptime = m->vivify_ttl;
		}
		if (m->has_ttl) {
			w.mc.cmd.opts |= XKV_MC_NEW_TTL;
			w.mc.cmd.exptime = m->ttl;
		}
		if (!mc_write(c, &w, &r))
			return 0;
		res = &r;
	}
	failure = failure_text(res->status);
	if (failure) {
		mc_reply(c->out, failure);
		return 0;
	}
	if (res->status != XKV_MC_NUMBER) {
		meta_status(c, meta_code(res->status), "Ok", res);
		return 0;
	}
	if (m->quiet)
		return 0;
	len = snprintf(num, sizeof(num), "%" PRIu64, res->number);
	n = m->value ? snprintf(hdr, sizeof(hdr), "VA %d", len) : snprintf(hdr, sizeof(hdr), "HD");
	shown = (struct meta_shown){.r = res, .ttl = mc_ttl(c, res->exptime)};
	n += meta_flags_out(hdr + n, sizeof(hdr) - n, c->line, "Okct", &shown);
	memcpy(hdr + n, "\r\n", 2);
	xkv_mc_buf_append(c->out, hdr, (size_t)n + 2);
	if (m->value) {
		xkv_mc_buf_append(c->out, num, (size_t)len);
		xkv_mc_buf_append(c->out, "\r\n", 2);
	}
	return 0;
}

/*
 * "me <key> [b]": memcached's debug line of one item, "ME <key> exp=<-TTL left or -1>
 * cas=<CAS> fetch=<yes|no> cls=<class> size=<bytes>", the class and bytes the store's
 * (`stats slabs`). memcached's la= is left out: no access time is kept.
 */
static int cmd_me(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	struct mc_tok key = l->tok[1];
	char key_bytes[MC_KEY_MAX];
	const struct xkv_mc_backend *b = c->s->backend;
	struct xkv_item_meta meta;

	if (l->ntok < 2 || key.len > MC_KEY_MAX ||
	    (l->ntok > 2 && mc_tok_is(&l->tok[2], "b") && !key_decode(&l->tok[1], key_bytes, &key))) {
		mc_reply(c->out, "CLIENT_ERROR bad command line format");
		return 0;
	}
	if (b->peek(b->ctx, key.p, (uint16_t)key.len, xkv_hash(key.p, key.len), &meta)) {
		mc_reply(c->out, "EN");
		return 0;
	}
	mc_printf(c->out, "ME %.*s exp=%" PRId64 " cas=%" PRIu64 " fetch=%s cls=%u size=%u\r\n",
		  (int)l->tok[1].len, l->tok[1].p, meta.exptime ? -mc_ttl(c, meta.exptime) : -1,
		  meta.cas, meta.fetched ? "yes" : "no", xkv_size_class(meta.footprint),
		  meta.footprint);
	return 0;
}

int mc_meta(struct mc_ctx *c)
{
	const struct mc_line *l = c->line;
	const struct mc_tok *cmd = &l->tok[0];
	static const struct meta_spec *const specs[] = {&mg_spec, &md_spec, &ma_spec};
	const struct meta_spec *spec = NULL;
	const char *err;
	struct meta m;

	if (mc_tok_is(cmd, "mn")) {
		mc_reply(c->out, "MN");
		return 0;
	}
	if (mc_tok_is(cmd, "me"))
		return cmd_me(c);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (mc_tok_is(cmd, specs[i]->name))
			spec = specs[i];
	if (!spec && !mc_tok_is(cmd, "ms")) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (l->ntok < 2) {
		mc_reply(c->out, "ERROR");
		return 0;
	}
	if (l->tok[1].len > MC_KEY_MAX) {
		mc_reply(c->out, "CLIENT_ERROR bad command line format");
		return 0;
	}
	if (!spec)
		return cmd_ms(c);
	err = meta_parse(l, 2, spec, &m);
	if (err) {
		mc_reply(c->out, err);
		return 0;
	}
	if (spec == &mg_spec)
		return cmd_mg(c, &m);
	if (spec == &md_spec)
		return cmd_md(c, &m);
	return cmd_ma(c, &m);
}
