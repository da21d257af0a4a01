/* SPDX-License-Identifier: MIT */
/*
 * Anti-amplification (docs/PROTOCOL.md, "Amplification"). A reply larger than
 * XKV_AMPLIFY_MAX times its request goes only to a source that has shown it
 * receives at its address: its request carries a token, a keyed hash (SipHash-2-4)
 * of its address, port and the time window, which a short VALIDATE reply gave it.
 * Stateless: nothing is kept per source, and the key, random at start, is only
 * read after, so that every worker checks tokens with the same struct.
 */
#ifndef XKV_VALIDATE_H
#define XKV_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xkv/maps.h>

#include "proto/peer.h"

#define XKV_TOKEN_WINDOW_S 60 /* a token is good in its window and the next */
#define XKV_TRUST_MAX	   16

struct xkv_validate {
	uint8_t key[16];     /* crypto_shorthash_KEYBYTES */
	uint64_t window_ns;
	/* networks exempt from the bound (--trust): links whose sources cannot be spoofed */
	struct xkv_allow_key trusted[XKV_TRUST_MAX];
	size_t ntrusted;
};

/* A random key, windows of XKV_TOKEN_WINDOW_S, nothing trusted. 0 or -errno. */
int xkv_validate_init(struct xkv_validate *v);

/* Whether peer's address lies in a trusted network. */
bool xkv_validate_trusted(const struct xkv_validate *v, const struct xkv_peer *peer);

/*
 * Whether token is peer's for the window of now_ns (CLOCK_MONOTONIC) or the one
 * before. *current gets peer's token for now's window, never 0, valid or not.
 */
bool xkv_validate_token(const struct xkv_validate *v, const struct xkv_peer *peer,
			uint64_t token, uint64_t now_ns, uint64_t *current);

#endif /* XKV_VALIDATE_H */
