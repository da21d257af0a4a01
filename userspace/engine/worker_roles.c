// SPDX-License-Identifier: MIT
#include "engine/handoff_send.h"
#include "engine/windows.h"
#include "engine/worker.h"
#include "engine/worker_roles.h"

/* Whether the worker is among a role's n workers, ids (the roles' small[] or large[]). */
static bool has_role(const struct xkv_worker *w, const uint8_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < XKV_WORKERS_MAX; i++)
		if (ids[i] == w->id)
			return true;
	return false;
}

bool xkv_worker_is_small(const struct xkv_worker *w)
{
	return has_role(w, w->roles.small, w->roles.nsmall);
}

void xkv_worker_roles_applied(struct xkv_worker *w)
{
	bool large = has_role(w, w->roles.large, w->roles.nlarge);

	/* large above the threshold, unless it is large */
	w->exec.small_class_max = large ? XKV_SIZE_CLASSES : w->roles.threshold;
}

/*
 * Newer roles are adopted; new owners by every worker before any acts on them
 * (engine/roles_adopt.h). Open compaction windows are applied first, under the roles they
 * were opened by: after the adoption their partitions may be another worker's
 * (invariant 1).
 */
void xkv_worker_roles_check(struct xkv_worker *w)
{
	if (!w->sync || !xkv_roles_changed(w->sync, w->roles.gen))
		return;
	xkv_windows_close_all(w);
	/* a writer growing a table waits for our quiescent state: don't make it wait on us */
	xkv_store_thread_sleep();
	xkv_roles_adopt(w->sync, w->id, &w->roles);
	xkv_store_thread_wake();
	xkv_worker_roles_applied(w);
}

/* The executor's hook: a GET for a large value goes to the large worker of its class. */
static bool handoff_get(void *ctx, const struct xkv_origin *from, const struct xkv_msg *req,
			uint64_t hash, uint32_t value_len)
{
	struct xkv_worker *w = ctx;
	uint32_t to = xkv_roles_large_worker(&w->roles, xkv_size_class(value_len), hash);

	if (to == w->id || to >= w->nworkers)
		return false;
	xkv_handoff_send(w, XKV_HANDOFF_GET, to, from, req, hash, NULL);
	return true;
}

void xkv_worker_minos(struct xkv_worker *w, struct xkv_roles_sync *sync,
		      struct xkv_handoffs *handoffs, const struct xkv_large_keys *large_keys)
{
	w->sync = sync;
	w->handoffs = handoffs;
	w->large_keys = *large_keys;
	pthread_mutex_lock(&sync->lock);
	w->roles = sync->roles;
	pthread_mutex_unlock(&sync->lock);
	w->exec.handoff_get = handoff_get;
	w->exec.handoff_ctx = w;
	xkv_worker_roles_applied(w);
}
