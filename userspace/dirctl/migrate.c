// SPDX-License-Identifier: MIT
/*
 * The migration phase of a key's removal (Pegasus Sec. 6.5): its writes go home only,
 * and once every version given is acknowledged, its newest value goes home from its
 * replica set, so that home holds it when the key leaves the directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/bpf.h>

#include "dirctl/internal.h"

#define POLL_NS 1000000 /* how often the phase looks whether every version is acknowledged */

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

int dirctl_migrate(const struct xkv_dirctl *d, struct xkv_client *pool,
		   const struct xkv_dir_config *cfg, uint64_t hash, const void *key,
		   size_t key_len, int wait_ms)
{
	struct xkv_dir_entry e;
	uint32_t one = 1;
	int err;

	/* from here on, the directory sends writes home only */
	if (bpf_map_update_elem(d->migrating, &hash, &one, 0))
		return -errno;
	/* REMOVE-REQ: and a server sends home a write stamped before, that reaches it late */
	err = dirctl_notify(d, pool, cfg, key, key_len, XKV_DIR_KEY_MIGRATING);
	if (!err)
		err = quiesce(d, hash, wait_ms, &e);
	if (!err)
		err = migrate_home(pool, &e, hash, key, key_len);
	if (err) { /* still replicated, as it was: the removal may be asked again */
		bpf_map_delete_elem(d->migrating, &hash);
		dirctl_notify(d, pool, cfg, key, key_len, XKV_DIR_KEY_REPLICATED);
	}
	return err;
}
