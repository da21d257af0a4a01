// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "proto/mc_number.h"
#include "proto/mc_udp.h"

void xkv_mc_frame(uint8_t *p, uint16_t id, uint16_t seq, uint16_t total)
{
	const struct xkv_mc_frame f = {.request_id = htons(id), .seq = htons(seq),
				       .total = htons(total)};

	memcpy(p, &f, sizeof(f));
}

/* A span of a line; its tokens end where XDP's key ends (xkv_mc_key_end). */
struct span {
	const char *p;
	size_t len;
};

/* The next token of *rest into *tok, consuming it; false when none is left. */
static bool next_token(struct span *rest, struct span *tok)
{
	while (rest->len && xkv_mc_key_end((uint8_t)*rest->p)) {
		rest->p++;
		rest->len--;
	}
	if (!rest->len)
		return false;
	tok->p = rest->p;
	while (rest->len && !xkv_mc_key_end((uint8_t)*rest->p)) {
		rest->p++;
		rest->len--;
	}
	tok->len = (size_t)(rest->p - tok->p);
	return true;
}

static bool token_is(const struct span *t, const char *word)
{
	return t->len == strlen(word) && !memcmp(t->p, word, t->len);
}

static bool key_ok(const struct span *k)
{
	return k->len >= XKV_KEY_MIN && k->len <= XKV_KEY_MAX;
}

/* A write's op and key, noted as soon as they are read: an error leaves them set. */
static void write_key(struct xkv_msg *msg, uint8_t op, const void *key, size_t key_len)
{
	msg->op = op;
	msg->mc.cmd.op = op == XKV_OP_DELETE ? XKV_MC_DELETE : XKV_MC_SET;
	msg->key = key;
	msg->key_len = (uint16_t)key_len;
}

/* get/gets k1 [k2 ...]: the first key in msg, the others left in msg->mc.keys. */
static enum xkv_mc_verdict ascii_get(struct span rest, struct xkv_msg *msg)
{
	struct span key, more = rest, k;

	if (!next_token(&rest, &key))
		return XKV_MC_UDP_ERROR;
	while (next_token(&more, &k))
		if (!key_ok(&k))
			return XKV_MC_UDP_BAD_FORMAT;
	msg->op = XKV_OP_GET;
	msg->key = key.p;
	msg->key_len = (uint16_t)key.len;
	msg->mc.keys = rest.p;
	msg->mc.keys_len = (uint16_t)rest.len;
	return XKV_MC_UDP_OK;
}

/*
 * The optional token after a command's arguments: memcached reads noreply there and
 * ignores any other word; a second token is one too many.
 */
static bool optional_noreply(struct span rest, bool *noreply)
{
	struct span t;

	*noreply = false;
	if (!next_token(&rest, &t))
		return true;
	*noreply = token_is(&t, "noreply");
	return !next_token(&rest, &t);
}

/* set k flags exptime bytes [noreply]\r\n, then the data block and its own \r\n. */
static enum xkv_mc_verdict ascii_set(struct span rest, const char *data, size_t data_len,
				     struct xkv_msg *msg)
{
	struct span key, t[3];
	int32_t exptime, bytes;
	uint32_t flags;

	if (!next_token(&rest, &key))
		return XKV_MC_UDP_ERROR;
	if (key_ok(&key))
		write_key(msg, XKV_OP_PUT, key.p, key.len);
	if (!next_token(&rest, &t[0]) || !next_token(&rest, &t[1]) || !next_token(&rest, &t[2]) ||
	    !optional_noreply(rest, &msg->mc.quiet))
		return XKV_MC_UDP_ERROR;
	if (!key_ok(&key) || !xkv_mc_number_u32(t[0].p, t[0].len, &flags) ||
	    !xkv_mc_number_i32(t[1].p, t[1].len, &exptime) ||
	    !xkv_mc_number_i32(t[2].p, t[2].len, &bytes) || bytes < 0)
		return XKV_MC_UDP_BAD_FORMAT;
	if ((uint32_t)bytes > XKV_VALUE_MAX)
		return XKV_MC_UDP_TOO_LARGE;
	/* the data block ends with its own \r\n, as memcached wants it */
	if (data_len < (size_t)bytes + 2 || data[bytes] != '\r' || data[bytes + 1] != '\n')
		return XKV_MC_UDP_BAD_CHUNK;
	msg->frag = data;
	msg->value_len = msg->frag_len = (uint32_t)bytes;
	msg->mc.cmd.flags = flags;
	msg->mc.cmd.exptime = exptime;
	return XKV_MC_UDP_OK;
}

