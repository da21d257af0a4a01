// SPDX-License-Identifier: MIT
/*
 * Recovering from lost maps (Pegasus Sec. 6.7): which servers held each key's newest
 * version went with them, so every key the state file lists is asked of every live
 * server, and the newest value any holds goes home with its version. Only then are
 * requests let through again: until then a read would reach a home that may hold an
 * older value than one a client was already answered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <xkv/hash.h>
#include "dirctl/internal.h"

struct recovery {
	const struct xkv_dirctl *d;
	struct xkv_client *pool;
	struct xkv_dir_config cfg;
	uint32_t keys, moved;
};

/* The newest value of one key, from whichever live server holds it, home. */
static int recover_key(void *ctx, const uint8_t *key, size_t len)
{
	struct recovery *r = ctx;
	uint64_t hash = xkv_hash(key, (uint32_t)len), home_ver = 0, newest = 0, ver;
	uint32_t home = xkv_client_place(r->pool, key, len), newest_len = 0, got_len;
	bool found = false, absent = true;
	void *newest_value = NULL, *got;
	int err = 0;

	if (!(r->cfg.live >> home & 1)) {
		fprintf(stderr, "xkv-dir: the home of a key, server %u, is not live\n", home);
		return -EHOSTUNREACH;
	}
	/* a server that restarted since vouches only for a key it knows replicated */
	err = dirctl_notify(r->d, r->pool, &r->cfg, key, len, XKV_DIR_KEY_REPLICATED);
	if (err)
		return err;
	for (uint32_t id = 0; id < r->cfg.nservers; id++) {
		if (!(r->cfg.live >> id & 1))
			continue;
		err = dirctl_read(r->pool, id, key, len, hash, &ver, &got, &got_len);
		if (err && err != -ENOENT)
			goto free_newest;
		if (id == home)
			home_ver = ver;
		if (found && !xkv_dir_newer(ver, newest)) {
			if (!err)
				free(got);
			continue;
		}
		free(newest_value);
		found = true;
		newest = ver;
		absent = err == -ENOENT;
		newest_value = absent ? NULL : got;
		newest_len = absent ? 0 : got_len;
	}
	err = 0;
	r->keys++;
	if (xkv_dir_newer(newest, home_ver)) {
		err = dirctl_write_home(r->pool, home, key, len, hash, newest, newest_value,
					newest_len, absent);
		r->moved += !err;
	}
	/* home alone holds it now, unsteered: a late request for it goes there */
	if (!err)
		err = dirctl_notify(r->d, r->pool, &r->cfg, key, len, XKV_DIR_KEY_GONE);
free_newest:
	free(newest_value);
	return err;
}

int xkv_dirctl_recover(const struct xkv_dirctl *d, struct xkv_client *pool, uint32_t *keys,
		       uint32_t *moved)
{
	struct recovery r = {.d = d, .pool = pool};
	int err = xkv_dirctl_config(d, &r.cfg);

	*keys = *moved = 0;
	if (err)
		return err;
	/* the file lists keys replicated now: only a directory attached after a loss recovers */
	if (!(r.cfg.flags & XKV_DIR_HOLD))
		return -EALREADY;
	err = dirctl_state_each(d->state, recover_key, &r);
	*keys = r.keys;
	*moved = r.moved;
	if (err)
		return err;
	/* every key is back home: requests may pass, to homes, none replicated */
	err = dirctl_state_clear(d->state);
	if (err)
		return err;
	r.cfg.flags &= ~XKV_DIR_HOLD;
	return dirctl_config_set(d, &r.cfg);
}
