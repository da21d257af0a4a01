// SPDX-License-Identifier: MIT
/*
 * engine/roles_adopt.h: workers move to new owners together. While roles change as fast as
 * a control thread can publish them, and workers doze off and wake, no two workers
 * ever act under different owners at once (docs/DESIGN.md invariant 1 under minos:
 * the owner of a partition changes only between everyone's requests); roles that keep
 * the owners are taken without waiting for anyone.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/roles_adopt.h"

#define WORKERS 3
#define RUN_MS	400

/* partition p is small[xkv_partition_owner(p, nsmall)]'s: nsmall names the owners */
static const struct xkv_roles first = {.gen = 1, .nsmall = 1, .nlarge = 1, .small = {0, 1, 2}};
static struct xkv_roles_sync sync_state;
static atomic_bool done;
static _Atomic uint32_t acting_owners[WORKERS]; /* the nsmall each worker acts under, 0: none */
static _Atomic long mixed;		     /* acts that overlapped one under other owners */

/* One "request", long enough to overlap others': no other worker acts under other owners. */
static void act(uint32_t id, const struct xkv_roles *r)
{
	atomic_store(&acting_owners[id], r->nsmall);
	for (int look = 0; look < 64; look++) {
		for (uint32_t w = 0; w < WORKERS; w++) {
			uint32_t other = atomic_load(&acting_owners[w]);

			if (w != id && other && other != r->nsmall)
				atomic_fetch_add(&mixed, 1);
		}
	}
	atomic_store(&acting_owners[id], 0);
}

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct xkv_roles mine = first; /* what init said each worker holds; later ones it adopts */
	unsigned seed = id;

	while (!atomic_load(&done)) {
		if (xkv_roles_changed(&sync_state, mine.gen))
			xkv_roles_adopt(&sync_state, id, &mine);
		act(id, &mine);
		if (rand_r(&seed) % 64 == 0) {
			xkv_roles_sleep(&sync_state, id);
			sched_yield();
			xkv_roles_wake(&sync_state, id, &mine);
		}
	}
	xkv_roles_sleep(&sync_state, id); /* for good: nobody waits for it */
	return NULL;
}

static void *control(void *arg)
{
	struct xkv_roles r = sync_state.roles;

	(void)arg;
	while (!atomic_load(&done)) {
		r.gen++;
		/* every other gen moves owners; the rest only the threshold */
		if (r.gen % 2)
			r.nsmall = (uint8_t)(1 + r.gen / 2 % WORKERS);
		else
			r.threshold++;
		xkv_roles_publish(&sync_state, &r);
	}
	return NULL;
}

Test(roles, workers_never_act_under_two_roles_at_once, .timeout = 60)
{
	pthread_t workers[WORKERS], ctl;

	cr_assert_eq(xkv_roles_sync_init(&sync_state, WORKERS, &first), 0);
	cr_assert_eq(pthread_create(&ctl, NULL, control, NULL), 0);
	for (uintptr_t w = 0; w < WORKERS; w++)
		cr_assert_eq(pthread_create(&workers[w], NULL, worker, (void *)w), 0);
	usleep(RUN_MS * 1000);
	atomic_store(&done, true);
	for (int w = 0; w < WORKERS; w++)
		pthread_join(workers[w], NULL);
	pthread_join(ctl, NULL);
	cr_expect_gt(sync_state.roles.gen, 100, "the roles hardly changed: %u gens",
		     sync_state.roles.gen);
	cr_expect_eq(atomic_load(&mixed), 0, "%ld acts overlapped one under other roles",
		     atomic_load(&mixed));
	xkv_roles_sync_fini(&sync_state);
}

struct adopter {
	pthread_t thread;
	uint32_t id;
	bool waking; /* xkv_roles_wake, not xkv_roles_adopt */
	struct xkv_roles mine;
	atomic_bool returned;
};

static void *adopter_run(void *arg)
{
	struct adopter *a = arg;

	if (a->waking)
		xkv_roles_wake(&sync_state, a->id, &a->mine);
	else
		xkv_roles_adopt(&sync_state, a->id, &a->mine);
	atomic_store(&a->returned, true);
	return NULL;
}

/* Starts a's adoption in a thread of its own; whether it returned within ms. */
static bool adopts_within(struct adopter *a, int ms)
{
	cr_assert_eq(pthread_create(&a->thread, NULL, adopter_run, a), 0);
	for (int i = 0; i < ms && !atomic_load(&a->returned); i++)
		usleep(1000);
	return atomic_load(&a->returned);
}

