// SPDX-License-Identifier: MIT
/* Adding and removing replicated keys (Pegasus Sec. 6.5). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>

#include <xkv/hash.h>
#include "dirctl/internal.h"

#define POLL_NS 1000000 /* how often remove looks whether every version is acknowledged */

static uint32_t home_of(const struct xkv_client *pool, const void *key, size_t key_len)
{
	return xkv_client_place(pool, key, key_len);
}

int xkv_dirctl_add(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		   size_t key_len, uint64_t *hash)
{
	struct xkv_dir_entry e = {0};
	struct xkv_dir_config cfg;
	uint64_t newest = 0, ver;
	int err = xkv_dirctl_config(d, &cfg);

	*hash = xkv_hash(key, (uint32_t)key_len);
	if (err)
		return err;
	if (!bpf_map_lookup_elem_flags(d->keys, hash, &e, BPF_F_LOCK))
		return -EEXIST;
	/* versions given from now on must be newer than any a server holds, live or late */
	for (uint32_t id = 0; id < cfg.nservers; id++) {
		if (!(cfg.live >> id & 1))
			continue;
		err = dirctl_read(pool, id, key, key_len, *hash, &ver, NULL, NULL);
		if (err && err != -ENOENT)
			return err == -ETIMEDOUT ? -EHOSTUNREACH : err;
		if (xkv_dir_newer(ver, newest))
			newest = ver;
	}
	e = (struct xkv_dir_entry){.home = home_of(pool, key, key_len), .ver_curr = newest,
				   .ver_next = newest};
	e.rset = 1u << e.home;
	if (bpf_map_update_elem(d->keys, hash, &e, BPF_NOEXIST))
		return errno == E2BIG ? -ENOSPC : -errno;
	err = dirctl_state_add(d->state, key, key_len);
	if (err) /* not replicated unless it is written down, for a recovery (Sec. 6.7) */
		bpf_map_delete_elem(d->keys, hash);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Waits until the replica set holds the last version given (no write in flight), or
 * wait_ms passes: a write whose reply was lost never completes.
 */
static int quiesce(const struct xkv_dirctl *d, uint64_t hash, int wait_ms,
		   struct xkv_dir_entry *e)
{
	uint64_t deadline = now_ns() + (uint64_t)wait_ms * 1000000ULL;
	const struct timespec pause = {.tv_nsec = POLL_NS};

	for (;;) {
		if (bpf_map_lookup_elem_flags(d->keys, &hash, e, BPF_F_LOCK))
			return -errno;
		if (e->ver_curr == e->ver_next || now_ns() >= deadline)
			return 0;
		nanosleep(&pause, NULL);
	}
}

/* The lowest server of set. */
static uint32_t first_of(uint32_t set)
{
	return (uint32_t)__builtin_ctz(set);
}

/*
 * The newest value, from a server of the replica set, written home with its version:
 * home applies it only if it holds an older one (a write since went home already).
 */
static int migrate_home(struct xkv_client *pool, const struct xkv_dir_entry *e, uint64_t hash,
			const void *key, size_t key_len)
{
	uint32_t len = 0;
	void *value = NULL;
	uint64_t ver;
	int err;

	if (e->rset & (1u << e->home))
		return 0; /* home holds the newest already */
	err = dirctl_read(pool, first_of(e->rset), key, key_len, hash, &ver, &value, &len);
	if (err && err != -ENOENT)
		return err;
	err = dirctl_write_home(pool, e->home, key, key_len, hash, ver, value, len,
				err == -ENOENT);
	free(value);
	return err;
}

int xkv_dirctl_remove(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		      size_t key_len, int wait_ms)
{
	uint64_t hash = xkv_hash(key, (uint32_t)key_len);
	struct xkv_dir_entry e;
	uint32_t one = 1;
	int err;

	if (bpf_map_lookup_elem_flags(d->keys, &hash, &e, BPF_F_LOCK))
		return -errno;
	/* from here on, writes go home only */
	if (bpf_map_update_elem(d->migrating, &hash, &one, 0))
		return -errno;
	err = quiesce(d, hash, wait_ms, &e);
	if (!err)
		err = migrate_home(pool, &e, hash, key, key_len);
	if (err) { /* still replicated, as it was: remove may be asked again */
		bpf_map_delete_elem(d->migrating, &hash);
		return err;
	}
	if (bpf_map_delete_elem(d->keys, &hash))
		return -errno;
	bpf_map_delete_elem(d->migrating, &hash);
	return dirctl_state_remove(d->state, key, key_len);
}
