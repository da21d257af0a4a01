// SPDX-License-Identifier: MIT
/* userspace/util: the JSON writer, the number parsers and the option tables. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/json.h"
#include "util/opts.h"
#include "util/parse.h"

/* A writer into memory: what it wrote is checked whole. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct xkv_json w;
};

static void capture_open(struct capture *c)
{
	c->f = open_memstream(&c->text, &c->len);
	cr_assert_not_null(c->f);
	xkv_json_init(&c->w, c->f);
}

/* Finishes the document, expects err from it and the text want. */
static void capture_expect(struct capture *c, int err, const char *want)
{
	cr_expect_eq(xkv_json_finish(&c->w), err, "finish returns %d", err);
	fclose(c->f);
	cr_expect_str_eq(c->text, want);
	free(c->text);
}

static void expect_string(const char *s, const char *want)
{
	struct capture c;

	capture_open(&c);
	xkv_json_string(&c.w, s);
	capture_expect(&c, 0, want);
}

Test(json, strings_are_escaped)
{
	expect_string("plain", "\"plain\"\n");
	expect_string("", "\"\"\n");
	expect_string("a\"b\\c/d", "\"a\\\"b\\\\c/d\"\n");
	expect_string("tab\tnl\ncr\r", "\"tab\\u0009nl\\u000acr\\u000d\"\n");
	expect_string("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"\n");
}

Test(json, utf8_passes_and_bad_bytes_are_replaced)
{
	expect_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
	expect_string("a\xff-b", "\"a\\ufffd-b\"\n");
	expect_string("cut \xc3", "\"cut \\ufffd\"\n");
	/* an overlong '/', and a surrogate half: both refused by RFC 3629 */
	expect_string("\xc0\xaf", "\"\\ufffd\\ufffd\"\n");
	expect_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n");
}

Test(json, nesting_and_commas)
{
	struct capture c;

	capture_open(&c);
	xkv_json_object_start(&c.w);
	xkv_json_string_field(&c.w, "name", "eth0");
	xkv_json_key(&c.w, "empty");
	xkv_json_object_start(&c.w);
	xkv_json_object_end(&c.w);
	xkv_json_key(&c.w, "list");
	xkv_json_array_start(&c.w);
	xkv_json_uint(&c.w, 1);
	xkv_json_array_start(&c.w);
	xkv_json_array_end(&c.w);
	xkv_json_object_start(&c.w);
	xkv_json_bool_field(&c.w, "yes", true);
	xkv_json_bool_field(&c.w, "no", false);
	xkv_json_object_end(&c.w);
	xkv_json_array_end(&c.w);
	xkv_json_uint_field(&c.w, "last", 2);
	xkv_json_object_end(&c.w);
	capture_expect(
	    &c, 0,
	    "{\"name\":\"eth0\",\"empty\":{},\"list\":[1,[],{\"yes\":true,\"no\":false}],"
	    "\"last\":2}\n");
}

Test(json, keys_are_escaped_too)
{
	struct capture c;

	capture_open(&c);
	xkv_json_object_start(&c.w);
	xkv_json_uint_field(&c.w, "a\"b", 1);
	xkv_json_object_end(&c.w);
	capture_expect(&c, 0, "{\"a\\\"b\":1}\n");
}

Test(json, numbers)
{
	struct capture c;

	capture_open(&c);
	xkv_json_array_start(&c.w);
	xkv_json_uint(&c.w, 0);
	xkv_json_uint(&c.w, UINT64_MAX);
	xkv_json_double(&c.w, 0.1);
	xkv_json_double(&c.w, 0.95);
	xkv_json_double(&c.w, 1.0 / 3);
	xkv_json_double(&c.w, -2.5e-300);
	xkv_json_double(&c.w, 1e21);
	xkv_json_double(&c.w, NAN);
	xkv_json_double(&c.w, -INFINITY);
	xkv_json_fixed(&c.w, 2.0 / 3, 3);
	xkv_json_fixed(&c.w, 1234567.25, 1);
	xkv_json_fixed(&c.w, INFINITY, 3);
	xkv_json_array_end(&c.w);
	capture_expect(&c, 0,
		       "[0,18446744073709551615,0.1,0.95,0.33333333333333331,-2.5e-300,1e+21,"
		       "null,null,0.667,1234567.2,null]\n");
}

Test(json, doubles_read_back_exactly)
{
	const double values[] = {
	    1.0 / 3, M_PI, 1e-7, 123456789.123456789, 5e-324, 1.7976931348623157e308};

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct capture c;

		capture_open(&c);
		xkv_json_double(&c.w, values[i]);
		cr_assert_eq(xkv_json_finish(&c.w), 0);
		fclose(c.f);
		cr_expect_eq(strtod(c.text, NULL), values[i], "%s reads back as %.17g", c.text,
			     values[i]);
		free(c.text);
	}
}

