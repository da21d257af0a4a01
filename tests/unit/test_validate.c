// SPDX-License-Identifier: MIT
/* Validation tokens: whose, and for how long (docs/PROTOCOL.md, "Amplification"). */
#include <criterion/criterion.h>

#include "engine/validate.h"

static struct xkv_validate v;
static const struct xkv_peer alice = {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1},
				      .port = 4000};

static void setup(void)
{
	cr_assert_eq(xkv_validate_init(&v), 0);
}

TestSuite(validate, .init = setup);

/* The token peer gets at time now. */
static uint64_t token_at(const struct xkv_peer *peer, uint64_t now)
{
	uint64_t token;

	xkv_validate_token(&v, peer, 0, now, &token);
	return token;
}

Test(validate, good_in_its_window_and_the_next)
{
	uint64_t start = 7 * v.window_ns, t = token_at(&alice, start), current;

	cr_assert_neq(t, 0, "0 means no token on the wire");
	cr_assert(xkv_validate_token(&v, &alice, t, start, &current));
	cr_assert_eq(current, t);
	cr_assert(xkv_validate_token(&v, &alice, t, start + v.window_ns - 1, &current));
	cr_assert(xkv_validate_token(&v, &alice, t, start + v.window_ns, &current),
		  "the next window still takes it");
	cr_assert_neq(current, t, "and hands out that window's");
	cr_assert(xkv_validate_token(&v, &alice, t, start + 2 * v.window_ns - 1, &current));
	cr_assert_not(xkv_validate_token(&v, &alice, t, start + 2 * v.window_ns, &current),
		      "two windows on: too old");
	cr_assert_not(xkv_validate_token(&v, &alice, t, start - 1, &current),
		      "nor good before its window");
}

Test(validate, only_for_its_address_and_port)
{
	struct xkv_peer other_port = alice, other_addr = alice, v6 = {.addr = {0xfd}, .port = 4000};
	uint64_t now = 3 * v.window_ns, t = token_at(&alice, now), current;

	other_port.port = 4001;
	other_addr.addr[15] = 2;
	cr_assert_not(xkv_validate_token(&v, &other_port, t, now, &current));
	cr_assert_not(xkv_validate_token(&v, &other_addr, t, now, &current));
	cr_assert_not(xkv_validate_token(&v, &v6, t, now, &current));
	cr_assert_not(xkv_validate_token(&v, &alice, 0, now, &current), "no token");
}

Test(validate, keyed_by_the_server)
{
	uint64_t now = v.window_ns, t = token_at(&alice, now), current;
	struct xkv_validate restarted;

	cr_assert_eq(xkv_validate_init(&restarted), 0);
	cr_assert_not(xkv_validate_token(&restarted, &alice, t, now, &current),
		      "another key, another token: a restart asks again");
}

Test(validate, trusted_networks)
{
	struct xkv_peer p = alice;

	cr_assert_not(xkv_validate_trusted(&v, &p), "none by default");
	v.trusted[v.ntrusted++] = (struct xkv_allow_key){
		.prefixlen = 96 + 31, .addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 0}};
	cr_assert(xkv_validate_trusted(&v, &p), "10.0.0.1 in 10.0.0.0/31");
	p.addr[15] = 2;
	cr_assert_not(xkv_validate_trusted(&v, &p), "10.0.0.2 is not");
	v.trusted[v.ntrusted++] = (struct xkv_allow_key){.prefixlen = 0};
	cr_assert(xkv_validate_trusted(&v, &p), "::/0 takes everyone");
}
