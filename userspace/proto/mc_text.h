/* SPDX-License-Identifier: MIT */
/*
 * memcached's text protocol, its meta commands and its binary protocol, one session
 * per TCP connection (docs/MEMCACHED.md). The session parses whole commands out of what the connection
 * received, answers reads at once through the backend, hands each write to the
 * backend (which runs it on the key's partition writer, perhaps later), and formats
 * every reply byte as memcached 1.6 does. It knows nothing of sockets or the store.
 */
#ifndef XKV_MC_TEXT_H
#define XKV_MC_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/mc_buf.h"
#include "proto/codec.h"
#include "proto/mc_cmd.h"

/* "version" and stats' version: the memcached it answers like, for clients that check */
#define XKV_MC_VERSION "1.6.18-xkv"

struct xkv_mc_backend {
	/*
	 * A read, served at once from any thread: as xkv_store_get_meta (0, -ENOENT, or
	 * -ENOBUFS with *value_len set when cap is too small).
	 */
	int (*read)(void *ctx, const void *key, uint16_t key_len, uint64_t hash, void *buf,
		    size_t cap, uint32_t *value_len, struct xkv_item_meta *meta);
	/* A look that is no read (me): as xkv_store_peek_meta, 0 or -ENOENT. */
	int (*peek)(void *ctx, const void *key, uint16_t key_len, uint64_t hash,
		    struct xkv_item_meta *meta);
	/*
	 * A write for the partition's writer (XKV_DIALECT_MC_TCP, its command in
	 * w->mc.cmd; hash is its key's): 0 with *r filled, or -EINPROGRESS: its result
	 * comes later through xkv_mc_session_resume. w and what it points to are valid
	 * during the call only: a write handed over copies them.
	 */
	int (*write)(void *ctx, const struct xkv_msg *w, uint64_t hash, struct xkv_mc_result *r);
	/* "stats": appends STAT lines (the session adds END); NULL: none */
	void (*stats)(void *ctx, struct xkv_mc_buf *out);
	/* "stats settings": the same, of the server's settings; NULL: none */
	void (*stats_settings)(void *ctx, struct xkv_mc_buf *out);
	/*
	 * "stats items", "stats slabs": memcached's lines per slab class, of the store's
	 * classes (docs/MEMCACHED.md); NULL: none
	 */
	void (*stats_items)(void *ctx, struct xkv_mc_buf *out);
	void (*stats_slabs)(void *ctx, struct xkv_mc_buf *out);
	/* "stats reset": the counters "stats" reports start again from 0; NULL: none to */
	void (*stats_reset)(void *ctx);
	/*
	 * "flush_all [delay]": delay as the client sent it, by memcached's exptime rule
	 * (0 or less: now; up to 30 days: seconds from now; more: a Unix time).
	 */
	int (*flush)(void *ctx, int32_t delay);
	/*
	 * "cache_memlimit": the memory limit becomes bytes; 0, or -ERANGE for more than
	 * the server can hold. NULL: every limit refused so.
	 */
	int (*memlimit)(void *ctx, size_t bytes);
	/*
	 * "refresh_certs": TLS's certificate, key and CAs loaded again from their files;
	 * 0, -ENOTSUP without TLS, or another -errno with why written. NULL: no TLS.
	 */
	int (*refresh_certs)(void *ctx, char *why, size_t why_len);
	/* The store's clock (xkv_store_now): exptimes and the TTLs meta commands return. */
	uint32_t (*now)(void *ctx);
	/*
	 * A command was answered (its reply appended), bytes being its data and reply's
	 * together; for timing it. NULL: not called.
	 */
	void (*answered)(void *ctx, size_t bytes);
	void *ctx;
};

/* Per connection; the fields are the session's own. */
struct xkv_mc_session {
	const struct xkv_mc_backend *backend;
	/* from the connection's first byte, as memcached negotiates: binary or text */
	bool negotiated, binary;
	uint64_t swallow; /* bytes of a refused value still to skip */
	bool waiting;	  /* a write is in progress: feed consumes nothing until resume */
	/*
	 * The command whose write is in progress, copied (its line only, or a binary
	 * request's header, extras and key): resume formats the reply from it, and gat
	 * goes on with its next key.
	 */
	char *line;
	size_t line_len, line_cap;
	uint32_t key_index; /* gat, gats: the key whose touch is in progress */
};

void xkv_mc_session_init(struct xkv_mc_session *s, const struct xkv_mc_backend *backend);
void xkv_mc_session_free(struct xkv_mc_session *s);

/*
 * Consumes whole commands from in[0..len), appending their replies to out; returns
 * the bytes consumed. A partial command is left for the next call with more bytes.
 * Stops early when a write is in progress (xkv_mc_session_waiting) or the connection
 * must close (*close set: quit, a line too long, an allocation that failed).
 */
size_t xkv_mc_session_feed(struct xkv_mc_session *s, const char *in, size_t len,
			   struct xkv_mc_buf *out, bool *close);

/*
 * The result of the write in progress: appends its reply. gat and gats may start
 * their next key's touch from here, and be waiting again.
 */
void xkv_mc_session_resume(struct xkv_mc_session *s, const struct xkv_mc_result *r,
			   struct xkv_mc_buf *out);

static inline bool xkv_mc_session_waiting(const struct xkv_mc_session *s)
{
	return s->waiting;
}

#endif /* XKV_MC_TEXT_H */
