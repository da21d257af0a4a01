// SPDX-License-Identifier: MIT
/* Adding and removing replicated keys (Pegasus Sec. 6.5). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include <xkv/hash.h>
#include "dirctl/internal.h"

static uint32_t home_of(const struct xkv_client *pool, const void *key, size_t key_len)
{
	return xkv_client_place(pool, key, key_len);
}

/*
 * The newest version any live server holds of key: versions given from now on must be
 * newer than any a server holds, live or late.
 */
static int newest_held(struct xkv_client *pool, const struct xkv_dir_config *cfg,
		       const void *key, size_t key_len, uint64_t hash, uint64_t *newest)
{
	uint64_t ver;
	int err;

	*newest = 0;
	for (uint32_t id = 0; id < cfg->nservers; id++) {
		if (!(cfg->live >> id & 1))
			continue;
		err = dirctl_read(pool, id, key, key_len, hash, &ver, NULL, NULL);
		if (err && err != -ENOENT)
			return err == -ETIMEDOUT ? -EHOSTUNREACH : err;
		if (xkv_dir_newer(ver, *newest))
			*newest = ver;
	}
	return 0;
}

/* The key entered: written down, then steered, its home alone in the set. */
static int enter(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		 size_t key_len, uint64_t hash, uint64_t newest)
{
	/*
	 * One past the newest: version 0 is also what a server vouches for a key it does
	 * not hold, and no reply of a server holding an older copy may join the set.
	 */
	struct xkv_dir_entry e = {.home = home_of(pool, key, key_len), .ver_curr = newest + 1,
				  .ver_next = newest + 1};
	int err;

	e.rset = 1u << e.home;
	/* written down first: a key steered is one a recovery finds (Sec. 6.7) */
	err = dirctl_state_add(d->state, key, key_len);
	if (err)
		return err;
	bpf_map_delete_elem(d->migrating, &hash); /* a removal killed half way left it */
	if (bpf_map_update_elem(d->keys, &hash, &e, BPF_NOEXIST)) {
		err = errno == E2BIG ? -ENOSPC : -errno;
		dirctl_state_remove(d->state, key, key_len);
	}
	return err;
}

int xkv_dirctl_add(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		   size_t key_len, uint64_t *hash)
{
	struct xkv_dir_entry e = {0};
	struct xkv_dir_config cfg;
	uint64_t newest;
	int err = xkv_dirctl_config(d, &cfg);

	*hash = xkv_hash(key, (uint32_t)key_len);
	if (err)
		return err;
	if (cfg.flags & XKV_DIR_HOLD)
		return -EBUSY; /* recovering: its keys first */
	if (!bpf_map_lookup_elem_flags(d->keys, hash, &e, BPF_F_LOCK))
		return -EEXIST;
	/* servers first (Sec. 6.5): each vouches for a replicated key's version alone */
	err = dirctl_notify(d, pool, &cfg, key, key_len, XKV_DIR_KEY_REPLICATED);
	if (!err)
		err = newest_held(pool, &cfg, key, key_len, *hash, &newest);
	if (!err)
		err = enter(d, pool, key, key_len, *hash, newest);
	if (err) /* not steered: a server that heard of it forgets it, if it hears */
		dirctl_notify(d, pool, &cfg, key, key_len, XKV_DIR_KEY_GONE);
	return err;
}

int xkv_dirctl_remove(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		      size_t key_len, int wait_ms)
{
	uint64_t hash = xkv_hash(key, (uint32_t)key_len);
	struct xkv_dir_config cfg;
	struct xkv_dir_entry e;
	int err = xkv_dirctl_config(d, &cfg);

	if (err)
		return err;
	if (cfg.flags & XKV_DIR_HOLD)
		return -EBUSY; /* recovering: its keys first */
	if (bpf_map_lookup_elem_flags(d->keys, &hash, &e, BPF_F_LOCK))
		return -errno;
	err = dirctl_migrate(d, pool, &cfg, hash, key, key_len, wait_ms);
	if (err)
		return err;
	if (bpf_map_delete_elem(d->keys, &hash))
		return -errno;
	bpf_map_delete_elem(d->migrating, &hash);
	err = dirctl_state_remove(d->state, key, key_len);
	/* REMOVE-COMPLETE: a late request for it that reaches a server now goes home */
	if (!err)
		err = dirctl_notify(d, pool, &cfg, key, key_len, XKV_DIR_KEY_GONE);
	return err;
}
