/* SPDX-License-Identifier: MIT */
/*
 * What the text commands (mc_text.c), the meta commands (mc_meta.c) and the binary
 * ones (mc_binary.c) share: one command line cut into tokens, memcached's number
 * parsing, the read and write paths, the stats groups. Nothing outside those files
 * includes it.
 */
#ifndef XKV_MC_SESSION_H
#define XKV_MC_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/mc_number.h"
#include "proto/mc_text.h"

#define MC_TOKENS_MAX 24 /* as memcached's MAX_TOKENS; get and gat walk their keys instead */
#define MC_KEY_MAX    250

struct mc_tok {
	const char *p;
	uint32_t len;
};

/* One command line, without its "\r\n", cut at spaces as memcached cuts it. */
struct mc_line {
	const char *p;
	size_t len;
	struct mc_tok tok[MC_TOKENS_MAX];
	uint32_t ntok; /* tokens found, at most MC_TOKENS_MAX */
};

/*
 * A command's data block after its line: data[0..avail) is what has arrived. A
 * command returns the data bytes it consumed, or MC_NEED_MORE. With done set (resume)
 * there is no data: the command only formats its reply from done.
 */
struct mc_ctx {
	struct xkv_mc_session *s;
	const struct mc_line *line;
	const char *data;
	size_t avail;
	struct xkv_mc_buf *out;
	const struct xkv_mc_result *done;
	bool *close;
};
#define MC_NEED_MORE (-1)

/* The next token at or after *p, before end; false when none is left. */
bool mc_next_token(const char **p, const char *end, struct mc_tok *t);
bool mc_tok_is(const struct mc_tok *t, const char *word);
/* memcached's numbers (proto/mc_number.h) in a token */
static inline bool mc_tok_u32(const struct mc_tok *t, uint32_t *out)
{
	return xkv_mc_number_u32(t->p, t->len, out);
}

static inline bool mc_tok_u64(const struct mc_tok *t, uint64_t *out)
{
	return xkv_mc_number_u64(t->p, t->len, out);
}

static inline bool mc_tok_i32(const struct mc_tok *t, int32_t *out)
{
	return xkv_mc_number_i32(t->p, t->len, out);
}

void mc_reply(struct xkv_mc_buf *out, const char *text); /* text, then "\r\n" */
/* Appends printf-formatted text (no "\r\n"); short pieces: header fields. */
void mc_printf(struct xkv_mc_buf *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Reads key into out, leaving room free bytes before the value for its header:
 * 0 (the value at out->data + out->len + room, out->len unchanged), -ENOENT, -ENOMEM.
 */
int mc_read(struct mc_ctx *c, const char *key, uint32_t key_len, size_t room, uint32_t *value_len,
	    struct xkv_item_meta *meta);
/* Closes the gap mc_read left: the header (hdr_len <= room) and the value, then "\r\n". */
void mc_put_value(struct xkv_mc_buf *out, const char *hdr, size_t hdr_len, size_t room,
		  uint32_t value_len);

/* A write command on key, its arguments in .mc.cmd still to fill (times as sent). */
struct xkv_msg mc_write_msg(enum xkv_mc_op op, const struct mc_tok *key);
/* Its value, whole. */
void mc_write_value(struct xkv_msg *w, const void *value, uint32_t len);

/*
 * Hands w to the backend: true with *r filled, or false when the write is in
 * progress (the line is kept for resume and the session waits).
 */
bool mc_write(struct mc_ctx *c, const struct xkv_msg *w, struct xkv_mc_result *r);

/* What meta's t flag shows: the seconds left, or -1 for never. */
int64_t mc_ttl(struct mc_ctx *c, uint32_t exptime);

/*
 * The STAT lines ("STAT name value\r\n", no END) of `stats` (group NULL) or of a group
 * both dialects answer with lines; false for a group xkv does not have.
 */
bool mc_stats_group(const struct xkv_mc_backend *b, const struct mc_tok *group,
		    struct xkv_mc_buf *out);

/* The binary protocol (mc_binary.c), as xkv_mc_session_feed and _resume. */
size_t mc_binary_feed(struct xkv_mc_session *s, const char *in, size_t len,
		      struct xkv_mc_buf *out, bool *close);
void mc_binary_resume(struct xkv_mc_session *s, const struct xkv_mc_result *r,
		      struct xkv_mc_buf *out);

/* The meta commands (mc_meta.c); line->tok[0] is "mg", "ms", "md", "ma" or "mn". */
int mc_meta(struct mc_ctx *c);

#endif /* XKV_MC_SESSION_H */
