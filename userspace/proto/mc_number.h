/* SPDX-License-Identifier: MIT */
/*
 * The numbers of memcached's text protocol, read as memcached 1.6.18 reads them, for the
 * TCP session (mc_text.c, mc_meta.c) and the UDP decoder (mc_udp.c) alike. Each takes
 * one token, p[0..len), and returns false where memcached answers "bad command line
 * format".
 */
#ifndef XKV_MC_NUMBER_H
#define XKV_MC_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* safe_strtoul: an unsigned 64-bit number, truncated to 32 bits as memcached stores flags */
bool xkv_mc_number_u32(const char *p, size_t len, uint32_t *out);
/* safe_strtoull */
bool xkv_mc_number_u64(const char *p, size_t len, uint64_t *out);
/* safe_strtol: a long, stored in an int32_t as memcached stores exptime and lengths */
bool xkv_mc_number_i32(const char *p, size_t len, int32_t *out);

#endif /* XKV_MC_NUMBER_H */
