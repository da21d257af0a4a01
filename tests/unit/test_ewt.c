// SPDX-License-Identifier: MIT
/*
 * The EWT's compare-and-swap protocol (include/xkv/ewt.h, userspace/engine/ewt.h)
 * with threads on both sides of the same words: "steering" threads take or join a
 * partition's slot for a write and pass the write to the worker that holds it, as
 * XDP does; worker threads check that they hold the slot, write, and release it.
 * No worker may ever write a partition another is writing (each marks it with an
 * atomic exchange), no release may be lost or refused, and every slot must be empty
 * at the end. Each partition's data is a plain counter: under ThreadSanitizer (make
 * test-tsan) a hand-over without its release/acquire pair shows as a race on it, so
 * nothing else here may order the threads: the marks and counts are relaxed or each
 * thread's own.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/ewt.h"
#include "util/spsc.h"

#define STEERS	   2
#define WORKERS	   4
#define PARTITIONS 3 /* few, so that writes meet on them all the time */
#define WRITES	   200000 /* per steering thread */
#define RING	   256

struct write {
	uint32_t partition;
};

static struct xkv_ewt_slot ewt[XKV_EWT_SLOTS] __attribute__((aligned(64)));
static struct xkv_spsc rings[STEERS][WORKERS];
static struct write writes[STEERS][WRITES];
static _Atomic uint32_t writing[PARTITIONS]; /* worker + 1 inside a write, 0: none */
static uint64_t data[PARTITIONS];	      /* written only by the slot's holder */
static atomic_int steers_done;

/* Each thread's counts, read once it has been joined. */
static struct {
	unsigned long joined, busy;
} steer_counts[STEERS];
static struct {
	unsigned long overlaps, not_held, refused_releases, applied;
} worker_counts[WORKERS];

static void *steer_run(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg, x = id * 2654435761u + 1;

	for (uint32_t i = 0; i < WRITES; i++) {
		struct write *w = &writes[id][i];
		int to;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		w->partition = x % PARTITIONS;
		to = xkv_ewt_join(ewt, w->partition, (x >> 8) % WORKERS, XKV_EWT_TRIES);
		if (to < 0) {
			steer_counts[id].busy++;
			continue;
		}
		steer_counts[id].joined++;
		/* the write is the worker's now: it may not be dropped, so wait for room */
		while (!xkv_spsc_push(&rings[id][to], w))
			sched_yield();
	}
	atomic_fetch_add(&steers_done, 1);
	return NULL;
}

static void worker_write(uint32_t me, const struct write *w)
{
	_Atomic uint32_t *mark = &writing[w->partition];

	if (!xkv_ewt_holds(ewt, w->partition, me))
		worker_counts[me].not_held++;
	if (atomic_exchange_explicit(mark, me + 1, memory_order_relaxed))
		worker_counts[me].overlaps++;
	data[w->partition]++;
	atomic_store_explicit(mark, 0, memory_order_relaxed);
	if (xkv_ewt_release(ewt, w->partition, me, 1))
		worker_counts[me].refused_releases++;
	worker_counts[me].applied++;
}

static void *worker_run(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;

	for (;;) {
		bool last = atomic_load(&steers_done) == STEERS, idle = true;

		for (int s = 0; s < STEERS; s++) {
			struct write *w;

			while ((w = xkv_spsc_pop(&rings[s][me]))) {
				worker_write(me, w);
				idle = false;
			}
		}
		if (last && idle)
			return NULL;
		if (idle)
			sched_yield();
	}
}

Test(ewt, steering_and_workers_keep_one_writer_and_lose_no_release, .timeout = 120)
{
	pthread_t steers[STEERS], workers[WORKERS];
	unsigned long joined = 0, busy = 0, overlaps = 0, not_held = 0, refused = 0, applied = 0;
	uint64_t total = 0;

	for (int s = 0; s < STEERS; s++)
		for (int w = 0; w < WORKERS; w++)
			cr_assert_eq(xkv_spsc_init(&rings[s][w], RING), 0);
	for (uintptr_t w = 0; w < WORKERS; w++)
		cr_assert_eq(pthread_create(&workers[w], NULL, worker_run, (void *)w), 0);
	for (uintptr_t s = 0; s < STEERS; s++)
		cr_assert_eq(pthread_create(&steers[s], NULL, steer_run, (void *)s), 0);
	for (int s = 0; s < STEERS; s++)
		pthread_join(steers[s], NULL);
	for (int w = 0; w < WORKERS; w++)
		pthread_join(workers[w], NULL);
	for (int s = 0; s < STEERS; s++) {
		joined += steer_counts[s].joined;
		busy += steer_counts[s].busy;
	}
	for (int w = 0; w < WORKERS; w++) {
		overlaps += worker_counts[w].overlaps;
		not_held += worker_counts[w].not_held;
		refused += worker_counts[w].refused_releases;
		applied += worker_counts[w].applied;
	}

	cr_assert_eq(overlaps, 0, "two workers wrote one partition at once");
	cr_assert_eq(not_held, 0, "a worker got a write without the slot");
	cr_assert_eq(refused, 0, "a release was refused");
	cr_assert_eq(applied, joined);
	for (int p = 0; p < PARTITIONS; p++)
		total += data[p];
	cr_assert_eq(total, joined, "a write was lost or applied twice");
	for (uint32_t i = 0; i < XKV_EWT_SLOTS; i++)
		cr_assert(!ewt[i].owner && !ewt[i].writes, "slot %u: owner %u writes %u", i,
			  ewt[i].owner, ewt[i].writes);
	cr_log_info("joined %lu, busy %lu", joined, busy);
	for (int s = 0; s < STEERS; s++)
		for (int w = 0; w < WORKERS; w++)
			xkv_spsc_fini(&rings[s][w]);
}

