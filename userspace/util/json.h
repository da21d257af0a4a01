/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer, after bpftool's json_writer: the caller opens and
 * closes objects and arrays and names members; the writer puts the commas and
 * colons, escapes strings (RFC 8259) and writes compact JSON, one document a line.
 *
 * Misuse (a value in an object without a key, a key in an array, an end that does
 * not match, nesting deeper than XKV_JSON_DEPTH_MAX) stops the writer: nothing more
 * is written and xkv_json_finish says so.
 */
#ifndef XKV_JSON_H
#define XKV_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define XKV_JSON_DEPTH_MAX 16

struct xkv_json {
	FILE *out;
	int err;	 /* the first misuse (-EINVAL); nothing is written after one */
	unsigned depth;	 /* containers open */
	bool wrote_top;	 /* the one top-level value has begun */
	bool want_value; /* a key was written: its value comes next */
	bool in_object[XKV_JSON_DEPTH_MAX + 1]; /* by depth: an object, or an array */
	bool has_items[XKV_JSON_DEPTH_MAX + 1]; /* by depth: a comma precedes the next item */
};

void xkv_json_init(struct xkv_json *w, FILE *out);

void xkv_json_object_start(struct xkv_json *w);
void xkv_json_object_end(struct xkv_json *w);
void xkv_json_array_start(struct xkv_json *w);
void xkv_json_array_end(struct xkv_json *w);

/* A member's name, in an object; its value is the next thing written. */
void xkv_json_key(struct xkv_json *w, const char *key);

/* Any bytes: invalid UTF-8 becomes U+FFFD, so the document stays valid. */
void xkv_json_string(struct xkv_json *w, const char *s);
void xkv_json_uint(struct xkv_json *w, uint64_t v);
/* As few digits as read back to v; null when v is not finite (JSON has no NaN). */
void xkv_json_double(struct xkv_json *w, double v);
/* With this many decimals, for figures whose precision is known; null when not finite. */
void xkv_json_fixed(struct xkv_json *w, double v, int decimals);
void xkv_json_bool(struct xkv_json *w, bool v);

/* A key and its value at once. */
void xkv_json_string_field(struct xkv_json *w, const char *key, const char *s);
void xkv_json_uint_field(struct xkv_json *w, const char *key, uint64_t v);
void xkv_json_double_field(struct xkv_json *w, const char *key, double v);
void xkv_json_fixed_field(struct xkv_json *w, const char *key, double v, int decimals);
void xkv_json_bool_field(struct xkv_json *w, const char *key, bool v);

/*
 * Ends the document with a newline. Returns 0; -EINVAL after a misuse, or when no
 * value or an unclosed container was written; -EIO when the stream failed.
 */
int xkv_json_finish(struct xkv_json *w);

#endif /* XKV_JSON_H */
