// SPDX-License-Identifier: MIT
/*
 * Server lists and ketama placement (userspace/client/servers.c, ketama.c). That the
 * placement is twemproxy's own, key for key, is tests/interop/ketama.sh's: nutcracker
 * itself places the keys there. Here: the list's syntax and names, and the properties
 * a consistent hash must have whatever its constants.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ketama.h"
#include "client/servers.h"

static struct xkv_server_addr *parse_ok(const char *list, uint32_t want)
{
	struct xkv_server_addr *s = NULL;
	uint32_t n = 0, bad = 0;

	cr_assert_eq(xkv_servers_parse(list, 7411, &s, &n, &bad), 0, "%s: refused at %u", list,
		     bad);
	cr_assert_eq(n, want, "%s: %u servers", list, n);
	return s;
}

Test(servers, entries_take_port_weight_and_name_as_twemproxy_names_them)
{
	struct xkv_server_addr *s =
		parse_ok("10.0.0.1,10.0.0.2:7500,10.0.0.3:7501:3,10.0.0.4:11211:1,"
			 "10.0.0.5:7502:2 beta,[fd00::1]:7503:4,fe80::1,[::1]:7504",
			 8);

	cr_expect_str_eq(s[0].host, "10.0.0.1");
	cr_expect_str_eq(s[0].port, "7411", "the default port");
	cr_expect_str_eq(s[0].name, "10.0.0.1:7411");
	cr_expect_eq(s[0].weight, 1);
	cr_expect_str_eq(s[1].port, "7500");
	cr_expect_eq(s[1].weight, 1);
	cr_expect_str_eq(s[2].port, "7501");
	cr_expect_eq(s[2].weight, 3);
	cr_expect_str_eq(s[3].name, "10.0.0.4", "twemproxy leaves 11211 out of the name");
	cr_expect_str_eq(s[4].name, "beta");
	cr_expect_eq(s[4].weight, 2);
	cr_expect_str_eq(s[5].host, "fd00::1");
	cr_expect_str_eq(s[5].port, "7503");
	cr_expect_eq(s[5].weight, 4);
	cr_expect_str_eq(s[6].host, "fe80::1", "a bare IPv6 address: no port, no weight");
	cr_expect_str_eq(s[6].port, "7411");
	cr_expect_eq(s[6].weight, 1);
	cr_expect_str_eq(s[7].port, "7504");
	free(s);
}

Test(servers, a_bad_entry_is_refused_and_named)
{
	static const char *const bad[] = {
		"a,,b", "a,", "h:0x10", "h:1:0", "h:1:x", "h:99999", "[::1", "[::1]x", "h:1 ", ":1",
		/* 82 bytes: twemproxy would hash past its buffer, no placement to agree with */
		"h:1 nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xkv_server_addr *s = NULL;
		uint32_t n = 0, at = 99;

		cr_expect_eq(xkv_servers_parse(bad[i], 7411, &s, &n, &at), -EINVAL, "%s", bad[i]);
		cr_expect_lt(at, 3, "%s: the entry's position", bad[i]);
	}
}

#define KEYS 20000

static uint32_t place(const struct xkv_ketama *k, uint32_t i)
{
	char key[32];
	int len = snprintf(key, sizeof(key), "key:%u", i);

	return xkv_ketama_place(k, key, (size_t)len);
}

static void ring(struct xkv_ketama *k, const char *list)
{
	uint32_t n = 0, bad;
	struct xkv_server_addr *s = NULL;

	cr_assert_eq(xkv_servers_parse(list, 7411, &s, &n, &bad), 0);
	cr_assert_eq(xkv_servers_ketama(s, n, k), 0);
	free(s);
}

Test(ketama, one_server_holds_every_key)
{
	struct xkv_ketama k;

	ring(&k, "a:1");
	for (uint32_t i = 0; i < 1000; i++)
		cr_assert_eq(place(&k, i), 0);
	xkv_ketama_fini(&k);
}

/* 160 points a server at equal weights, spread so that each holds its share. */
Test(ketama, equal_weights_share_the_keys)
{
	uint32_t count[4] = {0};
	struct xkv_ketama k;

	ring(&k, "a:1,b:1,c:1,d:1");
	cr_expect_eq(k.npoints, 4 * 160);
	for (uint32_t i = 0; i < KEYS; i++)
		count[place(&k, i)]++;
	for (int s = 0; s < 4; s++)
		cr_expect(count[s] > KEYS / 4 * 0.8 && count[s] < KEYS / 4 * 1.2,
			  "server %d holds %u of %u keys", s, count[s], KEYS);
	xkv_ketama_fini(&k);
}

Test(ketama, a_heavier_server_holds_more)
{
	uint32_t count[2] = {0};
	struct xkv_ketama k;

	ring(&k, "a:1:1,b:1:3");
	for (uint32_t i = 0; i < KEYS; i++)
		count[place(&k, i)]++;
	cr_expect(count[1] > 2.4 * count[0] && count[1] < 3.6 * count[0],
		  "weights 1:3 hold %u:%u", count[0], count[1]);
	xkv_ketama_fini(&k);
}

/* The point of a consistent hash: taking a server away moves its keys and no others. */
Test(ketama, removing_a_server_moves_only_its_keys)
{
	static const char *const names[] = {"a:1", "b:1", "c:1", "d:1"};
	struct xkv_ketama four, three;
	uint32_t moved = 0;

	ring(&four, "a:1,b:1,c:1,d:1");
	ring(&three, "a:1,b:1,d:1");
	for (uint32_t i = 0; i < KEYS; i++) {
		uint32_t before = place(&four, i), after = place(&three, i);
		const char *was = names[before], *now = names[after < 2 ? after : 3];

		if (before == 2) {
			moved++;
			continue;
		}
		cr_assert_str_eq(now, was, "key:%u moved from %s to %s", i, was, now);
	}
	cr_expect_gt(moved, 0);
	xkv_ketama_fini(&four);
	xkv_ketama_fini(&three);
}

Test(ketama, an_empty_or_weightless_ring_is_refused)
{
	struct xkv_ketama_server none = {.name = "a", .weight = 0};
	struct xkv_ketama k;

	cr_expect_eq(xkv_ketama_init(&k, &none, 0), -EINVAL);
	cr_expect_eq(xkv_ketama_init(&k, &none, 1), -EINVAL);
}
