// SPDX-License-Identifier: MIT
/*
 * The controller's choice of the keys to replicate (userspace/dirctl/run.c): the
 * hottest first, as many as asked; a key held counting double, so that a key on the
 * edge stays; of two keys under one hash, the hotter alone; the n log n default.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <xkv/hash.h>
#include "dirctl/dirctl.h"

static struct xkv_dirctl_hot key(const char *name, uint64_t count)
{
	struct xkv_dirctl_hot k = {.count = count, .len = (uint16_t)strlen(name)};

	memcpy(k.key, name, k.len);
	k.hash = xkv_hash(name, k.len);
	return k;
}

Test(dirctl, the_hottest_are_chosen_as_many_as_asked)
{
	struct xkv_dirctl_hot hot[] = {key("a", 10), key("b", 50), key("c", 30), key("d", 0)};
	size_t chosen[4];

	cr_assert_eq(xkv_dirctl_choose(hot, 4, NULL, 0, 2, chosen), 2);
	cr_assert_eq(chosen[0], 1);
	cr_assert_eq(chosen[1], 2);
	cr_assert_eq(xkv_dirctl_choose(hot, 4, NULL, 0, 4, chosen), 3, "a key not asked for waits");
}

Test(dirctl, a_key_held_stays_until_another_is_twice_as_hot)
{
	struct xkv_dirctl_hot hot[] = {key("held", 10), key("new", 19)};
	uint64_t held = hot[0].hash;
	size_t chosen[2];

	cr_assert_eq(xkv_dirctl_choose(hot, 2, &held, 1, 1, chosen), 1);
	cr_assert_eq(chosen[0], 0, "19 requests do not displace a held key of 10");
	hot[1].count = 21;
	xkv_dirctl_choose(hot, 2, &held, 1, 1, chosen);
	cr_assert_eq(chosen[0], 1, "21 do");
}

Test(dirctl, of_two_keys_under_one_hash_the_hotter_alone)
{
	struct xkv_dirctl_hot hot[] = {key("cool", 5), key("hot", 9), key("other", 7)};
	size_t chosen[3];

	hot[0].hash = hot[1].hash; /* a collision, as xkv_hash may have */
	cr_assert_eq(xkv_dirctl_choose(hot, 3, NULL, 0, 3, chosen), 2);
	cr_assert_eq(chosen[0], 1);
	cr_assert_eq(chosen[1], 2);
}

/*
 * A held key spread over many servers may be in no server's top: the directory's own
 * count keeps it, and takes over a server's smaller one.
 */
Test(dirctl, the_directory_counts_the_keys_it_holds)
{
	struct xkv_dirctl_hot hot[4] = {key("home", 100), key("shared", 40)};
	struct xkv_dirctl_hot held[] = {key("spread", 150), key("shared", 90)};
	uint64_t hashes[] = {held[0].hash, held[1].hash};
	size_t n = 2, chosen[4];

	xkv_dirctl_merge_held(hot, &n, 4, held, 2);
	cr_assert_eq(n, 3, "the held key no server reported joins");
	cr_assert_eq(hot[2].hash, held[0].hash);
	cr_assert_eq(hot[2].count, 150);
	cr_assert_eq(hot[1].count, 90, "the directory's count, larger than the servers'");
	cr_assert_eq(hot[0].count, 100, "a key not held keeps the servers' count");
	cr_assert_eq(xkv_dirctl_choose(hot, n, hashes, 2, 2, chosen), 2);
	cr_assert(chosen[0] == 2 && chosen[1] == 1, "the held keys stay: %zu %zu", chosen[0],
		  chosen[1]);
	n = 3;
	xkv_dirctl_merge_held(hot, &n, 3, (struct xkv_dirctl_hot[]){key("more", 1)}, 1);
	cr_assert_eq(n, 3, "no room past cap");
}

/* A reported key under a held key's hash is another key: it keeps its own count. */
Test(dirctl, a_held_key_is_merged_by_its_bytes_not_its_hash)
{
	struct xkv_dirctl_hot hot[2] = {key("other", 7)}, held = key("held", 50);
	size_t n = 1;

	hot[0].hash = held.hash; /* a collision */
	xkv_dirctl_merge_held(hot, &n, 2, &held, 1);
	cr_assert_eq(n, 2);
	cr_assert_eq(hot[0].count, 7, "the colliding key took the held key's count");
	cr_assert_eq(hot[1].count, 50);
}

Test(dirctl, n_log_n_keys_for_n_servers)
{
	cr_assert_eq(xkv_dirctl_keys_for(1), 1);
	cr_assert_eq(xkv_dirctl_keys_for(2), 2);
	cr_assert_eq(xkv_dirctl_keys_for(4), 6);
	cr_assert_eq(xkv_dirctl_keys_for(32), 111);
}
