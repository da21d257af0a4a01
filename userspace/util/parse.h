/* SPDX-License-Identifier: MIT */
/*
 * Numbers from command lines and specs, read one way everywhere. A whole number is
 * decimal, or hexadecimal after 0x; a number is what strtod reads, but not inf or
 * nan; neither may have space or anything else around it. Each parser returns 0
 * with *out set, -EINVAL when the text is not such a number (empty, trailing junk,
 * a fraction where a whole number is due), or -ERANGE when it is one outside
 * [min, max] (a negative whole number included); *out is untouched on error.
 */
#ifndef XKV_PARSE_H
#define XKV_PARSE_H

#include <stdint.h>

int xkv_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);
int xkv_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out);
int xkv_parse_double(const char *text, double min, double max, double *out);
/* Bytes: a whole number, then K, M or G (or k, m, g) for KiB, MiB or GiB. */
int xkv_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *out);

#endif /* XKV_PARSE_H */