/* delete k [0] [noreply]: memcached still takes the old time argument when it is 0. */
static enum xkv_mc_verdict ascii_delete(struct span rest, struct xkv_msg *msg)
{
	struct span key, t[3];
	bool zero;
	int n = 0;

	if (!next_token(&rest, &key))
		return XKV_MC_UDP_ERROR;
	if (key_ok(&key))
		write_key(msg, XKV_OP_DELETE, key.p, key.len);
	while (n < 3 && next_token(&rest, &t[n]))
		n++;
	if (n == 3)
		return XKV_MC_UDP_ERROR;
	msg->mc.quiet = n && token_is(&t[n - 1], "noreply");
	zero = n && token_is(&t[0], "0");
	if ((n == 1 && !zero && !msg->mc.quiet) || (n == 2 && (!zero || !msg->mc.quiet)))
		return XKV_MC_UDP_DELETE_USAGE;
	return key_ok(&key) ? XKV_MC_UDP_OK : XKV_MC_UDP_BAD_FORMAT;
}

/* One command line, and a set's data block after it. */
static enum xkv_mc_verdict ascii_command(struct span line, const char *data, size_t data_len,
					 struct xkv_msg *msg)
{
	struct span cmd;

	if (!next_token(&line, &cmd))
		return XKV_MC_UDP_ERROR;
	if (token_is(&cmd, "get"))
		return ascii_get(line, msg);
	if (token_is(&cmd, "gets")) {
		msg->mc.with_cas = true;
		return ascii_get(line, msg);
	}
	if (token_is(&cmd, "set"))
		return ascii_set(line, data, data_len, msg);
	if (token_is(&cmd, "delete"))
		return ascii_delete(line, msg);
	return XKV_MC_UDP_ERROR;
}

static enum xkv_mc_verdict ascii_decode(const char *p, size_t len, struct xkv_msg *msg)
{
	const char *nl = memchr(p, '\n', len), *data = nl ? nl + 1 : p + len;
	struct span line = {p, (size_t)(data - p) - (nl != NULL)};
	enum xkv_mc_verdict v;

	msg->mc.dialect = XKV_DIALECT_MC_ASCII;
	if (line.len && line.p[line.len - 1] == '\r')
		line.len--;
	v = ascii_command(line, data, len - (size_t)(data - p), msg);
	/* memcached waits for a line end that never comes; a write's key is read all the same */
	return nl ? v : XKV_MC_UDP_DROP;
}

/* A binary request: its 24-byte header and a body of exactly the length it claims. */
static enum xkv_mc_verdict binary_decode(const uint8_t *p, size_t len, struct xkv_msg *msg)
{
	const uint8_t *body = p + sizeof(struct xkv_mc_bin_hdr);
	uint32_t key_len, body_len, value_len;
	struct xkv_mc_bin_hdr h;
	__be32 extras[2];
	bool get, set;

	msg->mc.dialect = XKV_DIALECT_MC_BINARY;
	if (len < sizeof(h))
		return XKV_MC_UDP_DROP;
	memcpy(&h, p, sizeof(h));
	key_len = xkv_be16(h.key_len);
	body_len = xkv_be32(h.body_len);
	if (body_len != len - sizeof(h))
		return XKV_MC_UDP_DROP;
	msg->mc.opcode = h.opcode;
	msg->mc.opaque = xkv_be32(h.opaque);
	get = h.opcode == XKV_MC_BIN_GET || h.opcode == XKV_MC_BIN_GETQ ||
	      h.opcode == XKV_MC_BIN_GETK || h.opcode == XKV_MC_BIN_GETKQ;
	set = h.opcode == XKV_MC_BIN_SET || h.opcode == XKV_MC_BIN_SETQ;
	if (!get && !set && h.opcode != XKV_MC_BIN_DELETE && h.opcode != XKV_MC_BIN_DELETEQ)
		return XKV_MC_UDP_UNKNOWN;
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX ||
	    h.extras_len != (set ? XKV_MC_SET_EXTRAS : 0) || key_len + h.extras_len > body_len)
		return XKV_MC_UDP_BAD_FORMAT;
	value_len = body_len - h.extras_len - key_len;
	write_key(msg, get ? XKV_OP_GET : set ? XKV_OP_PUT : XKV_OP_DELETE, body + h.extras_len,
		  key_len);
	/* (no value can be over XKV_VALUE_MAX: the datagram is at most 64 KiB) */
	if (h.data_type || (value_len && !set))
		return XKV_MC_UDP_BAD_FORMAT;
	/* a compare-and-swap needs the writer's memcached semantics: over TCP only */
	if (!get && h.cas)
		return XKV_MC_UDP_UNSUPPORTED;
	msg->mc.quiet = h.opcode == XKV_MC_BIN_GETQ || h.opcode == XKV_MC_BIN_GETKQ ||
			h.opcode == XKV_MC_BIN_SETQ || h.opcode == XKV_MC_BIN_DELETEQ;
	if (get) {
		msg->mc.with_cas = true;
		msg->mc.with_key = h.opcode == XKV_MC_BIN_GETK || h.opcode == XKV_MC_BIN_GETKQ;
	} else if (set) {
		memcpy(extras, body, sizeof(extras)); /* flags, expiration; any alignment */
		msg->mc.cmd.flags = ntohl(extras[0]);
		msg->mc.cmd.exptime = ntohl(extras[1]); /* unsigned, unlike the text's */
		msg->frag = body + h.extras_len + key_len;
		msg->value_len = msg->frag_len = value_len;
	}
	return XKV_MC_UDP_OK;
}

