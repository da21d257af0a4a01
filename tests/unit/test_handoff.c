// SPDX-License-Identifier: MIT
/*
 * engine/handoff.h: a message reaches only its receiver, in order, carrying its own
 * copy of the request; a receiver asleep in poll(2) is woken by it, one awake is not
 * disturbed; a full ring says so and leaves the message with its sender.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <string.h>

#include "engine/handoff.h"

static struct xkv_handoff *message(enum xkv_handoff_kind kind, const char *key, uint32_t id)
{
	char value[] = "a value";
	const struct xkv_msg req = {.op = XKV_OP_PUT,
				    .key = key,
				    .key_len = (uint16_t)strlen(key),
				    .request_id = id,
				    .frag = value,
				    .frag_len = sizeof(value),
				    .value_len = sizeof(value)};
	struct xkv_origin from = {.queue = 3};
	struct xkv_handoff *m;

	memset(from.route.bytes, 0xab, sizeof(from.route.bytes));
	m = xkv_handoff_new(kind, &from, &req, id);

	memset(value, 0, sizeof(value)); /* the message has its own copy */
	cr_assert_not_null(m);
	return m;
}

static bool bell_rung(const struct xkv_handoffs *h, uint32_t id)
{
	struct pollfd p = {.fd = xkv_handoffs_bell_fd(h, id), .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

Test(handoff, messages_reach_their_receiver_in_order_with_their_own_copy)
{
	struct xkv_handoffs h;
	struct xkv_handoff *m;

	cr_assert_eq(xkv_handoffs_init(&h, 3), 0);
	cr_assert(xkv_handoffs_push(&h, 0, 2, message(XKV_HANDOFF_WRITE, "k1", 1)));
	cr_assert(xkv_handoffs_push(&h, 0, 2, message(XKV_HANDOFF_GET, "k2", 2)));
	cr_expect_null(xkv_handoffs_pop(&h, 0, 1), "another receiver got it");
	cr_expect_null(xkv_handoffs_pop(&h, 1, 2), "from another sender");
	m = xkv_handoffs_pop(&h, 0, 2);
	cr_assert_not_null(m);
	cr_expect_eq(m->req.request_id, 1);
	cr_expect(m->req.key_len == 2 && !memcmp(m->req.key, "k1", 2));
	cr_expect(m->req.frag_len == 8 && !strcmp(m->req.frag, "a value"), "a WRITE's value");
	cr_expect(m->from.route.bytes[0] == 0xab && m->from.queue == 3,
		  "the origin the request came from");
	xkv_handoff_free(m);
	m = xkv_handoffs_pop(&h, 0, 2);
	cr_assert_not_null(m);
	cr_expect(m->req.request_id == 2 && m->req.frag_len == 0 && !m->req.frag,
		  "a GET carries no value");
	xkv_handoff_free(m);
	xkv_handoffs_fini(&h);
}

Test(handoff, a_sleeping_receiver_is_woken_an_awake_one_is_not)
{
	struct xkv_handoffs h;

	cr_assert_eq(xkv_handoffs_init(&h, 2), 0);
	cr_assert(xkv_handoffs_push(&h, 0, 1, message(XKV_HANDOFF_GET, "k", 1)));
	cr_expect_not(bell_rung(&h, 1), "rang an awake receiver");

	/* one queued before it slept: sleeping rings its own bell, or it would miss it */
	xkv_handoffs_sleep(&h, 1);
	cr_expect(bell_rung(&h, 1), "slept on a message it had not taken");
	xkv_handoffs_wake(&h, 1);
	cr_expect_not(bell_rung(&h, 1), "waking quiets the bell");
	xkv_handoff_free(xkv_handoffs_pop(&h, 0, 1));

	xkv_handoffs_sleep(&h, 1);
	cr_expect_not(bell_rung(&h, 1), "nothing came, yet the bell rang");
	cr_assert(xkv_handoffs_push(&h, 0, 1, message(XKV_HANDOFF_GET, "k", 2)));
	cr_expect(bell_rung(&h, 1), "a message to a sleeper did not wake it");
	xkv_handoffs_wake(&h, 1);
	xkv_handoffs_fini(&h); /* frees what is still queued: ASan says if not */
}

Test(handoff, a_full_ring_refuses_and_the_sender_keeps_the_message)
{
	struct xkv_handoffs h;
	struct xkv_handoff *m;
	int pushed = 0;

	cr_assert_eq(xkv_handoffs_init(&h, 2), 0);
	for (;;) {
		m = message(XKV_HANDOFF_WRITE, "k", (uint32_t)pushed);
		if (!xkv_handoffs_push(&h, 1, 0, m))
			break;
		pushed++;
	}
	cr_expect_eq(pushed, XKV_HANDOFF_RING);
	xkv_handoff_free(m);
	xkv_handoffs_fini(&h);
}