Test(ewt, a_write_takes_a_free_slot_and_joins_a_held_one)
{
	struct xkv_ewt_slot t[XKV_EWT_SLOTS] = {0};

	cr_assert_eq(xkv_ewt_join(t, 7, 2, 1), 2, "free: the candidate takes it");
	cr_assert_eq(t[xkv_ewt_slot_of(7)].owner, 2);
	cr_assert_eq(t[xkv_ewt_slot_of(7)].writes, 1);
	cr_assert_eq(xkv_ewt_join(t, 7, 3, 1), 2, "held: the owner gets it, not the candidate");
	cr_assert_eq(t[xkv_ewt_slot_of(7)].writes, 2);
	cr_assert(xkv_ewt_holds(t, 7, 2));
	cr_assert_not(xkv_ewt_holds(t, 7, 3));
	cr_assert_eq(xkv_ewt_release(t, 7, 2, 2), 0);
	cr_assert(!t[xkv_ewt_slot_of(7)].owner && !t[xkv_ewt_slot_of(7)].writes, "empty again");
	cr_assert_not(xkv_ewt_holds(t, 7, 2), "an empty slot is nobody's, worker 0's neither");
	cr_assert_not(xkv_ewt_holds(t, 7, 0));
}

Test(ewt, a_release_by_another_or_beyond_the_count_changes_nothing)
{
	struct xkv_ewt_slot t[XKV_EWT_SLOTS] = {0};

	cr_assert_eq(xkv_ewt_join(t, 9, 1, 1), 1);
	cr_assert_eq(xkv_ewt_release(t, 9, 0, 1), -EPERM, "worker 0 holds nothing there");
	cr_assert_eq(xkv_ewt_release(t, 9, 1, 2), -EPERM, "one write held, two released");
	cr_assert_eq(xkv_ewt_release(t, 9, 1, 0), -EPERM, "nothing to release");
	cr_assert_eq(t[xkv_ewt_slot_of(9)].owner, 1);
	cr_assert_eq(t[xkv_ewt_slot_of(9)].writes, 1, "unchanged");
	cr_assert_eq(xkv_ewt_release(t, 9, 1, 1), 0);
	cr_assert_eq(xkv_ewt_release(t, 9, 1, 1), -EPERM, "released twice");
}

Test(ewt, a_full_slot_takes_no_more_writes)
{
	struct xkv_ewt_slot t[XKV_EWT_SLOTS] = {0};

	t[xkv_ewt_slot_of(4)] = (struct xkv_ewt_slot){.owner = 3, .writes = XKV_EWT_WRITES_MAX};
	cr_assert_eq(xkv_ewt_join(t, 4, 0, XKV_EWT_TRIES), -EBUSY);
	cr_assert_eq(t[xkv_ewt_slot_of(4)].writes, XKV_EWT_WRITES_MAX, "unchanged");
	cr_assert_eq(xkv_ewt_release(t, 4, 3, 1), 0);
	cr_assert_eq(xkv_ewt_join(t, 4, 0, XKV_EWT_TRIES), 3, "room again: joins owner 3");
}

/* A healing slot (engine/holds.h): no write joins it; releases keep it so, the last ends it. */
Test(ewt, a_healing_slot_only_shrinks)
{
	struct xkv_ewt_slot t[XKV_EWT_SLOTS] = {0};
	uint64_t *word = xkv_ewt_word_of(t, 7);

	*word = xkv_ewt_word(2, 3) | XKV_EWT_HEALING;
	cr_assert_eq(xkv_ewt_join(t, 7, 2, XKV_EWT_TRIES), -EBUSY, "not even by its owner");
	cr_assert_eq(xkv_ewt_writes(*word), 3);
	cr_assert(xkv_ewt_holds(t, 7, 2), "its writes are still its owner's");
	cr_assert_eq(xkv_ewt_release(t, 7, 2, 2), 0);
	cr_assert_eq(*word, xkv_ewt_word(2, 1) | XKV_EWT_HEALING, "still healing");
	cr_assert_eq(xkv_ewt_release(t, 7, 2, 1), 0);
	cr_assert_eq(*word, 0, "the last release empties it, healing and all");
	cr_assert_eq(xkv_ewt_join(t, 7, 1, 1), 1, "free again: taken");
}