/* Each misuse stops the writer where it happened and fails the document. */
Test(json, misuse_is_refused)
{
	struct capture c;

	capture_open(&c);
	xkv_json_object_start(&c.w);
	xkv_json_uint(&c.w, 1); /* no key */
	xkv_json_object_end(&c.w);
	capture_expect(&c, -EINVAL, "{");

	capture_open(&c);
	xkv_json_array_start(&c.w);
	xkv_json_key(&c.w, "k"); /* a key in an array */
	capture_expect(&c, -EINVAL, "[");

	capture_open(&c);
	xkv_json_array_start(&c.w);
	xkv_json_object_end(&c.w); /* the wrong end */
	capture_expect(&c, -EINVAL, "[");

	capture_open(&c);
	xkv_json_object_start(&c.w);
	xkv_json_key(&c.w, "k");
	xkv_json_object_end(&c.w); /* a key without its value */
	capture_expect(&c, -EINVAL, "{\"k\":");

	capture_open(&c);
	xkv_json_uint(&c.w, 1);
	xkv_json_uint(&c.w, 2); /* two documents */
	capture_expect(&c, -EINVAL, "1");

	capture_open(&c);
	xkv_json_array_start(&c.w); /* left open */
	capture_expect(&c, -EINVAL, "[");

	capture_open(&c); /* nothing at all */
	capture_expect(&c, -EINVAL, "");
}

Test(json, nesting_has_a_limit)
{
	struct capture c;
	char want[XKV_JSON_DEPTH_MAX * 2 + 2];

	capture_open(&c);
	for (int i = 0; i < XKV_JSON_DEPTH_MAX; i++)
		xkv_json_array_start(&c.w);
	for (int i = 0; i < XKV_JSON_DEPTH_MAX; i++)
		xkv_json_array_end(&c.w);
	memset(want, '[', XKV_JSON_DEPTH_MAX);
	memset(want + XKV_JSON_DEPTH_MAX, ']', XKV_JSON_DEPTH_MAX);
	strcpy(want + 2 * XKV_JSON_DEPTH_MAX, "\n");
	capture_expect(&c, 0, want);

	capture_open(&c);
	for (int i = 0; i <= XKV_JSON_DEPTH_MAX; i++)
		xkv_json_array_start(&c.w);
	want[XKV_JSON_DEPTH_MAX] = 0;
	capture_expect(&c, -EINVAL, want);
}

