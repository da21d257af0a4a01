/* SPDX-License-Identifier: MIT */
/*
 * A program's options as one table, after xdp-tools: getopt_long's option array,
 * its short option string and the usage text are all made from it, so --help can
 * never miss an option that parses, nor list one that does not.
 *
 * A table is indexed by the program's own enum; xkv_opts_next returns that index:
 *
 *	enum { OPT_PORT, OPT_HELP };
 *	static const struct xkv_opt table[] = {
 *		[OPT_PORT] = {"port", 'p', "P", "the UDP port (7411)"},
 *		[OPT_HELP] = {"help", 'h', NULL, "show this help"},
 *	};
 *
 * Errors come back as -EINVAL with what was wrong in why, naming the option and
 * the value ("--port 0: expected a whole number in 1..65535"): the program prints
 * that one line the way it prints its other errors.
 */
#ifndef XKV_OPTS_H
#define XKV_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define XKV_OPTS_MAX	      64 /* options in one table */
#define XKV_OPTS_END	      (-1)
#define XKV_OPTS_COUNT(table) (sizeof(table) / sizeof((table)[0]))
#define XKV_OPTS_WHY_MAX      192
/* A macro's value as a string, for help texts that name a constant */
#define XKV_OPTS_STR(x)	      XKV_OPTS_STR_(x)
#define XKV_OPTS_STR_(x)      #x

struct xkv_opt {
	const char *name; /* the long name, without its dashes */
	char letter;	  /* the short name, or 0 */
	const char *arg;  /* the argument's name in the usage; NULL: the option takes none */
	const char *help; /* NULL: not in the usage (an option for the program itself) */
};

enum xkv_opts_flags {
	XKV_OPTS_IN_ORDER = 1 << 0, /* options end at the first operand, as with POSIX */
};

struct xkv_opts {
	const struct xkv_opt *table;
	unsigned n;
	int current;	 /* the index last returned */
	const char *arg; /* its argument, or NULL */
	char why[XKV_OPTS_WHY_MAX];
	struct option longopts[XKV_OPTS_MAX + 1];
	char shortopts[3 + 3 * XKV_OPTS_MAX];
};

/*
 * Makes getopt_long's arrays from table[0..n) and starts a new parse (getopt's state
 * is reset). Returns 0, or -EINVAL when the table is too long.
 */
int xkv_opts_init(struct xkv_opts *p, const struct xkv_opt *table, unsigned n, unsigned flags);

/*
 * The table index of the next option, its argument in p->arg; XKV_OPTS_END when the
 * options are over (optind is then the first operand's index); -EINVAL for an
 * unknown option or a missing or unwanted value, with why written.
 */
int xkv_opts_next(struct xkv_opts *p, int argc, char **argv);

/*
 * The current option's argument, checked as xkv_parse_* does (util/parse.h). Each
 * returns 0, or -EINVAL or -ERANGE with why written.
 */
int xkv_opts_u64(struct xkv_opts *p, uint64_t min, uint64_t max, uint64_t *out);
int xkv_opts_u32(struct xkv_opts *p, uint32_t min, uint32_t max, uint32_t *out);
int xkv_opts_double(struct xkv_opts *p, double min, double max, double *out);
int xkv_opts_size(struct xkv_opts *p, uint64_t min, uint64_t max, uint64_t *out);

/* For an argument the program judged itself: why says what was expected. Returns -EINVAL. */
int xkv_opts_bad_value(struct xkv_opts *p, const char *expected);

/* The table's options, one a line, with their help wrapped to 80 columns. */
void xkv_opts_usage(FILE *f, const struct xkv_opt *table, unsigned n);

#endif /* XKV_OPTS_H */
