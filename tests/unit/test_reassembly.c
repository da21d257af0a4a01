// SPDX-License-Identifier: MIT
/* Reassembly of multi-datagram values: order, duplicates, loss, lies and floods. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A reassembly whose drops count_dropped hears of. */
static struct xkv_reasm *counted_reasm(size_t memory_limit, uint32_t max_messages)
{
	struct xkv_reasm_config cfg = {
		.memory_limit = memory_limit,
		.max_messages = max_messages,
		.timeout_ns = TIMEOUT,
		.dropped = count_dropped,
		.ctx = &dropped_messages,
	};
	struct xkv_reasm *reasm = xkv_reasm_create(&cfg);

	cr_assert_not_null(reasm);
	dropped_messages = dropped_pieces = 0;
	return reasm;
}

static void setup(void)
{
	for (size_t i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(i * 7 + i / 256);
	r = counted_reasm(4 * VALUE_LEN, 8);
}

static void teardown(void)
{
	xkv_reasm_destroy(r);
}

TestSuite(reassembly, .init = setup, .fini = teardown);

/* A piece of a PUT of "big" whose value is the value_len bytes at whole. */
static struct xkv_msg piece_of(const uint8_t *whole, uint32_t value_len, uint32_t id,
			       uint32_t offset, uint32_t len)
{
	return (struct xkv_msg){
		.op = XKV_OP_PUT,
		.key_len = 3,
		.key = "big",
		.request_id = id,
		.value_len = value_len,
		.frag_offset = offset,
		.frag_len = len,
		.frag = whole + offset,
	};
}

static struct xkv_msg piece(uint32_t id, uint32_t offset, uint32_t len)
{
	return piece_of(value, VALUE_LEN, id, offset, len);
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

/*
 * Floods and fairness, with values big enough to be mapped: a reassembly of its own
 * with room for 8 values of 1 MiB and 64 messages.
 */
#define BIG   (1u << 20)
#define SLICE 1400 /* a piece as a 1500-byte MTU carries it */

static struct xkv_reasm *big_r;
static uint8_t *big_value;
static const struct xkv_peer mallory = {.addr = {[15] = 66}, .port = 1000};

static void big_setup(void)
{
	big_value = malloc(BIG);
	cr_assert_not_null(big_value);
	for (uint32_t i = 0; i < BIG; i++)
		big_value[i] = (uint8_t)(i * 13 + i / 4096);
	big_r = counted_reasm(8 * BIG, 64);
}

static void big_teardown(void)
{
	xkv_reasm_destroy(big_r);
	free(big_value);
}

TestSuite(reassembly_floods, .init = big_setup, .fini = big_teardown);

static int big_add(const struct xkv_peer *peer, uint32_t id, uint32_t value_len, uint32_t offset,
		   uint32_t len, uint64_t now, struct xkv_reasm_msg **done)
{
	struct xkv_msg m = piece_of(big_value, value_len, id, offset, len);

	return xkv_reasm_add(big_r, peer, &m, now, done);
}

static struct xkv_reasm_stats big_stats(void)
{
	struct xkv_reasm_stats st;

	xkv_reasm_get_stats(big_r, &st);
	return st;
}

/* Sends id's whole value of BIG bytes in SLICE pieces, in order; returns the last result. */
static int big_send(const struct xkv_peer *peer, uint32_t id, uint32_t first, uint32_t end,
		    uint64_t now, struct xkv_reasm_msg **done)
{
	int ret = -EINVAL;

	for (uint32_t off = first; off < end; off += SLICE) {
		ret = big_add(peer, id, BIG, off, off + SLICE < end ? SLICE : end - off, now, done);
		if (ret < 0)
			return ret;
	}
	return ret;
}

static void assert_big_whole(struct xkv_reasm_msg *m)
{
	cr_assert_eq(m->head.frag_len, BIG);
	cr_assert_eq(memcmp(m->head.frag, big_value, BIG), 0, "the value, byte for byte");
}

Test(reassembly_floods, charges_follow_the_bytes_received)
{
	struct xkv_reasm_msg *done = NULL;
	long page = sysconf(_SC_PAGESIZE);

	cr_assert_eq(big_add(&alice, 1, BIG, 0, 1, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_stats().bytes, (uint64_t)page, "one byte of 1 MiB costs one page");
	cr_assert_eq(big_add(&alice, 1, BIG, 1, 100, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_stats().bytes, (uint64_t)page, "the same page costs nothing more");
	cr_assert_eq(big_add(&alice, 1, BIG, BIG - 1, 1, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_stats().bytes, 2 * (uint64_t)page);
	cr_assert_eq(big_send(&alice, 1, 101, BIG / 2, 0, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_stats().bytes, (uint64_t)(BIG / 2 + page - 1) / page * page + page,
		     "half the value, half the pages");
	cr_assert_eq(big_send(&alice, 1, BIG / 2, BIG - 1, 0, &done), XKV_REASM_COMPLETE);
	assert_big_whole(done);
	cr_assert_eq(big_stats().bytes, BIG);
	xkv_reasm_release(big_r, done);
	cr_assert_eq(big_stats().bytes, 0);
}

Test(reassembly_floods, one_byte_pieces_claiming_1_mib_cannot_starve_another_peer)
{
	struct xkv_reasm_msg *done = NULL;
	int ret;

	/* the flood: one-byte pieces of values claimed to be 1 MiB, refreshed */
	for (uint64_t now = 0; now < 4 * (uint64_t)TIMEOUT; now += TIMEOUT / 2) {
		for (uint32_t id = 0; id < 160; id++)
			big_add(&mallory, id, BIG, (uint32_t)(now / (TIMEOUT / 2)), 1, now, &done);
		xkv_reasm_expire(big_r, now);
	}
	cr_assert_leq(big_stats().bytes, 64 * (uint64_t)sysconf(_SC_PAGESIZE),
		      "a page for each piece in the 64 slots, not 1 MiB each");
	/* Alice's PUTs, one after another, while the flood holds what it holds */
	for (uint32_t id = 0; id < 4; id++) {
		ret = big_send(&alice, id, 0, BIG, 4 * TIMEOUT, &done);
		cr_assert_eq(ret, XKV_REASM_COMPLETE, "alice's PUT %u: %d", id, ret);
		assert_big_whole(done);
		xkv_reasm_release(big_r, done);
	}
}

Test(reassembly_floods, a_peer_filling_the_budget_gives_way_to_another_up_to_its_share)
{
	struct xkv_reasm_msg *done = NULL;
	int ret;

	/* mallory sends nearly all of 8 values: the whole budget, honestly received */
	for (uint32_t id = 0; id < 8; id++)
		cr_assert_eq(big_send(&mallory, id, 0, BIG - SLICE, id, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_add(&mallory, 8, BIG, 0, SLICE, 8, &done), -ENOMEM,
		     "a peer alone is held to the budget");
	/* alice's share is half: she gets two values in at once, mallory's oldest go */
	for (uint32_t id = 0; id < 2; id++)
		cr_assert_eq(big_send(&alice, id, 0, BIG - SLICE, 10, &done), XKV_REASM_PENDING);
	cr_assert_eq(big_stats().evicted, 2);
	cr_assert_eq(dropped_messages, 2, "the hook hears of each eviction");
	for (uint32_t id = 0; id < 2; id++) {
		ret = big_send(&alice, id, BIG - SLICE, BIG, 11, &done);
		cr_assert_eq(ret, XKV_REASM_COMPLETE);
		assert_big_whole(done);
		xkv_reasm_release(big_r, done);
	}
	/* mallory's latest values were left alone and still complete */
	cr_assert_eq(big_send(&mallory, 7, BIG - SLICE, BIG, 12, &done), XKV_REASM_COMPLETE);
	assert_big_whole(done);
	xkv_reasm_release(big_r, done);
}

Test(reassembly_floods, tiny_messages_from_one_peer_cannot_take_every_slot)
{
	struct xkv_reasm_msg *done = NULL;
	int accepted = 0;

	for (uint32_t id = 0; id < 3000; id++)
		accepted += big_add(&mallory, id, 2, 0, 1, id, &done) == XKV_REASM_PENDING;
	cr_assert_eq(accepted, 64, "alone, a peer has every slot");
	for (uint32_t id = 0; id < 32; id++) {
		cr_assert_eq(big_add(&alice, id, 2, 0, 1, 3000, &done), XKV_REASM_PENDING,
			     "alice's message %u: she has half the slots", id);
	}
	cr_assert_eq(big_add(&alice, 32, 2, 0, 1, 3000, &done), -ENOMEM, "and no more than half");
	cr_assert_eq(big_stats().evicted, 32);
	cr_assert_eq(dropped_pieces, 32);
	cr_assert_eq(big_add(&alice, 0, 2, 1, 1, 3001, &done), XKV_REASM_COMPLETE);
	xkv_reasm_release(big_r, done);
}

Test(reassembly_floods, a_late_piece_of_a_finished_message_opens_nothing)
{
	struct xkv_reasm_msg *done = NULL;
	uint32_t pieces;

	cr_assert_eq(big_send(&alice, 7, 0, BIG, 0, &done), XKV_REASM_COMPLETE);
	pieces = done->pieces;
	cr_assert_eq(done->status, -1, "no status until the caller sets one");
	done->status = XKV_S_NO_MEMORY;
	xkv_reasm_release(big_r, done);
	cr_assert_eq(big_add(&alice, 7, BIG, 0, SLICE, TIMEOUT - 1, &done), XKV_REASM_LATE);
	cr_assert_eq(xkv_reasm_late_status(big_r), XKV_S_NO_MEMORY, "the reply to answer again");
	cr_assert_eq(big_add(&alice, 7, BIG, BIG - 1, 1, TIMEOUT - 1, &done), XKV_REASM_LATE);
	cr_assert_eq(big_stats().in_flight, 0, "no new message");
	cr_assert_eq(big_stats().bytes, 0, "and no memory");
	cr_assert_eq(big_stats().late, 2);
	cr_assert_eq(pieces, (BIG + SLICE - 1) / SLICE, "the late pieces were not the message's");
	cr_assert_eq(big_add(&bob, 7, BIG, 0, SLICE, TIMEOUT - 1, &done), XKV_REASM_PENDING,
		     "another peer's request 7 is another message");
	cr_assert_eq(big_add(&alice, 7, BIG, 0, SLICE, TIMEOUT, &done), XKV_REASM_PENDING,
		     "after the timeout an id is new again");
}

/* Resident set size now, from /proc/self/statm. */
static uint64_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");

	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%lu %lu", &size, &resident), 2);
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

Test(reassembly_floods, memory_of_dropped_values_goes_back_to_the_system)
{
	struct xkv_reasm_msg *done = NULL;
	uint64_t before = rss_bytes();
	void *items[2][8];

	/*
	 * Twice: 8 values of 1 MiB received all but a piece, then timed out, while
	 * something else (the store's items) allocates and keeps small blocks.
	 */
	for (int round = 0; round < 2; round++) {
		for (uint32_t id = 0; id < 8; id++) {
			cr_assert_eq(big_send(&mallory, 100 * round + id, 0, BIG - SLICE, 0, &done),
				     XKV_REASM_PENDING);
			items[round][id] = malloc(100);
			cr_assert_not_null(items[round][id]);
		}
		cr_assert_geq(rss_bytes(), before + 7 * BIG, "the values are resident");
		cr_assert_eq(xkv_reasm_expire(big_r, TIMEOUT), 8);
		cr_assert_leq(rss_bytes(), before + BIG, "round %d: %lu KiB still resident", round,
			      (unsigned long)((rss_bytes() - before) >> 10));
	}
	for (int round = 0; round < 2; round++)
		for (uint32_t id = 0; id < 8; id++)
			free(items[round][id]);
}