Test(parse, whole_numbers)
{
	uint64_t v = 7;
	uint32_t v32 = 7;

	cr_expect_eq(xkv_parse_u64("0", 0, 10, &v), 0);
	cr_expect_eq(v, 0);
	cr_expect_eq(xkv_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	cr_expect_eq(v, UINT64_MAX);
	cr_expect_eq(xkv_parse_u64("0x1F", 0, 100, &v), 0);
	cr_expect_eq(v, 31);
	cr_expect_eq(xkv_parse_u64("010", 0, 100, &v), 0, "no octal: a leading 0 is decimal");
	cr_expect_eq(v, 10);
	cr_expect_eq(xkv_parse_u32("4294967295", 0, UINT32_MAX, &v32), 0);
	cr_expect_eq(v32, UINT32_MAX);
}

Test(parse, whole_numbers_out_of_range)
{
	uint64_t v = 7;
	uint32_t v32 = 7;

	cr_expect_eq(xkv_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	cr_expect_eq(xkv_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	cr_expect_eq(xkv_parse_u64("11", 1, 10, &v), -ERANGE);
	cr_expect_eq(xkv_parse_u64("0", 1, 10, &v), -ERANGE);
	cr_expect_eq(xkv_parse_u64("-1", 0, UINT64_MAX, &v), -ERANGE, "negative, not 2^64 - 1");
	cr_expect_eq(xkv_parse_u32("4294967296", 0, UINT32_MAX, &v32), -ERANGE);
	cr_expect_eq(xkv_parse_u32("65536", 1, 65535, &v32), -ERANGE);
	cr_expect_eq(v, 7, "untouched on error");
	cr_expect_eq(v32, 7, "untouched on error");
	cr_expect_eq(xkv_parse_u64("-0", 0, 1, &v), 0, "minus zero is zero");
}

Test(parse, not_whole_numbers)
{
	static const char *const bad[] = {
	    "",	   " 1", "1 ",	"+1",  "1x", "x1", "1.5",
	    "1e3", "0x", "0xg", "--1", "-",  "-x", "12345678901234567890123x",
	    "\t1",
	};
	uint64_t v = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(xkv_parse_u64(bad[i], 0, UINT64_MAX, &v), -EINVAL, "\"%s\"", bad[i]);
	cr_expect_eq(v, 7);
}

Test(parse, doubles)
{
	static const char *const bad[] = {"",	  " 1",	 "1 ", "1x", "x",  "inf",
					  "-inf", "nan", ".",  "1e", "1,5"};
	double v = 7;

	cr_expect_eq(xkv_parse_double("0.95", 0, 1, &v), 0);
	cr_expect_eq(v, 0.95);
	cr_expect_eq(xkv_parse_double("-2.5e3", -1e4, 0, &v), 0);
	cr_expect_eq(v, -2500);
	cr_expect_eq(xkv_parse_double("1", 1, 1, &v), 0, "the bounds are in the range");
	cr_expect_eq(xkv_parse_double("1.0001", 0, 1, &v), -ERANGE);
	cr_expect_eq(xkv_parse_double("-0.1", 0, 1, &v), -ERANGE);
	cr_expect_eq(xkv_parse_double("1e999", 0, INFINITY, &v), -ERANGE);
	cr_expect_eq(v, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(xkv_parse_double(bad[i], -INFINITY, INFINITY, &v), -EINVAL, "\"%s\"",
			     bad[i]);
	cr_expect_eq(v, 1);
}

Test(parse, sizes)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
	    {"0", 0},		{"4096", 4096},
	    {"64K", 64 << 10},	{"64k", 64 << 10},
	    {"64M", 64 << 20},	{"2G", 2ULL << 30},
	    {"2g", 2ULL << 30}, {"17179869183G", 17179869183ULL << 30},
	};
	static const char *const bad[] = {"",	  "K",	"1T",  "1KB", "1 K",
					  "1.5G", "G1", "1KK", "1Ki", "M64"};
	uint64_t v = 7;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_expect_eq(xkv_parse_size(good[i].text, 0, UINT64_MAX, &v), 0, "%s",
			     good[i].text);
		cr_expect_eq(v, good[i].bytes, "%s", good[i].text);
	}
	v = 7;
	cr_expect_eq(xkv_parse_size("17179869184G", 0, UINT64_MAX, &v), -ERANGE, "2^64 bytes");
	cr_expect_eq(xkv_parse_size("2G", 0, 1ULL << 30, &v), -ERANGE);
	cr_expect_eq(xkv_parse_size("-1K", 0, UINT64_MAX, &v), -ERANGE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(xkv_parse_size(bad[i], 0, UINT64_MAX, &v), -EINVAL, "\"%s\"", bad[i]);
	cr_expect_eq(v, 7);
}

enum { T_PORT, T_JSON, T_SIZE, T_RATIO, T_NAME, T_SECRET, T_VERBOSE };

static const struct xkv_opt table[] = {
	[T_PORT] = {"port", 'p', "P", "the UDP port (7411)"},
	[T_JSON] = {"json", 0, NULL, "one JSON object on stdout"},
	[T_SIZE] = {"memory", 'm', "SIZE", "item memory"},
	[T_RATIO] = {"get-ratio", 0, "R", "fraction of GETs"},
	[T_NAME] = {"a-rather-long-option", 0, "NAME",
		"its help goes on the next line, and on, and on, and wraps where a word would "
		"pass the 80th column"},
	[T_SECRET] = {"counted", 0, "OP", NULL},
	[T_VERBOSE] = {"verbose", 'v', NULL, "say more\nline two"},
};

/* Parses argv (NULL-terminated) and returns the indices seen, in order, as letters 'a' + i. */
static int parse_all(struct xkv_opts *p, unsigned flags, char **argv, char *seen, const char **args)
{
	int argc = 0, i, n = 0;

	while (argv[argc])
		argc++;
	cr_assert_eq(xkv_opts_init(p, table, XKV_OPTS_COUNT(table), flags), 0);
	while ((i = xkv_opts_next(p, argc, argv)) >= 0) {
		args[n] = p->arg;
		seen[n++] = (char)('a' + i);
	}
	seen[n] = 0;
	return i;
}

Test(opts, short_long_and_operands)
{
	char *argv[] = {"prog",	       "-p",	"80",	       "op1", "--json",
			"--memory=2G", "-vp81", "--get-ratio", "0.5", "--counted",
			"get",	       "op2",	"--",	       "-p",  NULL};
	const char *args[16];
	struct xkv_opts p;
	char seen[16];

	cr_assert_eq(parse_all(&p, 0, argv, seen, args), XKV_OPTS_END);
	cr_expect_str_eq(seen, "abcgadf");
	cr_expect_str_eq(args[0], "80");
	cr_expect_null(args[1]);
	cr_expect_str_eq(args[2], "2G");
	cr_expect_str_eq(args[4], "81");
	cr_expect_str_eq(args[5], "0.5");
	cr_expect_str_eq(args[6], "get");
	/* getopt moved the operands behind the options, "--" kept them apart */
	cr_assert_eq(optind, 11);
	cr_expect_str_eq(argv[optind], "op1");
	cr_expect_str_eq(argv[optind + 1], "op2");
	cr_expect_str_eq(argv[optind + 2], "-p");
}

Test(opts, in_order_stops_at_the_first_operand)
{
	char *argv[] = {"prog", "-v", "get", "-p", "80", NULL};
	const char *args[8];
	struct xkv_opts p;
	char seen[8];

	cr_assert_eq(parse_all(&p, XKV_OPTS_IN_ORDER, argv, seen, args), XKV_OPTS_END);
	cr_expect_str_eq(seen, "g");
	cr_expect_eq(optind, 2);
}

static void expect_error(char **argv, const char *why)
{
	const char *args[8];
	struct xkv_opts p;
	char seen[8];

	cr_expect_eq(parse_all(&p, 0, argv, seen, args), -EINVAL, "%s", why);
	cr_expect_str_eq(p.why, why);
}

Test(opts, errors_name_the_option)
{
	expect_error((char *[]){"prog", "--bogus", NULL}, "unknown or ambiguous option --bogus");
	expect_error((char *[]){"prog", "-x", NULL}, "unknown option -x");
	expect_error((char *[]){"prog", "--port", NULL}, "--port needs a value, P");
	expect_error((char *[]){"prog", "-p", NULL}, "--port needs a value, P");
	expect_error((char *[]){"prog", "--json=1", NULL}, "--json takes no value");
	/* a unique prefix names its option */
	expect_error((char *[]){"prog", "--jso", "--co", "x", "--bogus=1", NULL},
		     "unknown or ambiguous option --bogus=1");
}

Test(opts, a_second_parse_starts_afresh)
{
	char *first[] = {"prog", "-p", "1", NULL}, *second[] = {"prog", "-v", NULL};
	const char *args[4];
	struct xkv_opts p;
	char seen[4];

	cr_assert_eq(parse_all(&p, 0, first, seen, args), XKV_OPTS_END);
	cr_expect_str_eq(seen, "a");
	cr_assert_eq(parse_all(&p, 0, second, seen, args), XKV_OPTS_END);
	cr_expect_str_eq(seen, "g");
}

/* The value of option `index` given as arg, as xkv_opts_next would leave it. */
static void at_option(struct xkv_opts *p, int index, const char *arg)
{
	cr_assert_eq(xkv_opts_init(p, table, XKV_OPTS_COUNT(table), 0), 0);
	p->current = index;
	p->arg = arg;
}

Test(opts, values_and_their_errors)
{
	struct xkv_opts p;
	uint64_t v64;
	uint32_t v32;
	double d;

	at_option(&p, T_PORT, "8080");
	cr_expect_eq(xkv_opts_u32(&p, 1, 65535, &v32), 0);
	cr_expect_eq(v32, 8080);
	at_option(&p, T_PORT, "0");
	cr_expect_eq(xkv_opts_u32(&p, 1, 65535, &v32), -ERANGE);
	cr_expect_str_eq(p.why, "--port 0: expected a whole number in 1..65535");
	at_option(&p, T_PORT, "x");
	cr_expect_eq(xkv_opts_u64(&p, 0, UINT64_MAX, &v64), -EINVAL);
	cr_expect_str_eq(p.why, "--port x: expected a whole number");
	at_option(&p, T_PORT, "-3");
	cr_expect_eq(xkv_opts_u64(&p, 1, UINT64_MAX, &v64), -ERANGE);
	cr_expect_str_eq(p.why, "--port -3: expected a whole number, 1 or more");
	at_option(&p, T_RATIO, "1.5");
	cr_expect_eq(xkv_opts_double(&p, 0, 1, &d), -ERANGE);
	cr_expect_str_eq(p.why, "--get-ratio 1.5: expected a number in 0..1");
	at_option(&p, T_RATIO, "");
	cr_expect_eq(xkv_opts_double(&p, 0.5, INFINITY, &d), -EINVAL);
	cr_expect_str_eq(p.why, "--get-ratio : expected a number, 0.5 or more");
	at_option(&p, T_SIZE, "64M");
	cr_expect_eq(xkv_opts_size(&p, 1, UINT64_MAX, &v64), 0);
	cr_expect_eq(v64, 64 << 20);
	at_option(&p, T_SIZE, "64Q");
	cr_expect_eq(xkv_opts_size(&p, 1, UINT64_MAX, &v64), -EINVAL);
	cr_expect_str_eq(p.why, "--memory 64Q: expected a size in bytes, K, M or G, 1 or more");
	at_option(&p, T_NAME, "zz");
	cr_expect_eq(xkv_opts_bad_value(&p, "xdp or uring"), -EINVAL);
	cr_expect_str_eq(p.why, "--a-rather-long-option zz: expected xdp or uring");
}

Test(opts, usage_comes_from_the_table)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	xkv_opts_usage(f, table, XKV_OPTS_COUNT(table));
	fclose(f);
	cr_expect_str_eq(text, "  -p, --port P                the UDP port (7411)\n"
			       "      --json                  one JSON object on stdout\n"
			       "  -m, --memory SIZE           item memory\n"
			       "      --get-ratio R           fraction of GETs\n"
			       "      --a-rather-long-option NAME\n"
			       "                              "
			       "its help goes on the next line, and on, and on,\n"
			       "                              "
			       "and wraps where a word would pass the 80th column\n"
			       "  -v, --verbose               say more\n"
			       "                              line two\n");
	free(text);
}

Test(opts, a_table_has_a_limit)
{
	static struct xkv_opt many[XKV_OPTS_MAX + 1];
	struct xkv_opts p;

	cr_expect_eq(xkv_opts_init(&p, many, XKV_OPTS_MAX + 1, 0), -EINVAL);
}

/*
 * The clock each request is timed with (util/clock.h) agrees with CLOCK_MONOTONIC, on
 * which XDP stamps arrivals, to a microsecond over a round far longer than any
 * worker's: a TSC rate off by 0.01 % would be 2 us off here.
 */
Test(clock, the_fast_clock_follows_the_monotonic_one)
{
	struct xkv_fast_clock c;
	uint64_t start, before, fast, mono;

	xkv_fast_clock_init(&c);
	start = xkv_now_ns();
	do {
		before = xkv_now_ns();
		fast = xkv_fast_clock_now(&c);
		mono = xkv_now_ns();
	} while (mono - start < 20000000);
	/* read between two monotonic reads: a vCPU stalled between them widens the window */
	cr_assert(fast + 2000 >= before && fast <= mono + 2000,
		  "fast %lu, monotonic %lu before and %lu after", fast, before, mono);
}
