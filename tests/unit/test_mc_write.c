// SPDX-License-Identifier: MIT
/*
 * xkv_worker_mc_write (engine/mc_write.c): a memcached write is applied by its
 * partition's writer only (invariant 1). On the writer it is applied at once; on
 * another worker it is copied into a hand-off, applied by the writer, and its result
 * comes back to the worker whose connection waits, even when the ring back is full
 * for a while. A full ring forward answers NO_MEMORY and writes nothing. Under dcrew
 * the EWT's holder is the writer. Two workers, driven in turn from one thread.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>

#include "engine/mc_write.h"
#include "engine/worker.h"

#define DONE_MAX 1024

static struct xkv_store *store;
static struct xkv_handoffs rings;
static struct xkv_worker w[2];
static struct xkv_tx tx; /* memcached's writes reply through their connection, not here */
static struct {
	uint32_t worker;
	uint64_t tag;
	struct xkv_mc_result r;
} done[DONE_MAX];
static uint32_t ndone;

static void record_done(void *ctx, uint64_t tag, const struct xkv_mc_result *r)
{
	cr_assert_lt(ndone, DONE_MAX);
	done[ndone].worker = (uint32_t)(uintptr_t)ctx;
	done[ndone].tag = tag;
	done[ndone].r = *r;
	ndone++;
}

/* Workers 0 and 1 under policy. */
static void workers_start(enum xkv_policy policy)
{
	static const struct xkv_validate unbounded = {.ntrusted = 1}; /* ::/0 */
	struct xkv_worker_config cfg = {.nworkers = 2, .policy = policy, .store = store,
					.tx = &tx, .validate = &unbounded,
					.reasm = {.memory_limit = 1 << 20, .max_messages = 4}};

	for (uint32_t i = 0; i < 2; i++) {
		cfg.id = i;
		cr_assert_eq(xkv_worker_init(&w[i], &cfg), 0);
		xkv_worker_handoff_rings(&w[i], &rings);
		xkv_worker_mc(&w[i], record_done, (void *)(uintptr_t)i);
	}
}

static void workers_stop(void)
{
	for (uint32_t i = 0; i < 2; i++)
		xkv_worker_fini(&w[i]);
}

static void setup(void)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 16 << 20, .bucket_bits = 6, .overflow_buckets = 2};

	xkv_store_thread_online();
	store = xkv_store_create(&cfg);
	cr_assert_not_null(store);
	cr_assert_eq(xkv_handoffs_init(&rings, 2), 0);
	workers_start(XKV_POLICY_CREW);
	ndone = 0;
}

static void teardown(void)
{
	workers_stop();
	xkv_handoffs_fini(&rings);
	xkv_store_destroy(store);
	xkv_store_thread_offline();
}

TestSuite(mc_write, .init = setup, .fini = teardown);

/*
 * A SET of value to the first key from "key:n" on whose partition's static owner
 * among 2 workers is owner; the key is written into buf.
 */
static struct xkv_msg set_owned_by(uint32_t owner, char *buf, uint32_t n, const char *value)
{
	for (;; n++) {
		int len = sprintf(buf, "key:%u", n);
		uint64_t hash = xkv_hash(buf, (uint32_t)len);
		uint32_t value_len = (uint32_t)strlen(value);

		if (xkv_partition_owner(xkv_partition(hash), 2) == owner)
			return (struct xkv_msg){.op = XKV_OP_PUT, .key = buf,
						.key_len = (uint16_t)len, .frag = value,
						.frag_len = value_len, .value_len = value_len,
						.mc = {.dialect = XKV_DIALECT_MC_TCP,
						       .cmd = {.op = XKV_MC_SET}}};
	}
}

static uint64_t hash_of(const struct xkv_msg *mw)
{
	return xkv_hash(mw->key, mw->key_len);
}

/* xkv_worker_mc_write with the hash a session passes */
static int mc_write(struct xkv_worker *wk, const struct xkv_msg *mw, struct xkv_mc_result *r,
		    uint64_t tag)
{
	return xkv_worker_mc_write(wk, mw, hash_of(mw), r, tag);
}

static bool stored(const struct xkv_msg *mw, const char *value)
{
	char buf[64];
	uint32_t len;

	return xkv_store_get(store, mw->key, mw->key_len, hash_of(mw), buf, sizeof(buf), &len) == 0 &&
	       len == strlen(value) && !memcmp(buf, value, len);
}

Test(mc_write, the_writer_applies_it_at_once)
{
	char key[32];
	struct xkv_msg mw = set_owned_by(0, key, 0, "v");
	struct xkv_mc_result r;

	cr_assert_eq(mc_write(&w[0], &mw, &r, 7), 0);
	cr_expect_eq(r.status, XKV_MC_STORED);
	cr_expect(r.cas != 0);
	cr_expect(stored(&mw, "v"));
	cr_expect_eq(w[0].exec.stats.store_writes, 1);
	cr_expect_eq(w[0].exec.stats.requests[XKV_OP_PUT], 1, "counted as a write request");
	cr_expect_eq(w[0].exec.stats.handoffs_sent, 0);
}

