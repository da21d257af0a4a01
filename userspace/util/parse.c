// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/parse.h"

/*
 * The whole number at the start of text, and in *end where it stops (unless -EINVAL).
 * strtoull alone would skip space, take a sign and turn "-1" into UINT64_MAX: the
 * digits are checked first.
 */
static int parse_whole(const char *text, uint64_t *out, const char **end)
{
	bool negative = *text == '-';
	const char *digits = text + negative;
	int base = 10;
	unsigned long long v;

	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
		base = 16;
		digits += 2;
	}
	if (base == 16 ? !isxdigit((unsigned char)*digits) : !isdigit((unsigned char)*digits))
		return -EINVAL;
	errno = 0;
	v = strtoull(digits, (char **)end, base);
	if (errno == ERANGE || (negative && v))
		return -ERANGE;
	*out = v;
	return 0;
}

static int in_range(uint64_t v, uint64_t min, uint64_t max, uint64_t *out)
{
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int xkv_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int err = parse_whole(text, &v, &end);

	/* junk after the digits makes it no number, whatever its size */
	if (err == -EINVAL || *end)
		return -EINVAL;
	return err ? err : in_range(v, min, max, out);
}

int xkv_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = xkv_parse_u64(text, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int xkv_parse_double(const char *text, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*text || isspace((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (*end || isnan(v))
		return -EINVAL;
	/* "inf" is no number; 1e999 is one, too large */
	if (isinf(v))
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (!(v >= min && v <= max))
		return -ERANGE;
	*out = v;
	return 0;
}

int xkv_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	unsigned shift = 0;
	uint64_t v;
	int err = parse_whole(text, &v, &end);

	if (err == -EINVAL)
		return err;
	switch (*end) {
	case 'G':
	case 'g':
		shift = 30;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	}
	if (shift)
		end++;
	if (*end)
		return -EINVAL;
	if (err)
		return err;
	if (v > UINT64_MAX >> shift)
		return -ERANGE;
	return in_range(v << shift, min, max, out);
}
