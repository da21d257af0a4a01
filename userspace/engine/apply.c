// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/apply.h"
#include "engine/mc_exec.h"
#include "engine/minos_plan.h"
#include "engine/worker.h"

#ifdef XKV_CHECKS
/*
 * Invariant 1, checked: each worker marks the partition it writes, and a second
 * writer inside one is a bug that must not pass quietly. Relaxed: the marks must not
 * order the workers themselves, or they could hide a hand-over that lacks its own.
 */
static _Atomic uint32_t writing[XKV_PARTITIONS]; /* worker id + 1, 0: nobody */

static void partition_write_begin(const struct xkv_worker *w, uint64_t hash)
{
	uint32_t partition = xkv_partition(hash);
	uint32_t other = atomic_exchange_explicit(&writing[partition], w->id + 1,
						  memory_order_relaxed);

	if (other) {
		fprintf(stderr, "xkv: invariant 1 broken: workers %u and %u write partition %u "
				"at once\n", other - 1, w->id, partition);
		abort();
	}
}

static void partition_write_end(uint64_t hash)
{
	atomic_store_explicit(&writing[xkv_partition(hash)], 0, memory_order_relaxed);
}
#else
static void partition_write_begin(const struct xkv_worker *w, uint64_t hash)
{
	(void)w;
	(void)hash;
}

static void partition_write_end(uint64_t hash)
{
	(void)hash;
}
#endif

/* Whether xkv_large_keys is kept: under minos's roles, with a store to look in. */
static bool keeps_large_keys(const struct xkv_worker *w)
{
	return xkv_policy_roles(w->policy->id) && !w->exec.echo;
}

/* Whether the key's value now is one xkv_large_keys records (the lookup minos adds). */
static bool was_large(struct xkv_worker *w, const uint8_t *key, uint16_t key_len, uint64_t hash)
{
	uint32_t len;

	return xkv_store_value_len(w->exec.store, key, key_len, hash, &len) == 0 &&
	       len > XKV_MINOS_PIECE_BYTES;
}

/* The owner keeps xkv_large_keys: new_len is the key's value length now, -1 if none. */
static void large_keys_note(struct xkv_worker *w, uint64_t hash, int64_t new_len, bool large)
{
	if (new_len > XKV_MINOS_PIECE_BYTES) {
		if (w->large_keys.record(w->large_keys.ctx, hash, (uint32_t)new_len) == -E2BIG)
			w->exec.stats.large_keys_full++;
	} else if (large) {
		w->large_keys.forget(w->large_keys.ctx, hash);
	}
}

enum xkv_status xkv_apply_msg(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash)
{
	bool keep = keeps_large_keys(w), large = false;
	enum xkv_status status;

	partition_write_begin(w, hash);
	if (keep)
		large = was_large(w, m->key, m->key_len, hash);
	status = xkv_apply_write(&w->exec, m, hash);
	if (status == XKV_S_OK && keep)
		large_keys_note(w, hash, m->op == XKV_OP_PUT ? (int64_t)m->value_len : -1, large);
	partition_write_end(hash);
	return status;
}

int xkv_apply_item(struct xkv_worker *w, struct xkv_item *item, uint64_t hash,
		   uint32_t value_len)
{
	int64_t old_len = -1;
	int err;

	w->exec.stats.store_writes++;
	partition_write_begin(w, hash);
	err = xkv_store_install(w->exec.store, item, hash, &old_len);
	partition_write_end(hash);
	/* recorded before the reply: the client's next GET is steered by it */
	if (!err && xkv_policy_roles(w->policy->id))
		large_keys_note(w, hash, value_len, old_len > XKV_MINOS_PIECE_BYTES);
	return err;
}

/* Whether a memcached write changed the store (and so counts as a store write). */
static bool mc_changed(enum xkv_mc_status status)
{
	return status == XKV_MC_STORED || status == XKV_MC_DELETED || status == XKV_MC_TOUCHED ||
	       status == XKV_MC_NUMBER;
}

void xkv_apply_mc(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash,
		  struct xkv_mc_result *r)
{
	bool keep = keeps_large_keys(w), large = false;
	uint32_t len;

	partition_write_begin(w, hash);
	if (keep)
		large = was_large(w, m->key, m->key_len, hash);
	xkv_mc_apply(w->exec.store, m, hash, w->exec.scratch, r);
	if (mc_changed(r->status)) {
		w->exec.stats.store_writes++;
		if (keep)
			large_keys_note(w, hash,
					xkv_store_value_len(w->exec.store, m->key, m->key_len, hash,
							    &len) ? -1 : (int64_t)len,
					large);
	}
	partition_write_end(hash);
}