Test(mc_write, another_worker_hands_it_over_and_gets_its_result_back)
{
	char key[32], value[] = "handed";
	struct xkv_msg mw = set_owned_by(1, key, 0, value);
	struct xkv_mc_result r;

	cr_assert_eq(mc_write(&w[0], &mw, &r, 42), -EINPROGRESS);
	memset(value, 'x', 6); /* the hand-off carries its own copy */
	memset(key, 'x', 4);
	mw = set_owned_by(1, key, 0, "handed");
	cr_expect_not(stored(&mw, "handed"), "applied beside its writer");
	cr_expect_eq(xkv_worker_handoffs(&w[1]), 1);
	cr_expect(stored(&mw, "handed"), "the writer applied it");
	cr_expect_eq(w[1].exec.stats.store_writes, 1);
	cr_expect_eq(w[0].exec.stats.store_writes, 0);
	cr_expect_eq(ndone, 0, "no result before the origin takes it");
	cr_expect_eq(xkv_worker_handoffs(&w[0]), 1);
	cr_assert_eq(ndone, 1);
	cr_expect(done[0].worker == 0 && done[0].tag == 42 && done[0].r.status == XKV_MC_STORED,
		  "the result reaches the origin with its tag");
	cr_expect_eq(w[0].exec.stats.handoffs_sent, 1);
	cr_expect_eq(w[1].exec.stats.handoffs_taken, 1);
}

Test(mc_write, a_full_ring_answers_no_memory_and_writes_nothing)
{
	char key[32];
	struct xkv_msg mw;
	struct xkv_mc_result r;

	for (uint32_t i = 0; i < XKV_HANDOFF_RING; i++) {
		mw = set_owned_by(1, key, i * 1000, "v");
		cr_assert_eq(mc_write(&w[0], &mw, &r, i), -EINPROGRESS);
	}
	mw = set_owned_by(1, key, 999999, "v");
	cr_assert_eq(mc_write(&w[0], &mw, &r, 9), 0);
	cr_expect_eq(r.status, XKV_MC_NO_MEMORY);
	cr_expect_eq(w[0].exec.stats.handoffs_refused, 1);
	xkv_worker_handoffs(&w[1]);
	cr_expect_not(stored(&mw, "v"), "the refused write was applied");
}

Test(mc_write, results_wait_for_room_in_a_full_ring_back)
{
	const uint32_t n = XKV_HANDOFF_RING + 10;
	char key[32];
	struct xkv_msg mw;
	struct xkv_mc_result r;

	/* the writer answers more than the ring back holds before the origin looks */
	for (uint32_t i = 0; i < n; i++) {
		if (i == XKV_HANDOFF_RING)
			cr_assert_eq(xkv_worker_handoffs(&w[1]), XKV_HANDOFF_RING);
		mw = set_owned_by(1, key, i * 1000, "v");
		cr_assert_eq(mc_write(&w[0], &mw, &r, i), -EINPROGRESS);
	}
	cr_assert_eq(xkv_worker_handoffs(&w[1]), 10);
	cr_assert_eq(xkv_worker_handoffs(&w[0]), XKV_HANDOFF_RING);
	xkv_worker_handoffs(&w[1]); /* room again: the ones kept go */
	xkv_worker_handoffs(&w[0]);
	cr_assert_eq(ndone, n, "every result came back once: %u of %u", ndone, n);
	for (uint32_t i = 0; i < n; i++)
		cr_expect(done[i].tag == i && done[i].r.status == XKV_MC_STORED, "result %u", i);
}

Test(mc_write, under_dcrew_the_slot_holder_is_the_writer)
{
	struct xkv_ewt_slot *ewt = calloc(XKV_EWT_SLOTS, sizeof(*ewt));
	char key[32];
	struct xkv_msg mw = set_owned_by(1, key, 0, "v");
	uint32_t partition = xkv_partition(hash_of(&mw));
	struct xkv_mc_result r;

	cr_assert_not_null(ewt);
	workers_stop();
	workers_start(XKV_POLICY_DCREW);
	for (uint32_t i = 0; i < 2; i++)
		xkv_worker_dcrew(&w[i], ewt, NULL, NULL, NULL);
	/* a free slot: the worker takes it and writes, even though 1 is the static owner */
	cr_assert_eq(mc_write(&w[0], &mw, &r, 1), 0);
	cr_expect_eq(r.status, XKV_MC_STORED);
	cr_expect_eq(w[0].exec.stats.store_writes, 1);
	cr_expect_eq(*xkv_ewt_word_of(ewt, partition), 0, "the slot is let go after");

	/* held by worker 1 (XDP steered a write there): worker 0 hands it to the holder */
	cr_assert_eq(xkv_ewt_join(ewt, partition, 1, XKV_EWT_TRIES), 1);
	mw.op = XKV_OP_DELETE;
	mw.mc.cmd.op = XKV_MC_DELETE;
	cr_assert_eq(mc_write(&w[0], &mw, &r, 2), -EINPROGRESS);
	cr_expect(stored(&mw, "v"), "applied beside the holder");
	cr_expect_eq(xkv_worker_handoffs(&w[1]), 1);
	cr_expect_not(stored(&mw, "v"), "the holder deleted it");
	cr_expect_eq(xkv_ewt_release(ewt, partition, 1, 1), 0, "its own write still held");
	cr_expect_eq(*xkv_ewt_word_of(ewt, partition), 0, "and nothing else");
	xkv_worker_handoffs(&w[0]);
	cr_assert_eq(ndone, 1);
	cr_expect(done[0].tag == 2 && done[0].r.status == XKV_MC_DELETED);
	free(ewt);
}
