/* SPDX-License-Identifier: MIT */
/*
 * Minos's roles as the workers hold them, and how they all move to new ones
 * without two workers ever writing one partition (docs/DESIGN.md invariant 1).
 *
 * The control thread publishes roles with a new gen. A worker notices between two
 * requests and adopts them: it copies them, says it has seen the gen, and, if an
 * owner moved since the roles it held, waits until every other worker has seen it
 * too (or sleeps, holding no request). So no worker executes under new owners while
 * another still may under the old ones, and the wait lasts at most one request on
 * each worker. Roles that moved no owner (a new threshold, other large workers) are
 * taken at once: a stopped worker holds others up only for a change of owners.
 * Requests that steering sent by other roles are handed to their owner
 * (engine/handoff.h), never executed where they land.
 */
#ifndef XKV_ENGINE_ROLES_ADOPT_H
#define XKV_ENGINE_ROLES_ADOPT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <xkv/roles.h>

#define XKV_ROLES_ASLEEP UINT32_MAX /* a worker that holds no request: nobody waits for it */

struct xkv_roles_sync {
	pthread_mutex_t lock;	/* roles, against a copy half written */
	struct xkv_roles roles; /* the latest */
	uint32_t owners_gen;	/* the latest gen that moved a partition's owner */
	alignas(64) _Atomic uint32_t gen; /* roles.gen, read per request without the lock */
	struct {
		alignas(64) _Atomic uint32_t gen; /* the gen the worker adopted, or ASLEEP */
	} seen[XKV_WORKERS_MAX];
	uint32_t nworkers;
};

/* Every worker starts awake with first, whose gen must be nonzero. Returns 0 or -errno. */
int xkv_roles_sync_init(struct xkv_roles_sync *s, uint32_t nworkers,
			const struct xkv_roles *first);
void xkv_roles_sync_fini(struct xkv_roles_sync *s);

/* The control thread: r, with a gen above the last one, becomes the latest. */
void xkv_roles_publish(struct xkv_roles_sync *s, const struct xkv_roles *r);

/* Whether roles newer than the worker's (gen mine) were published: one load. */
static inline bool xkv_roles_changed(struct xkv_roles_sync *s, uint32_t mine)
{
	return atomic_load_explicit(&s->gen, memory_order_relaxed) != mine;
}

/*
 * Worker id, holding no request: copies the latest roles into *mine and returns at once
 * if no owner moved since the roles it had, else once every worker has adopted them or
 * sleeps. The caller must not hold up others meanwhile (a
 * store writer waiting for its grace period): it goes offline first.
 */
void xkv_roles_adopt(struct xkv_roles_sync *s, uint32_t id, struct xkv_roles *mine);

/* Worker id holds no request until it wakes; on waking it adopts what changed. */
void xkv_roles_sleep(struct xkv_roles_sync *s, uint32_t id);
void xkv_roles_wake(struct xkv_roles_sync *s, uint32_t id, struct xkv_roles *mine);

#endif /* XKV_ENGINE_ROLES_ADOPT_H */
