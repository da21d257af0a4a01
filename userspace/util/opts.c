// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/opts.h"
#include "util/parse.h"

/* getopt_long's answer for table entry i given by its long name: above every char */
#define LONG_VAL(i) (256 + (int)(i))

#define USAGE_WIDTH  80
#define USAGE_COLUMN 30 /* help starts here at the latest; a longer option is on its own line */

int xkv_opts_init(struct xkv_opts *p, const struct xkv_opt *table, unsigned n, unsigned flags)
{
	char *s;

	if (n > XKV_OPTS_MAX)
		return -EINVAL;
	p->table = table;
	p->n = n;
	p->current = XKV_OPTS_END;
	p->arg = NULL;
	p->why[0] = 0;
	s = p->shortopts;
	if (flags & XKV_OPTS_IN_ORDER)
		*s++ = '+';
	*s++ = ':'; /* tells a missing value from an unknown option */
	for (unsigned i = 0; i < n; i++) {
		p->longopts[i] = (struct option){
		    .name = table[i].name,
		    .has_arg = table[i].arg ? required_argument : no_argument,
		    .val = LONG_VAL(i),
		};
		if (table[i].letter) {
			*s++ = table[i].letter;
			if (table[i].arg)
				*s++ = ':';
		}
	}
	*s = 0;
	p->longopts[n] = (struct option){0};
	optind = 0; /* getopt starts afresh, its scanning order too */
	opterr = 0; /* the caller prints why */
	return 0;
}

/* The table index of getopt's answer c, or -1. */
static int index_of(const struct xkv_opts *p, int c)
{
	if (c >= LONG_VAL(0))
		return c - LONG_VAL(0);
	for (unsigned i = 0; i < p->n; i++)
		if (c && p->table[i].letter == c)
			return (int)i;
	return -1;
}

__attribute__((format(printf, 2, 3))) static int say_why(struct xkv_opts *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int xkv_opts_next(struct xkv_opts *p, int argc, char **argv)
{
	int c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL);
	int i;

	p->arg = optarg;
	if (c == -1)
		return XKV_OPTS_END;
	if (c != '?' && c != ':') {
		p->current = index_of(p, c);
		return p->current;
	}
	i = index_of(p, optopt);
	if (c == ':' && i >= 0)
		return say_why(p, "--%s needs a value, %s", p->table[i].name, p->table[i].arg);
	if (i >= 0 && optopt >= LONG_VAL(0))
		return say_why(p, "--%s takes no value", p->table[i].name);
	if (optopt)
		return say_why(p, "unknown option -%c", optopt);
	return say_why(p, "unknown or ambiguous option %s", argv[optind - 1]);
}

/* "--name VALUE: expected " and what follows; returns err. */
__attribute__((format(printf, 3, 4))) static int expected(struct xkv_opts *p, int err,
							  const char *fmt, ...)
{
	int len = snprintf(p->why, sizeof(p->why), "--%s %s: expected ", p->table[p->current].name,
			   p->arg);
	va_list ap;

	if (len >= 0 && (size_t)len < sizeof(p->why)) {
		va_start(ap, fmt);
		vsnprintf(p->why + len, sizeof(p->why) - (size_t)len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* " in MIN..MAX", ", MIN or more", or nothing: the range as the user sees it. */
static const char *whole_range(char *buf, size_t len, uint64_t min, uint64_t max)
{
	if (max != UINT64_MAX)
		snprintf(buf, len, " in %llu..%llu", (unsigned long long)min,
			 (unsigned long long)max);
	else if (min)
		snprintf(buf, len, ", %llu or more", (unsigned long long)min);
	else
		buf[0] = 0;
	return buf;
}

int xkv_opts_u64(struct xkv_opts *p, uint64_t min, uint64_t max, uint64_t *out)
{
	int err = xkv_parse_u64(p->arg, min, max, out);
	char range[64];

	if (!err)
		return 0;
	return expected(p, err, "a whole number%s", whole_range(range, sizeof(range), min, max));
}

int xkv_opts_u32(struct xkv_opts *p, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = xkv_opts_u64(p, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int xkv_opts_double(struct xkv_opts *p, double min, double max, double *out)
{
	int err = xkv_parse_double(p->arg, min, max, out);

	if (!err)
		return 0;
	if (isinf(max))
		return expected(p, err, "a number, %g or more", min);
	return expected(p, err, "a number in %g..%g", min, max);
}

int xkv_opts_size(struct xkv_opts *p, uint64_t min, uint64_t max, uint64_t *out)
{
	int err = xkv_parse_size(p->arg, min, max, out);
	char range[64];

	if (!err)
		return 0;
	return expected(p, err, "a size in bytes, K, M or G%s",
			whole_range(range, sizeof(range), min, max));
}

int xkv_opts_bad_value(struct xkv_opts *p, const char *what)
{
	return expected(p, -EINVAL, "%s", what);
}

/* "  -p, --port P" or "      --json": the option as the usage shows it. */
static int option_text(char *buf, size_t len, const struct xkv_opt *o)
{
	return snprintf(buf, len, "  %c%c%c --%s%s%s", o->letter ? '-' : ' ',
			o->letter ? o->letter : ' ', o->letter ? ',' : ' ', o->name,
			o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Writes text from column `at` on, breaking lines at spaces (or its own '\n') to fit. */
static void print_wrapped(FILE *f, const char *text, int column, int at)
{
	while (*text) {
		int word = (int)strcspn(text, " \n");

		if (at > column && at + 1 + word > USAGE_WIDTH) {
			fprintf(f, "\n%*s", column, "");
			at = column;
		} else if (at > column) {
			fputc(' ', f);
			at++;
		}
		fwrite(text, 1, (size_t)word, f);
		at += word;
		text += word;
		if (*text == '\n') {
			fprintf(f, "\n%*s", column, "");
			at = column;
			text++;
		}
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void xkv_opts_usage(FILE *f, const struct xkv_opt *table, unsigned n)
{
	char text[128];
	int column = 0;

	for (unsigned i = 0; i < n; i++) {
		int len = option_text(text, sizeof(text), &table[i]) + 2;

		if (table[i].help && len > column)
			column = len < USAGE_COLUMN ? len : USAGE_COLUMN;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct xkv_opt *o = &table[i];
		int len;

		if (!o->help)
			continue;
		len = option_text(text, sizeof(text), o);
		if (len + 2 > column)
			fprintf(f, "%s\n%*s", text, column, "");
		else
			fprintf(f, "%-*s", column, text);
		print_wrapped(f, o->help, column, column);
	}
}
