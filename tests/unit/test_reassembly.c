// SPDX-License-Identifier: MIT
/* Reassembly of multi-datagram values: order, duplicates, loss, lies and floods. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "proto/reassembly.h"

#define VALUE_LEN 10000
#define PIECE	  1000
#define TIMEOUT	  1000000 /* 1 ms */

static struct xkv_reasm *r;
static uint8_t value[VALUE_LEN];
static const struct xkv_peer alice = {.addr = {[15] = 1}, .port = 1000};
static const struct xkv_peer bob = {.addr = {[15] = 2}, .port = 1000};
static uint32_t dropped_messages, dropped_pieces; /* what the dropped hook was told */

static void count_dropped(void *ctx, const struct xkv_reasm_msg *msg)
{
	cr_assert_eq(ctx, &dropped_messages);
	dropped_messages++;
	dropped_pieces += msg->pieces;
}

static void setup(void)
{
	struct xkv_reasm_config cfg = {
		.memory_limit = 4 * VALUE_LEN,
		.max_messages = 8,
		.timeout_ns = TIMEOUT,
		.dropped = count_dropped,
		.ctx = &dropped_messages,
	};

	dropped_messages = dropped_pieces = 0;
	for (size_t i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(i * 7 + i / 256);
	r = xkv_reasm_create(&cfg);
	cr_assert_not_null(r);
}

static void teardown(void)
{
	xkv_reasm_destroy(r);
}

TestSuite(reassembly, .init = setup, .fini = teardown);

static struct xkv_msg piece(uint32_t id, uint32_t offset, uint32_t len)
{
	return (struct xkv_msg){
		.op = XKV_OP_PUT,
		.key_len = 3,
		.key = "big",
		.request_id = id,
		.value_len = VALUE_LEN,
		.frag_offset = offset,
		.frag_len = len,
		.frag = value + offset,
	};
}

static int add(const struct xkv_peer *peer, uint32_t id, uint32_t index, uint64_t now,
	       struct xkv_reasm_msg **done)
{
	struct xkv_msg m = piece(id, index * PIECE, PIECE);

	return xkv_reasm_add(r, peer, &m, now, done);
}

static struct xkv_reasm_stats stats(void)
{
	struct xkv_reasm_stats st;

	xkv_reasm_get_stats(r, &st);
	return st;
}

static void assert_whole(struct xkv_reasm_msg *m, uint32_t id)
{
	cr_assert_eq(m->head.request_id, id);
	cr_assert_eq(m->head.op, XKV_OP_PUT);
	cr_assert_eq(m->head.key_len, 3);
	cr_assert_eq(memcmp(m->head.key, "big", 3), 0);
	cr_assert_eq(m->head.frag_offset, 0);
	cr_assert_eq(m->head.frag_len, VALUE_LEN);
	cr_assert_eq(memcmp(m->head.frag, value, VALUE_LEN), 0, "the value, byte for byte");
}

static void deliver(const int *order, int n, uint32_t id)
{
	struct xkv_reasm_msg *done = NULL;

	for (int i = 0; i < n; i++) {
		int want = i == n - 1 ? XKV_REASM_COMPLETE : XKV_REASM_PENDING;

		cr_assert_eq(add(&alice, id, order[i], 0, &done), want, "piece %d (#%d)", order[i],
			     i);
	}
	assert_whole(done, id);
	xkv_reasm_release(r, done);
}

Test(reassembly, in_order)
{
	static const int order[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

	deliver(order, 10, 1);
	cr_assert_eq(stats().completed, 1);
	cr_assert_eq(stats().bytes, 0);
	cr_assert_eq(stats().in_flight, 0);
}

Test(reassembly, out_of_order)
{
	static const int reverse[] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
	static const int shuffled[] = {3, 9, 0, 7, 1, 5, 8, 2, 6, 4};

	deliver(reverse, 10, 1);
	deliver(shuffled, 10, 2);
}

Test(reassembly, duplicates_are_counted_not_completing)
{
	static const int order[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	struct xkv_reasm_msg *done = NULL;

	for (int i = 0; i < 9; i++) {
		cr_assert_eq(add(&alice, 1, order[i], 0, &done), XKV_REASM_PENDING);
		cr_assert_eq(add(&alice, 1, order[i], 0, &done), XKV_REASM_PENDING);
	}
	cr_assert_eq(stats().duplicates, 9);
	cr_assert_eq(add(&alice, 1, 9, 0, &done), XKV_REASM_COMPLETE);
	assert_whole(done, 1);
	/* dcrew holds a write for every piece steering counted, duplicates too */
	cr_assert_eq(done->pieces, 19);
	xkv_reasm_release(r, done);
	cr_assert_eq(dropped_messages, 0, "a completed message is not dropped");
}

Test(reassembly, overlapping_pieces_of_other_sizes)
{
	struct xkv_reasm_msg *done = NULL;
	struct xkv_msg a = piece(5, 0, 6000), b = piece(5, 4000, 6000), c = piece(5, 1000, 2000);

	cr_assert_eq(xkv_reasm_add(r, &alice, &a, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(xkv_reasm_add(r, &alice, &c, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(stats().duplicates, 1, "a piece inside what arrived is a duplicate");
	cr_assert_eq(xkv_reasm_add(r, &alice, &b, 0, &done), XKV_REASM_COMPLETE);
	assert_whole(done, 5);
	xkv_reasm_release(r, done);
}

Test(reassembly, peers_and_ids_keep_messages_apart)
{
	struct xkv_reasm_msg *done = NULL;

	for (int i = 0; i < 9; i++) {
		cr_assert_eq(add(&alice, 1, i, 0, &done), XKV_REASM_PENDING);
		cr_assert_eq(add(&bob, 1, i, 0, &done), XKV_REASM_PENDING);
		cr_assert_eq(add(&alice, 2, i, 0, &done), XKV_REASM_PENDING);
	}
	cr_assert_eq(stats().in_flight, 3);
	cr_assert_eq(add(&bob, 1, 9, 0, &done), XKV_REASM_COMPLETE);
	cr_assert(xkv_peer_equal(&done->peer, &bob));
	xkv_reasm_release(r, done);
	cr_assert_eq(stats().in_flight, 2);
}

Test(reassembly, missing_piece_times_out_and_frees)
{
	struct xkv_reasm_msg *done = NULL;

	for (int i = 0; i < 9; i++)
		cr_assert_eq(add(&alice, 1, i, 100, &done), XKV_REASM_PENDING);
	cr_assert_eq(stats().bytes, VALUE_LEN);
	cr_assert_eq(xkv_reasm_expire(r, 100 + TIMEOUT - 1), 0, "not yet");
	cr_assert_eq(dropped_messages, 0);
	cr_assert_eq(xkv_reasm_expire(r, 100 + TIMEOUT), 1);
	cr_assert_eq(stats().timeouts, 1);
	cr_assert_eq(dropped_messages, 1, "the hook hears of the timeout");
	cr_assert_eq(dropped_pieces, 9, "with the pieces the message held");
	cr_assert_eq(stats().bytes, 0);
	cr_assert_eq(stats().in_flight, 0);
	cr_assert_eq(add(&alice, 1, 9, 200 + TIMEOUT, &done), XKV_REASM_PENDING,
		     "a late piece starts over rather than completing a dropped message");
}

Test(reassembly, pieces_that_contradict_are_refused)
{
	struct xkv_reasm_msg *done = NULL;
	struct xkv_msg lie;

	cr_assert_eq(add(&alice, 1, 0, 0, &done), XKV_REASM_PENDING);
	lie = piece(1, PIECE, PIECE);
	lie.value_len = VALUE_LEN - 1;
	cr_assert_eq(xkv_reasm_add(r, &alice, &lie, 0, &done), -EINVAL, "other value length");
	lie = piece(1, PIECE, PIECE);
	lie.key = "bag";
	cr_assert_eq(xkv_reasm_add(r, &alice, &lie, 0, &done), -EINVAL, "other key");
	lie = piece(1, PIECE, PIECE);
	lie.op = XKV_OP_GET;
	cr_assert_eq(xkv_reasm_add(r, &alice, &lie, 0, &done), -EINVAL, "other op");
	cr_assert_eq(stats().mismatches, 3);
}

Test(reassembly, budget_and_message_limit_hold_under_a_flood)
{
	struct xkv_reasm_msg *done = NULL;
	int accepted = 0;

	/* 4 values fit the budget; message slots (8) are not the limit here */
	for (uint32_t id = 0; id < 1000; id++)
		accepted += add(&alice, id, 0, 0, &done) == XKV_REASM_PENDING;
	cr_assert_eq(accepted, 4);
	cr_assert_eq(stats().no_room, 996);
	cr_assert_leq(stats().bytes, 4 * VALUE_LEN);
	cr_assert_eq(xkv_reasm_expire(r, TIMEOUT), 4);
	cr_assert_eq(stats().bytes, 0);
}

Test(reassembly, message_slots_bound_small_values)
{
	struct xkv_reasm_msg *done = NULL;
	int accepted = 0;

	for (uint32_t id = 0; id < 100; id++) {
		struct xkv_msg m = piece(id, 0, 10);

		m.value_len = 20;
		accepted += xkv_reasm_add(r, &bob, &m, 0, &done) == XKV_REASM_PENDING;
	}
	cr_assert_eq(accepted, 8, "max_messages");
}

Test(reassembly, too_many_holes_drop_the_message)
{
	struct xkv_reasm_msg *done = NULL;
	int err = 0;

	/* one-byte pieces two bytes apart: each is a new hole */
	for (uint32_t off = 0; off < 2 * (XKV_REASM_GAPS + 1) && !err; off += 2) {
		struct xkv_msg m = piece(9, off, 1);

		err = xkv_reasm_add(r, &alice, &m, 0, &done);
	}
	cr_assert_eq(err, -E2BIG);
	cr_assert_eq(stats().too_scattered, 1);
	cr_assert_eq(dropped_messages, 1);
	cr_assert_eq(dropped_pieces, XKV_REASM_GAPS, "the refused piece is not the message's");
	cr_assert_eq(stats().in_flight, 0);
	cr_assert_eq(stats().bytes, 0);
}

Test(reassembly, filling_holes_merges_ranges)
{
	struct xkv_reasm_msg *done = NULL;

	/* even pieces first, then odd: never more than 5 holes, and it completes */
	for (int i = 0; i < 10; i += 2)
		cr_assert_eq(add(&alice, 3, i, 0, &done), XKV_REASM_PENDING);
	for (int i = 1; i < 9; i += 2)
		cr_assert_eq(add(&alice, 3, i, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(add(&alice, 3, 9, 0, &done), XKV_REASM_COMPLETE);
	assert_whole(done, 3);
	xkv_reasm_release(r, done);
}
