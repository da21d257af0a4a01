// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "util/json.h"

void xkv_json_init(struct xkv_json *w, FILE *out)
{
	*w = (struct xkv_json){.out = out};
}

static void misuse(struct xkv_json *w)
{
	w->err = -EINVAL;
}

/*
 * Length of the valid UTF-8 sequence at s, 1 to 4, or 0 (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF). Reads no further than the first bad byte.
 */
static unsigned utf8_length(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	unsigned n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void write_string(FILE *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	fputc('"', out);
	while (*s) {
		unsigned n = utf8_length(s);

		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else if (!n)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, n, out);
		s += n ? n : 1;
	}
	fputc('"', out);
}

/* Before any value: its comma, or false when no value may come here. */
static bool value_begins(struct xkv_json *w)
{
	if (w->err)
		return false;
	if (!w->depth) {
		if (w->wrote_top)
			misuse(w);
		w->wrote_top = true;
	} else if (w->in_object[w->depth]) {
		if (!w->want_value)
			misuse(w);
		w->want_value = false;
	} else {
		if (w->has_items[w->depth])
			fputc(',', w->out);
		w->has_items[w->depth] = true;
	}
	return !w->err;
}

static void container_start(struct xkv_json *w, bool object)
{
	if (!value_begins(w))
		return;
	if (w->depth == XKV_JSON_DEPTH_MAX) {
		misuse(w);
		return;
	}
	w->depth++;
	w->in_object[w->depth] = object;
	w->has_items[w->depth] = false;
	fputc(object ? '{' : '[', w->out);
}

static void container_end(struct xkv_json *w, bool object)
{
	if (w->err)
		return;
	if (!w->depth || w->in_object[w->depth] != object || w->want_value) {
		misuse(w);
		return;
	}
	w->depth--;
	fputc(object ? '}' : ']', w->out);
}

void xkv_json_object_start(struct xkv_json *w)
{
	container_start(w, true);
}

void xkv_json_object_end(struct xkv_json *w)
{
	container_end(w, true);
}

void xkv_json_array_start(struct xkv_json *w)
{
	container_start(w, false);
}

void xkv_json_array_end(struct xkv_json *w)
{
	container_end(w, false);
}

void xkv_json_key(struct xkv_json *w, const char *key)
{
	if (w->err)
		return;
	if (!w->depth || !w->in_object[w->depth] || w->want_value) {
		misuse(w);
		return;
	}
	if (w->has_items[w->depth])
		fputc(',', w->out);
	w->has_items[w->depth] = true;
	write_string(w->out, key);
	fputc(':', w->out);
	w->want_value = true;
}

void xkv_json_string(struct xkv_json *w, const char *s)
{
	if (value_begins(w))
		write_string(w->out, s);
}

void xkv_json_uint(struct xkv_json *w, uint64_t v)
{
	if (value_begins(w))
		fprintf(w->out, "%" PRIu64, v);
}

void xkv_json_double(struct xkv_json *w, double v)
{
	char text[32];

	if (!value_begins(w))
		return;
	if (!isfinite(v)) {
		fputs("null", w->out);
		return;
	}
	/* 15 significant digits print 0.1 as 0.1; 17 always read back exactly */
	snprintf(text, sizeof(text), "%.15g", v);
	if (strtod(text, NULL) != v)
		snprintf(text, sizeof(text), "%.17g", v);
	fputs(text, w->out);
}

void xkv_json_fixed(struct xkv_json *w, double v, int decimals)
{
	if (!value_begins(w))
		return;
	if (isfinite(v))
		fprintf(w->out, "%.*f", decimals, v);
	else
		fputs("null", w->out);
}

void xkv_json_bool(struct xkv_json *w, bool v)
{
	if (value_begins(w))
		fputs(v ? "true" : "false", w->out);
}

void xkv_json_string_field(struct xkv_json *w, const char *key, const char *s)
{
	xkv_json_key(w, key);
	xkv_json_string(w, s);
}

void xkv_json_uint_field(struct xkv_json *w, const char *key, uint64_t v)
{
	xkv_json_key(w, key);
	xkv_json_uint(w, v);
}

void xkv_json_double_field(struct xkv_json *w, const char *key, double v)
{
	xkv_json_key(w, key);
	xkv_json_double(w, v);
}

void xkv_json_fixed_field(struct xkv_json *w, const char *key, double v, int decimals)
{
	xkv_json_key(w, key);
	xkv_json_fixed(w, v, decimals);
}

void xkv_json_bool_field(struct xkv_json *w, const char *key, bool v)
{
	xkv_json_key(w, key);
	xkv_json_bool(w, v);
}

int xkv_json_finish(struct xkv_json *w)
{
	if (!w->err && (!w->wrote_top || w->depth))
		misuse(w);
	if (w->err)
		return w->err;
	fputc('\n', w->out);
	return ferror(w->out) ? -EIO : 0;
}
