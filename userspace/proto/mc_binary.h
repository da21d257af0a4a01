/* SPDX-License-Identifier: MIT */
/*
 * memcached's binary protocol (its protocol_binary.h): the statuses and the response
 * header, which the UDP replies (engine/mc_serve.c) and the TCP session share. The
 * TCP session's binary commands are in mc_binary.c too, behind the session's
 * interface (proto/mc_text.h): a connection whose first byte is XKV_MC_BIN_REQUEST
 * speaks binary from then on, as memcached negotiates it.
 */
#ifndef XKV_MC_BINARY_H
#define XKV_MC_BINARY_H

#include <stdint.h>

#include <xkv/memcached.h>

#include "proto/codec.h"

/* Binary statuses replied (memcached's protocol_binary.h). */
enum xkv_mc_bin_status {
	XKV_MC_BIN_S_OK = 0x0000,
	XKV_MC_BIN_S_NOT_FOUND = 0x0001,
	XKV_MC_BIN_S_EXISTS = 0x0002,
	XKV_MC_BIN_S_TOO_LARGE = 0x0003,
	XKV_MC_BIN_S_EINVAL = 0x0004,
	XKV_MC_BIN_S_NOT_STORED = 0x0005,
	XKV_MC_BIN_S_NON_NUMERIC = 0x0006,
	XKV_MC_BIN_S_UNKNOWN = 0x0081,
	XKV_MC_BIN_S_NO_MEMORY = 0x0082,
	XKV_MC_BIN_S_NOT_SUPPORTED = 0x0083,
	XKV_MC_BIN_S_INTERNAL = 0x0084,
	XKV_MC_BIN_S_BUSY = 0x0085,
};

/*
 * Writes a binary response header: status, the request's opcode and opaque, and the
 * body's parts' lengths.
 */
void xkv_mc_bin_hdr(uint8_t *p, const struct xkv_mc_req *req, uint16_t status,
		     uint16_t key_len, uint8_t extras_len, uint32_t body_len, uint64_t cas);

/* The message a binary error reply carries, as memcached words it ("" for none). */
const char *xkv_mc_bin_status_text(uint16_t status);

#endif /* XKV_MC_BINARY_H */
