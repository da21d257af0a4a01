// SPDX-License-Identifier: MIT
#include <errno.h>

#include "engine/versions.h"

/* What the next reply to a request for hash may vouch for: the version just read or written. */
static void vouch(struct xkv_exec *x, uint64_t hash, uint64_t ver)
{
	x->vouch = (struct xkv_vouch){.hash = hash, .ver = ver, .valid = true};
}

bool xkv_versions_stale(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash)
{
	struct xkv_item_meta held;
	uint32_t len;

	/* the writer's look, a tombstone's version too: nobody else writes the key meanwhile */
	xkv_store_get_meta(x->store, req->key, req->key_len, hash, x->scratch, 0, &len, &held);
	if (held.ver && !xkv_dir_newer(xkv_be64(req->ext.ver), held.ver)) {
		x->stats.dir_stale++;
		vouch(x, hash, held.ver);
		return true;
	}
	x->stats.dir_applied++;
	vouch(x, hash, xkv_be64(req->ext.ver));
	return false;
}

enum xkv_status xkv_versions_apply(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash)
{
	struct xkv_item_meta meta = {.ver = xkv_be64(req->ext.ver)};
	int err;

	if (xkv_versions_stale(x, req, hash))
		return XKV_S_OK;
	if ((req->op & ~XKV_OP_REPLY) == XKV_OP_PUT)
		err = xkv_store_put_meta(x->store, req->key, req->key_len, hash, req->frag,
					 req->value_len, &meta);
	else /* answered OK whether the key was here or not: see versions.h */
		err = xkv_store_tombstone(x->store, req->key, req->key_len, hash, meta.ver);
	return xkv_status_from_errno(err);
}

int xkv_versions_get(struct xkv_exec *x, const struct xkv_msg *req, uint64_t hash, void *buf,
		     size_t cap, uint32_t *value_len)
{
	struct xkv_item_meta meta;
	int err = xkv_store_get_meta(x->store, req->key, req->key_len, hash, buf, cap, value_len,
				     &meta);

	vouch(x, hash, meta.ver); /* absent: its tombstone's, or 0 */
	return err;
}

void xkv_versions_reply(const struct xkv_exec *x, const struct xkv_msg *req,
			struct xkv_msg *reply)
{
	bool read_or_written = reply->status == XKV_S_OK || reply->status == XKV_S_NOT_FOUND;

	reply->dir = req->dir;
	if (!req->dir)
		return;
	reply->ext = req->ext;
	reply->ext.load = xkv_be32(x->load);
	reply->ext.service = xkv_be16(x->service);
	if (!xkv_msg_steered(req))
		return;
	if (read_or_written && x->vouch.valid && x->vouch.hash == xkv_be64(req->ext.key_hash)) {
		reply->ext.ver = xkv_be64(x->vouch.ver);
	} else {
		reply->ext.ver = 0;
		reply->ext.dflags |= XKV_DIR_NO_VERSION;
	}
}
