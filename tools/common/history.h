/* SPDX-License-Identifier: MIT */
/*
 * A writer of operation histories for xkv-lincheck (docs/LINEARIZABILITY.md): one
 * operation a line, "CLIENT OP KEY ARG INVOKE_NS RETURN_NS RESULT". A value is
 * named by its token, XXH3_64bits of its bytes, so writers must make every value
 * they write unique. Not thread-safe: one writer per file, or a lock around it.
 */
#ifndef XKV_TOOLS_HISTORY_H
#define XKV_TOOLS_HISTORY_H

#include <stddef.h>
#include <stdint.h>

enum history_op {
	HISTORY_PUT,
	HISTORY_GET,
	HISTORY_DEL,
};

enum history_result {
	HISTORY_OK,	 /* put: applied; del: the key existed and was removed */
	HISTORY_NONE,	 /* get, del: not found */
	HISTORY_VALUE,	 /* get: found, its token in history_rec.token */
	HISTORY_UNKNOWN, /* put, del: no reply came; a get without reply is left out */
	/* del: applied, and the reply does not say whether the key existed (a replicated
	 * key's: docs/DIRECTORY.md, "The servers") */
	HISTORY_DONE,
};

struct history_rec {
	uint32_t client; /* the thread or source that issued it */
	uint8_t op;	 /* enum history_op */
	uint8_t result;	 /* enum history_result */
	const void *key;
	size_t key_len;
	uint64_t token;	    /* put: the value's; a get's HISTORY_VALUE: the value read */
	uint64_t invoke_ns; /* one clock for the whole history */
	uint64_t return_ns; /* >= invoke_ns; ignored when the result is HISTORY_UNKNOWN */
};

struct history;

/* The token of a value: XXH3_64bits of its bytes. */
uint64_t history_token(const void *value, size_t len);

/* Creates (truncates) path and writes the format's first line. NULL + errno. */
struct history *history_open(const char *path);

/*
 * Appends one operation; 0, or -EINVAL for a result the op cannot have or a return
 * before the invocation, or -errno from writing. A get of unknown outcome is left
 * out (it constrains nothing): 0, nothing written.
 */
int history_write(struct history *h, const struct history_rec *r);

/* Flushes and closes; 0 or -errno (a failed write or close). h may be NULL. */
int history_close(struct history *h);

#endif /* XKV_TOOLS_HISTORY_H */
