// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mc_number.h"

/* The token NUL-terminated, as memcached's tokenizer leaves it; false if absurdly long. */
static bool token_cstr(const char *p, size_t len, char *buf, size_t cap)
{
	if (len >= cap)
		return false;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return true;
}

/* strtoull or strtoll over the whole token, as memcached's safe_strto* check them. */
static bool number(const char *p, size_t len, bool is_signed, uint64_t *out)
{
	char buf[64], *end;

	if (!token_cstr(p, len, buf, sizeof(buf)))
		return false;
	errno = 0;
	*out = is_signed ? (uint64_t)strtoll(buf, &end, 10) : strtoull(buf, &end, 10);
	if (errno == ERANGE || end == buf || *end != '\0')
		return false;
	/* a huge unsigned one that a minus sign made */
	return is_signed || (int64_t)*out >= 0 || !memchr(buf, '-', len);
}

bool xkv_mc_number_u32(const char *p, size_t len, uint32_t *out)
{
	uint64_t n;

	if (!number(p, len, false, &n))
		return false;
	*out = (uint32_t)n;
	return true;
}

bool xkv_mc_number_u64(const char *p, size_t len, uint64_t *out)
{
	return number(p, len, false, out);
}

bool xkv_mc_number_i32(const char *p, size_t len, int32_t *out)
{
	uint64_t n;

	if (!number(p, len, true, &n))
		return false;
	*out = (int32_t)n; /* memcached stores strtol's long in an int32_t */
	return true;
}
