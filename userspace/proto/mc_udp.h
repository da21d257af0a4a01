/* SPDX-License-Identifier: MIT */
/*
 * memcached over UDP (docs/MEMCACHED.md, "Over UDP"): the 8-byte frame, then one
 * request in the ASCII or the binary dialect, picked from its first byte as memcached
 * does (include/xkv/memcached.h, which XDP reads too); decoded into the worker's
 * struct xkv_msg, and the pieces of the replies.
 * Served: get/gets (several keys), set, delete, noreply; binary GET, GETQ, GETK,
 * GETKQ, SET, SETQ, DELETE, DELETEQ.
 */
#ifndef XKV_MC_UDP_H
#define XKV_MC_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xkv/memcached.h>

#include "proto/codec.h"
#include "proto/mc_binary.h"

/* What a datagram is to the worker: a request, an error to answer, or nothing. */
enum xkv_mc_verdict {
	XKV_MC_UDP_OK,		/* a request, in msg */
	XKV_MC_UDP_DROP,	/* nothing to answer: a frame not sequence 0 of 1 or reserved
				 * not 0, a binary header cut short or lengths that lie, no
				 * line end */
	XKV_MC_UDP_ERROR,	/* "ERROR": a command not served, or its arguments miscounted */
	XKV_MC_UDP_BAD_FORMAT,	/* "CLIENT_ERROR bad command line format"; binary: EINVAL */
	XKV_MC_UDP_BAD_CHUNK,	/* "CLIENT_ERROR bad data chunk" */
	XKV_MC_UDP_TOO_LARGE,	/* "SERVER_ERROR object too large for cache" */
	XKV_MC_UDP_DELETE_USAGE, /* delete's own "CLIENT_ERROR bad command line format.  Usage: ..." */
	XKV_MC_UDP_UNKNOWN,	/* binary: an opcode not served */
	XKV_MC_UDP_UNSUPPORTED, /* binary SET or DELETE with a CAS to compare: TCP only */
};

/*
 * Decodes the datagram buf[0..len) sent to the memcached port. On XKV_MC_UDP_OK msg
 * holds a GET, PUT (set) or DELETE with msg->mc filled, key and value pointing into buf.
 * On an error to answer, msg->mc and request_id are filled enough for its reply; and
 * whatever the verdict, a write whose command and key were read (as XDP reads them)
 * has its op and key set: steering claimed its EWT slot, which the worker lets go.
 */
enum xkv_mc_verdict xkv_mc_decode(const void *buf, size_t len, struct xkv_msg *msg);

/*
 * The next key of an ASCII get's msg->mc.keys (checked by the decoder), taken off the
 * front of *keys; false when none is left.
 */
bool xkv_mc_next_key(const char **keys, uint16_t *len, const void **key, uint16_t *key_len);

/* Writes the frame of datagram seq of total answering request id. */
void xkv_mc_frame(uint8_t *p, uint16_t id, uint16_t seq, uint16_t total);

/* An ASCII get hit's line "VALUE key flags bytes [cas]\r\n" into p; returns its length. */
size_t xkv_mc_value_line(char *p, const void *key, uint16_t key_len, uint32_t flags,
			 uint32_t bytes, const uint64_t *cas);

/* The longest VALUE line, and the bytes that end an ASCII get's reply. */
#define XKV_MC_VALUE_LINE_MAX (6 + XKV_KEY_MAX + 1 + 10 + 1 + 10 + 1 + 20 + 2)
#define XKV_MC_END "END\r\n"

/* The ASCII line of an error verdict, with its "\r\n". */
const char *xkv_mc_error_line(enum xkv_mc_verdict v);

/* The binary status of an error verdict. */
uint16_t xkv_mc_bin_error_status(enum xkv_mc_verdict v);

#endif /* XKV_MC_UDP_H */
