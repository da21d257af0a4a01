// SPDX-License-Identifier: MIT
/*
 * engine/roles.h: workers move to new roles together. While roles change as fast as
 * a control thread can publish them, and workers doze off and wake, no two workers
 * ever act under different roles at once (docs/DESIGN.md invariant 1 under minos:
 * the owner of a partition changes only between everyone's requests).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/roles.h"

#define WORKERS 3
#define RUN_MS	400

static const struct xkv_roles first = {.gen = 1, .nsmall = 1, .nlarge = 1};
static struct xkv_roles_sync sync_state;
static atomic_bool done;
static _Atomic uint32_t acting_gen[WORKERS]; /* the gen each worker acts under, 0: none */
static _Atomic long mixed;		     /* acts that overlapped one under another gen */

/* One "request", long enough to overlap others': no other worker acts under another gen. */
static void act(uint32_t id, uint32_t gen)
{
	atomic_store(&acting_gen[id], gen);
	for (int look = 0; look < 64; look++) {
		for (uint32_t w = 0; w < WORKERS; w++) {
			uint32_t other = atomic_load(&acting_gen[w]);

			if (w != id && other && other != gen)
				atomic_fetch_add(&mixed, 1);
		}
	}
	atomic_store(&acting_gen[id], 0);
}

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct xkv_roles mine = first; /* what init said each worker holds; later ones it adopts */
	unsigned seed = id;

	while (!atomic_load(&done)) {
		if (xkv_roles_changed(&sync_state, mine.gen))
			xkv_roles_adopt(&sync_state, id, &mine);
		act(id, mine.gen);
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
		r.nsmall = (uint8_t)(1 + r.gen % WORKERS);
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

Test(roles, the_first_roles_must_have_a_gen)
{
	const struct xkv_roles none = {0};
	struct xkv_roles_sync s;

	cr_expect_eq(xkv_roles_sync_init(&s, 2, &none), -EINVAL);
	cr_expect_eq(xkv_roles_sync_init(&s, 0, &(struct xkv_roles){.gen = 1}), -EINVAL);
}
