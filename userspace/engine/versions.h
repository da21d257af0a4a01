/* SPDX-License-Identifier: MIT */
/*
 * A server's side of the coherence directory (Pegasus Sec. 6.3.1; docs/DIRECTORY.md):
 * the version each replicated key's value carries in the store (xkv_item_meta.ver),
 * writes the directory steered applied only over an older version, and the
 * extension of every version 3 reply: the directory's fields echoed, with this
 * server's load and the version the reply vouches for.
 *
 * A reply vouches for a version only when the request read or wrote the key (OK or
 * NOT_FOUND); any other reply (busy, no memory, refused) carries XKV_DIR_NO_VERSION,
 * so that the directory does not count its sender as holding the key.
 */
#ifndef XKV_ENGINE_VERSIONS_H
#define XKV_ENGINE_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/exec.h"
#include "proto/codec.h"

/*
 * The partition's writer: a steered PUT or DELETE (xkv_msg_steered), applied only if its
 * version is newer than the stored one (counted dir_applied). Else a newer write is
 * already here: nothing changes, counted dir_stale, and the write is answered OK
 * with the newer version, as if it had been applied just before that one. A DELETE
 * leaves a tombstone with its version (xkv_store_tombstone), so that an older write
 * arriving later is refused as stale and a read of the absent key vouches for the
 * deletion; it is answered OK whether the key was here or not: the directory may have
 * sent it to a server that does not hold the key's newest version, whose NOT_FOUND
 * would then say nothing true of the key.
 */
enum xkv_status xkv_versions_apply(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash);

/*
 * The partition's writer, for a steered write it applies itself (an item another
 * worker built: engine/writes.c): whether a newer version is already here, counted and
 * vouched for as xkv_versions_apply does. False: the caller writes it at req's version.
 */
bool xkv_versions_stale(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash);

/*
 * A steered GET's read, as xkv_store_get; the value's version goes in the reply, or
 * a tombstone's when the key is absent.
 */
int xkv_versions_get(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash, void *buf,
		     size_t cap, uint32_t *value_len);

/* The reply to req, a version 3 one if req was: its extension as the header says above. */
void xkv_versions_reply(const struct xkv_exec *x, const struct xkv_msg *req,
			struct xkv_msg *reply);

#endif /* XKV_ENGINE_VERSIONS_H */