enum xkv_mc_verdict xkv_mc_decode(const void *buf, size_t len, struct xkv_msg *msg)
{
	const uint8_t *p = (const uint8_t *)buf + sizeof(struct xkv_mc_frame);
	struct xkv_mc_frame f;

	*msg = (struct xkv_msg){0};
	/* one request per datagram: sequence 0 of 1, as memcached serves UDP */
	if (len <= sizeof(f) || len > UINT16_MAX)
		return XKV_MC_UDP_DROP;
	memcpy(&f, buf, sizeof(f));
	if (f.seq || ntohs(f.total) != 1 || f.reserved)
		return XKV_MC_UDP_DROP;
	msg->request_id = ntohs(f.request_id);
	msg->mc.size = (uint16_t)len;
	len -= sizeof(f);
	if (p[0] == XKV_MC_BIN_REQUEST)
		return binary_decode(p, len, msg);
	if (p[0] == XKV_MC_BIN_RESPONSE)
		return XKV_MC_UDP_DROP; /* a reply sent to the server, as XDP drops it */
	return ascii_decode((const char *)p, len, msg);
}

bool xkv_mc_next_key(const char **keys, uint16_t *len, const void **key, uint16_t *key_len)
{
	struct span rest = {*keys, *len}, tok;

	if (!next_token(&rest, &tok))
		return false;
	*keys = rest.p;
	*len = (uint16_t)rest.len;
	*key = tok.p;
	*key_len = (uint16_t)tok.len;
	return true;
}

/* " v" at p, v in decimal; returns the end. Every GET hit writes two or three. */
static char *put_number(char *p, uint64_t v)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	*p++ = ' ';
	while (n)
		*p++ = digits[--n];
	return p;
}

size_t xkv_mc_value_line(char *p, const void *key, uint16_t key_len, uint32_t flags,
			 uint32_t bytes, const uint64_t *cas)
{
	char *end = p + 6;

	memcpy(p, "VALUE ", 6);
	memcpy(end, key, key_len);
	end = put_number(end + key_len, flags);
	end = put_number(end, bytes);
	if (cas)
		end = put_number(end, *cas);
	memcpy(end, "\r\n", 2);
	return (size_t)(end + 2 - p);
}

const char *xkv_mc_error_line(enum xkv_mc_verdict v)
{
	switch (v) {
	case XKV_MC_UDP_BAD_FORMAT:
		return "CLIENT_ERROR bad command line format\r\n";
	case XKV_MC_UDP_BAD_CHUNK:
		return "CLIENT_ERROR bad data chunk\r\n";
	case XKV_MC_UDP_TOO_LARGE:
		return "SERVER_ERROR object too large for cache\r\n";
	case XKV_MC_UDP_DELETE_USAGE:
		return "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n";
	case XKV_MC_UDP_UNSUPPORTED:
		return "SERVER_ERROR not supported over UDP\r\n";
	default:
		return "ERROR\r\n";
	}
}

uint16_t xkv_mc_bin_error_status(enum xkv_mc_verdict v)
{
	switch (v) {
	case XKV_MC_UDP_UNKNOWN:
		return XKV_MC_BIN_S_UNKNOWN;
	case XKV_MC_UDP_UNSUPPORTED:
		return XKV_MC_BIN_S_NOT_SUPPORTED;
	default:
		return XKV_MC_BIN_S_EINVAL;
	}
}
