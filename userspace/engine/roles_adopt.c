// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sched.h>

#include "engine/roles_adopt.h"

int xkv_roles_sync_init(struct xkv_roles_sync *s, uint32_t nworkers,
			const struct xkv_roles *first)
{
	int err;

	if (!first->gen || nworkers < 1 || nworkers > XKV_WORKERS_MAX)
		return -EINVAL;
	err = pthread_mutex_init(&s->lock, NULL);
	if (err)
		return -err;
	s->roles = *first;
	s->owners_gen = first->gen;
	s->nworkers = nworkers;
	atomic_init(&s->gen, first->gen);
	for (uint32_t w = 0; w < XKV_WORKERS_MAX; w++)
		atomic_init(&s->seen[w].gen, w < nworkers ? first->gen : XKV_ROLES_ASLEEP);
	return 0;
}

void xkv_roles_sync_fini(struct xkv_roles_sync *s)
{
	pthread_mutex_destroy(&s->lock);
}

/* Whether every partition has the same owner under a and b (xkv_roles_owner). */
static bool same_owners(const struct xkv_roles *a, const struct xkv_roles *b)
{
	if (a->nsmall != b->nsmall)
		return false;
	for (uint32_t i = 0; i < a->nsmall && i < XKV_WORKERS_MAX; i++)
		if (a->small[i] != b->small[i])
			return false;
	return true;
}

void xkv_roles_publish(struct xkv_roles_sync *s, const struct xkv_roles *r)
{
	pthread_mutex_lock(&s->lock);
	if (!same_owners(&s->roles, r))
		s->owners_gen = r->gen;
	s->roles = *r;
	/* under the lock: whoever copies these roles is ordered after this store */
	atomic_store(&s->gen, r->gen);
	pthread_mutex_unlock(&s->lock);
}

/* Whether every worker has adopted gen (or a later one) or sleeps. */
static bool all_adopted(struct xkv_roles_sync *s, uint32_t gen)
{
	for (uint32_t w = 0; w < s->nworkers; w++) {
		uint32_t seen = atomic_load(&s->seen[w].gen);

		if (seen != XKV_ROLES_ASLEEP && seen < gen)
			return false;
	}
	return true;
}

/*
 * No owner moved since the worker's roles (gen was, at or after owners_gen): the new
 * ones are taken without waiting. Every worker that acts does so under these owners:
 * the worker reached them through a wait for all to see a gen at or after owners_gen,
 * so every other one then had seen it, and no longer acts until it has adopted it too,
 * or slept, and waits when it wakes (xkv_roles_wake). So no partition gets two
 * writers, and a stopped worker holds others up only when owners move.
 *
 * was stays the gen of the roles the worker held at entry, whatever the loop copies:
 * roles that moved owners, copied and waited for, were never acted under. Taking
 * their gen as was would let a threshold published meanwhile end the wait, and the
 * worker would act under new owners while another still acts under the old.
 */
void xkv_roles_adopt(struct xkv_roles_sync *s, uint32_t id, struct xkv_roles *mine)
{
	const uint32_t was = mine->gen;
	bool owners_kept;

	do {
		pthread_mutex_lock(&s->lock);
		*mine = s->roles;
		owners_kept = was >= s->owners_gen;
		pthread_mutex_unlock(&s->lock);
		/*
		 * Sequentially consistent with the loads below and with xkv_roles_wake: a
		 * worker this one sees asleep adopts at least mine->gen when it wakes.
		 */
		atomic_store(&s->seen[id].gen, mine->gen);
		if (owners_kept)
			return;
		while (!all_adopted(s, mine->gen) && !xkv_roles_changed(s, mine->gen))
			sched_yield();
		/* newer roles came while waiting: adopt those */
	} while (xkv_roles_changed(s, mine->gen));
}

void xkv_roles_sleep(struct xkv_roles_sync *s, uint32_t id)
{
	atomic_store(&s->seen[id].gen, XKV_ROLES_ASLEEP);
}

/*
 * Store buffering, settled by the single total order of seq_cst operations: an adopter
 * A of gen g, published by P, and this waking worker W. P's store of gen happens
 * before A's load of seen[W] (through the lock A copies the roles under), so it
 * precedes it in the total order. If A's load saw W asleep, it precedes W's store
 * below, which precedes W's load of gen: that load comes after P's store and sees g,
 * and W adopts g before it serves (waiting, as A did, if an owner moved since its
 * roles). Otherwise A waits for W. Adopters that take roles without a wait load no
 * seen[] and need none of this. Both of W's accesses must be seq_cst: a relaxed load
 * could be ordered before the store (arm64 does so), and both A and W would go on
 * under different owners.
 */
void xkv_roles_wake(struct xkv_roles_sync *s, uint32_t id, struct xkv_roles *mine)
{
	atomic_store(&s->seen[id].gen, mine->gen);
	if (atomic_load(&s->gen) != mine->gen)
		xkv_roles_adopt(s, id, mine);
}
