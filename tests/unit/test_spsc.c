// SPDX-License-Identifier: MIT
/* The single-producer single-consumer ring: capacity, order, and two threads at once. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "util/spsc.h"

/* Items are counters 1..n cast to pointers: never NULL, and checkable. */
static void *item(uintptr_t n)
{
	return (void *)n;
}

Test(spsc, bad_capacity)
{
	struct xkv_spsc q;

	cr_assert_eq(xkv_spsc_init(&q, 0), -EINVAL);
	cr_assert_eq(xkv_spsc_init(&q, 12), -EINVAL, "not a power of two");
	cr_assert_eq(xkv_spsc_init(&q, 1), 0, "a ring of one is a ring");
	cr_assert(xkv_spsc_push(&q, item(1)));
	cr_assert_not(xkv_spsc_push(&q, item(2)));
	cr_assert_eq(xkv_spsc_pop(&q), item(1));
	xkv_spsc_fini(&q);
}

Test(spsc, full_exactly_at_capacity_and_free_again_after_a_pop)
{
	struct xkv_spsc q;

	cr_assert_eq(xkv_spsc_init(&q, 8), 0);
	cr_assert(xkv_spsc_empty(&q));
	cr_assert_null(xkv_spsc_pop(&q));
	for (uintptr_t i = 1; i <= 8; i++)
		cr_assert(xkv_spsc_push(&q, item(i)), "push %lu of 8", i);
	cr_assert_not(xkv_spsc_empty(&q));
	cr_assert_not(xkv_spsc_push(&q, item(9)), "full");
	cr_assert_eq(xkv_spsc_pop(&q), item(1));
	cr_assert(xkv_spsc_push(&q, item(9)), "room for exactly one");
	cr_assert_not(xkv_spsc_push(&q, item(10)));
	for (uintptr_t i = 2; i <= 9; i++)
		cr_assert_eq(xkv_spsc_pop(&q), item(i));
	cr_assert_null(xkv_spsc_pop(&q));
	cr_assert(xkv_spsc_empty(&q));
	xkv_spsc_fini(&q);
}

/* Round after round of uneven fills: the indices pass the slots' end many times. */
Test(spsc, fifo_across_the_end_of_the_slots)
{
	uintptr_t pushed = 0, popped = 0;
	struct xkv_spsc q;

	cr_assert_eq(xkv_spsc_init(&q, 16), 0);
	for (int round = 0; round < 1000; round++) {
		for (int i = 0; i < round % 17 && xkv_spsc_push(&q, item(pushed + 1)); i++)
			pushed++;
		for (int i = 0; i < round % 13; i++) {
			void *got = xkv_spsc_pop(&q);

			if (!got) {
				cr_assert_eq(popped, pushed, "empty only when all were popped");
				break;
			}
			cr_assert_eq(got, item(++popped), "FIFO");
		}
	}
	cr_assert_gt(pushed, 16 * 100);
	xkv_spsc_fini(&q);
}

#define STRESS_N 1000000

static void *producer(void *arg)
{
	struct xkv_spsc *q = arg;

	for (uintptr_t i = 1; i <= STRESS_N; i++)
		while (!xkv_spsc_push(q, item(i)))
			sched_yield(); /* two shared cores: let the consumer run */
	return NULL;
}

/* The consumer must see 1..N in order, none missing, none twice. */
Test(spsc, two_threads_every_item_in_order, .timeout = 60)
{
	uintptr_t next = 1;
	struct xkv_spsc q;
	pthread_t t;

	cr_assert_eq(xkv_spsc_init(&q, 256), 0);
	cr_assert_eq(pthread_create(&t, NULL, producer, &q), 0);
	while (next <= STRESS_N) {
		void *got = xkv_spsc_pop(&q);

		if (!got) {
			sched_yield();
			continue;
		}
		cr_assert_eq(got, item(next), "got %p, want %lu", got, next);
		next++;
	}
	pthread_join(t, NULL);
	cr_assert(xkv_spsc_empty(&q));
	cr_assert_null(xkv_spsc_pop(&q));
	xkv_spsc_fini(&q);
}