static struct xkv_roles gen_with(uint32_t gen, uint8_t nsmall, uint8_t threshold)
{
	struct xkv_roles r = first;

	r.gen = gen;
	r.nsmall = nsmall;
	r.threshold = threshold;
	return r;
}

/* Worker 1 stopped between two requests: a new threshold still reaches worker 0 at once. */
Test(roles, roles_that_keep_every_owner_need_no_wait, .timeout = 10)
{
	struct xkv_roles next = gen_with(2, 1, 9);
	struct adopter a = {.id = 0, .mine = first};

	cr_assert_eq(xkv_roles_sync_init(&sync_state, 2, &first), 0);
	xkv_roles_publish(&sync_state, &next);
	cr_assert(adopts_within(&a, 1000), "worker 0 waits for a stopped worker 1");
	pthread_join(a.thread, NULL);
	cr_assert_eq(a.mine.gen, 2);
	cr_assert_eq(a.mine.threshold, 9);
	xkv_roles_sync_fini(&sync_state);
}

/* Worker 1 slept through a new threshold; worker 0 is stopped: waking needs no wait. */
Test(roles, a_waking_worker_takes_roles_that_kept_its_owners_at_once, .timeout = 10)
{
	struct xkv_roles next = gen_with(2, 1, 9);
	struct adopter b = {.id = 1, .mine = first, .waking = true};

	cr_assert_eq(xkv_roles_sync_init(&sync_state, 2, &first), 0);
	xkv_roles_sleep(&sync_state, 1);
	xkv_roles_publish(&sync_state, &next);
	cr_assert(adopts_within(&b, 1000), "worker 1 woke to wait for a stopped worker 0");
	pthread_join(b.thread, NULL);
	cr_assert_eq(b.mine.gen, 2);
	xkv_roles_sync_fini(&sync_state);
}

/* Roles that move an owner wait until the other worker has seen them. */
Test(roles, roles_that_move_an_owner_wait_for_every_worker, .timeout = 10)
{
	struct xkv_roles next = gen_with(2, 2, 0);
	struct adopter a = {.id = 0, .mine = first}, b = {.id = 1, .mine = first};

	cr_assert_eq(xkv_roles_sync_init(&sync_state, 2, &first), 0);
	xkv_roles_publish(&sync_state, &next);
	cr_assert_not(adopts_within(&a, 100), "worker 0 took new owners before worker 1 saw them");
	cr_assert(adopts_within(&b, 1000));
	pthread_join(b.thread, NULL);
	pthread_join(a.thread, NULL);
	cr_assert_eq(a.mine.nsmall, 2);
	xkv_roles_sync_fini(&sync_state);
}

/*
 * Worker 1 slept through a change of owners (gen 2) that worker 0 acts under; gen 3 has
 * gen 1's owners again. Waking with gen 1's roles, worker 1 must still wait for worker
 * 0 to leave gen 2: its own old roles are no evidence of what others act under.
 */
Test(roles, a_waking_worker_waits_whatever_its_old_owners, .timeout = 10)
{
	struct xkv_roles two = gen_with(2, 2, 0), three = gen_with(3, 1, 0);
	struct adopter a = {.id = 0, .mine = first}, b = {.id = 1, .mine = first, .waking = true};

	cr_assert_eq(xkv_roles_sync_init(&sync_state, 2, &first), 0);
	xkv_roles_sleep(&sync_state, 1);
	xkv_roles_publish(&sync_state, &two);
	cr_assert(adopts_within(&a, 1000), "worker 0 waits for a sleeping worker");
	pthread_join(a.thread, NULL);
	xkv_roles_publish(&sync_state, &three);
	cr_assert_not(adopts_within(&b, 100), "worker 1 woke to gen 3 while worker 0 acts under 2");
	a = (struct adopter){.id = 0, .mine = two};
	cr_assert(adopts_within(&a, 1000));
	pthread_join(a.thread, NULL);
	pthread_join(b.thread, NULL);
	cr_assert_eq(b.mine.gen, 3);
	xkv_roles_sync_fini(&sync_state);
}

Test(roles, the_first_roles_must_have_a_gen)
{
	const struct xkv_roles none = {0};
	struct xkv_roles_sync s;

	cr_expect_eq(xkv_roles_sync_init(&s, 2, &none), -EINVAL);
	cr_expect_eq(xkv_roles_sync_init(&s, 0, &(struct xkv_roles){.gen = 1}), -EINVAL);
}
