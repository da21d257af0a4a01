// SPDX-License-Identifier: MIT
/* memcached's write semantics on a real store, each reply as memcached 1.6 gives it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <xkv/hash.h>
#include <xkv/proto.h>
#include "engine/mc_exec.h"
#include "store_clock.h"

static struct xkv_store *s;
static uint8_t scratch[XKV_VALUE_MAX];
static uint8_t out[XKV_VALUE_MAX];

static void setup(void)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 64 << 20,
		.mode = XKV_MODE_STORE,
		.bucket_bits = 8,
		.overflow_buckets = 4,
	};

	xkv_store_thread_online();
	s = xkv_store_create(&cfg);
	cr_assert_not_null(s);
}

static void teardown(void)
{
	xkv_store_destroy(s);
	xkv_store_thread_offline();
}

TestSuite(mc_exec, .init = setup, .fini = teardown);

/* A write as a TCP session makes it; times as the client sent them. */
static struct xkv_msg cmd(enum xkv_mc_op op, const char *key, const char *value)
{
	uint32_t len = value ? (uint32_t)strlen(value) : 0;

	return (struct xkv_msg){
		.op = op == XKV_MC_DELETE ? XKV_OP_DELETE : XKV_OP_PUT,
		.key = key,
		.key_len = (uint16_t)strlen(key),
		.frag = value,
		.frag_len = len,
		.value_len = len,
		.mc = {.dialect = XKV_DIALECT_MC_TCP, .cmd = {.op = op}},
	};
}

static struct xkv_mc_result apply(const struct xkv_msg *w)
{
	struct xkv_mc_result r;

	xkv_mc_apply(s, w, xkv_hash(w->key, w->key_len), scratch, &r);
	return r;
}

/* One command with just op, key and value; its status. */
static enum xkv_mc_status run(enum xkv_mc_op op, const char *key, const char *value)
{
	struct xkv_msg w = cmd(op, key, value);

	return apply(&w).status;
}

static enum xkv_mc_status arith(enum xkv_mc_op op, const char *key, uint64_t delta,
				uint64_t *number)
{
	struct xkv_msg w = cmd(op, key, NULL);
	struct xkv_mc_result r;

	w.mc.cmd.delta = delta;
	r = apply(&w);
	*number = r.number;
	return r.status;
}

/* The stored value must be want exactly; returns its meta. */
static struct xkv_item_meta assert_value(const char *key, const char *want)
{
	struct xkv_item_meta meta;
	uint32_t len;

	cr_assert_eq(xkv_store_get_meta(s, key, strlen(key), xkv_hash(key, strlen(key)), out,
					sizeof(out), &len, &meta),
		     0, "%s is missing", key);
	cr_assert_eq(len, strlen(want), "%s: length %u, want \"%s\"", key, len, want);
	cr_assert_eq(memcmp(out, want, len), 0, "%s: \"%.*s\", want \"%s\"", key, (int)len, out,
		     want);
	return meta;
}

static bool absent(const char *key)
{
	uint32_t len;

	return xkv_store_value_len(s, key, strlen(key), xkv_hash(key, strlen(key)), &len) ==
	       -ENOENT;
}

Test(mc_exec, set_keeps_flags_and_gives_a_cas)
{
	struct xkv_msg w = cmd(XKV_MC_SET, "k", "v");
	struct xkv_mc_result r;

	w.mc.cmd.flags = 0xffffffff;
	r = apply(&w);
	cr_assert_eq(r.status, XKV_MC_STORED);
	cr_assert_neq(r.cas, 0);
	cr_assert_eq(assert_value("k", "v").flags, 0xffffffff);
	cr_assert_eq(assert_value("k", "v").cas, r.cas);
}

Test(mc_exec, add_only_when_absent_replace_only_when_present)
{
	struct xkv_msg w = cmd(XKV_MC_SET, "gone", "old");

	cr_assert_eq(run(XKV_MC_REPLACE, "k", "r"), XKV_MC_NOT_STORED);
	cr_assert(absent("k"));
	cr_assert_eq(run(XKV_MC_ADD, "k", "a"), XKV_MC_STORED);
	cr_assert_eq(run(XKV_MC_ADD, "k", "b"), XKV_MC_NOT_STORED);
	assert_value("k", "a");
	cr_assert_eq(run(XKV_MC_REPLACE, "k", "r"), XKV_MC_STORED);
	assert_value("k", "r");
	/* an expired item is absent for add and replace alike */
	w.mc.cmd.exptime = 5;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
	xkv_store_clock_shift(s, 5);
	cr_assert_eq(run(XKV_MC_REPLACE, "gone", "r"), XKV_MC_NOT_STORED);
	cr_assert_eq(run(XKV_MC_ADD, "gone", "new"), XKV_MC_STORED);
	assert_value("gone", "new");
}

/* append and prepend keep the item's flags and exptime, ignoring the command's. */
Test(mc_exec, append_and_prepend_keep_flags_and_exptime)
{
	struct xkv_msg w = cmd(XKV_MC_SET, "k", "mid");
	struct xkv_item_meta before, after;
	uint32_t exptime = xkv_mc_exptime(s, 100); /* where 100 s from now is */

	cr_assert_eq(run(XKV_MC_APPEND, "k", "x"), XKV_MC_NOT_STORED);
	cr_assert_eq(run(XKV_MC_PREPEND, "k", "x"), XKV_MC_NOT_STORED);
	cr_assert(absent("k"));
	w.mc.cmd.flags = 7;
	w.mc.cmd.exptime = 100;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
	before = assert_value("k", "mid");
	w = cmd(XKV_MC_APPEND, "k", "-end");
	w.mc.cmd.flags = 99;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
	w = cmd(XKV_MC_PREPEND, "k", "start-");
	w.mc.cmd.flags = 99;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
	after = assert_value("k", "start-mid-end");
	cr_assert_eq(after.flags, 7);
	cr_assert_eq(after.exptime, exptime);
	cr_assert_neq(after.cas, before.cas);
}

Test(mc_exec, append_past_the_largest_value_is_too_large)
{
	static char big[XKV_VALUE_MAX + 1];

	memset(big, 'x', XKV_VALUE_MAX);
	cr_assert_eq(run(XKV_MC_SET, "k", big), XKV_MC_STORED);
	cr_assert_eq(run(XKV_MC_APPEND, "k", "y"), XKV_MC_TOO_LARGE);
	cr_assert_eq(run(XKV_MC_PREPEND, "k", "y"), XKV_MC_TOO_LARGE);
	assert_value("k", big);
}

Test(mc_exec, cas_matches_only_the_current_version)
{
	struct xkv_msg w = cmd(XKV_MC_CAS, "k", "new");
	struct xkv_mc_result set, r;
	struct xkv_msg s1 = cmd(XKV_MC_SET, "k", "one");

	w.mc.cmd.cas = 12345;
	cr_assert_eq(apply(&w).status, XKV_MC_NOT_FOUND);
	cr_assert(absent("k"));
	set = apply(&s1);
	w.mc.cmd.cas = set.cas + XKV_PARTITIONS;
	cr_assert_eq(apply(&w).status, XKV_MC_EXISTS);
	w.mc.cmd.cas = 0;
	cr_assert_eq(apply(&w).status, XKV_MC_EXISTS, "no item has CAS 0");
	assert_value("k", "one");
	w.mc.cmd.cas = set.cas;
	r = apply(&w);
	cr_assert_eq(r.status, XKV_MC_STORED);
	assert_value("k", "new");
	cr_assert_eq(apply(&w).status, XKV_MC_EXISTS, "the CAS moved on");
	w.mc.cmd.cas = r.cas;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
}

Test(mc_exec, delete_and_delete_with_cas)
{
	struct xkv_msg w = cmd(XKV_MC_DELETE, "k", NULL);
	struct xkv_mc_result set;
	struct xkv_msg s1 = cmd(XKV_MC_SET, "k", "v");

	cr_assert_eq(run(XKV_MC_DELETE, "k", NULL), XKV_MC_NOT_FOUND);
	set = apply(&s1);
	w.mc.cmd.cas = set.cas + XKV_PARTITIONS;
	cr_assert_eq(apply(&w).status, XKV_MC_EXISTS);
	assert_value("k", "v");
	w.mc.cmd.cas = set.cas;
	cr_assert_eq(apply(&w).status, XKV_MC_DELETED);
	cr_assert(absent("k"));
	cr_assert_eq(apply(&w).status, XKV_MC_NOT_FOUND);
}

Test(mc_exec, incr_decr_need_a_decimal_value)
{
	static const char *const bad[] = {"abc", "", "12abc", "-5", "1.5", "99999999999999999999"};
	static const char *const good[] = {"12", " 12", "12 34", "+12", "012"};
	uint64_t n;

	cr_assert_eq(arith(XKV_MC_INCR, "k", 1, &n), XKV_MC_NOT_FOUND);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(run(XKV_MC_SET, "k", bad[i]), XKV_MC_STORED);
		cr_assert_eq(arith(XKV_MC_INCR, "k", 1, &n), XKV_MC_NON_NUMERIC, "\"%s\"", bad[i]);
		cr_assert_eq(arith(XKV_MC_DECR, "k", 1, &n), XKV_MC_NON_NUMERIC, "\"%s\"", bad[i]);
		assert_value("k", bad[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(run(XKV_MC_SET, "k", good[i]), XKV_MC_STORED);
		cr_assert_eq(arith(XKV_MC_INCR, "k", 1, &n), XKV_MC_NUMBER, "\"%s\"", good[i]);
		cr_assert_eq(n, 13, "\"%s\"", good[i]);
	}
}

/* incr wraps at 2^64, decr stops at 0; a shorter result keeps the length, space-padded. */
Test(mc_exec, incr_wraps_decr_floors_and_lengths_follow_memcached)
{
	struct xkv_msg w = cmd(XKV_MC_SET, "k", "9");
	struct xkv_item_meta meta;
	uint64_t n;

	w.mc.cmd.flags = 5;
	w.mc.cmd.exptime = 1000;
	cr_assert_eq(apply(&w).status, XKV_MC_STORED);
	cr_assert_eq(arith(XKV_MC_INCR, "k", 1, &n), XKV_MC_NUMBER);
	cr_assert_eq(n, 10);
	meta = assert_value("k", "10");
	cr_assert_eq(meta.flags, 5, "incr keeps the flags");
	cr_assert_eq(meta.exptime, xkv_mc_exptime(s, 1000), "and the exptime");
	cr_assert_eq(arith(XKV_MC_DECR, "k", 1, &n), XKV_MC_NUMBER);
	cr_assert_eq(n, 9);
	assert_value("k", "9 ");
	cr_assert_eq(arith(XKV_MC_DECR, "k", 100, &n), XKV_MC_NUMBER);
	cr_assert_eq(n, 0);
	assert_value("k", "0 ");
	cr_assert_eq(run(XKV_MC_SET, "k", "18446744073709551615"), XKV_MC_STORED);
	cr_assert_eq(arith(XKV_MC_INCR, "k", 2, &n), XKV_MC_NUMBER);
	cr_assert_eq(n, 1);
	assert_value("k", "1                   ");
	cr_assert_eq(arith(XKV_MC_INCR, "k", UINT64_MAX, &n), XKV_MC_NUMBER);
	cr_assert_eq(n, 0);
}

/* ma's N and J: a miss creates the counter at its initial value, with the N exptime. */
Test(mc_exec, arithmetic_vivifies_a_missing_counter)
{
	struct xkv_msg w = cmd(XKV_MC_INCR, "k", NULL);
	struct xkv_mc_result r;

	w.mc.cmd.delta = 5;
	w.mc.cmd.opts = XKV_MC_VIVIFY;
	w.mc.cmd.initial = 13;
	w.mc.cmd.vivify_exptime = 60;
	r = apply(&w);
	cr_assert_eq(r.status, XKV_MC_NUMBER);
	cr_assert_eq(r.number, 13, "the initial value, not incremented");
	cr_assert_eq(assert_value("k", "13").exptime, xkv_mc_exptime(s, 60));
	r = apply(&w);
	cr_assert_eq(r.number, 18);
	cr_assert_eq(assert_value("k", "18").exptime, xkv_mc_exptime(s, 60), "a hit keeps it");
}

Test(mc_exec, touch_sets_the_exptime_of_a_present_item)
{
	struct xkv_msg w = cmd(XKV_MC_TOUCH, "k", NULL);
	struct xkv_mc_result set, r;
	struct xkv_msg s1 = cmd(XKV_MC_SET, "k", "v");

	w.mc.cmd.exptime = 10;
	cr_assert_eq(apply(&w).status, XKV_MC_NOT_FOUND);
	set = apply(&s1);
	r = apply(&w);
	cr_assert_eq(r.status, XKV_MC_TOUCHED);
	cr_assert_eq(r.cas, set.cas, "touch keeps the CAS, as memcached's");
	xkv_store_clock_shift(s, 9);
	assert_value("k", "v");
	xkv_store_clock_shift(s, 1);
	cr_assert(absent("k"));
	cr_assert_eq(apply(&w).status, XKV_MC_NOT_FOUND);
}

/* 0 never, up to 30 days relative, beyond a Unix time, negative already expired. */
Test(mc_exec, exptime_rule)
{
	uint32_t now = xkv_store_now(s);

	cr_assert_eq(xkv_mc_exptime_at(now, 0), 0);
	cr_assert_eq(xkv_mc_exptime_at(now, 1), now + 1);
	cr_assert_eq(xkv_mc_exptime_at(now, XKV_MC_RELATIVE_MAX), now + XKV_MC_RELATIVE_MAX);
	cr_assert_eq(xkv_mc_exptime_at(now, XKV_MC_RELATIVE_MAX + 1), XKV_MC_RELATIVE_MAX + 1,
		     "a Unix time in 1970: expired");
	cr_assert_eq(xkv_mc_exptime_at(now, (int64_t)now + 100), now + 100);
	cr_assert_leq(xkv_mc_exptime_at(now, -1), now);
	cr_assert_neq(xkv_mc_exptime_at(now, -1), 0, "not 'never'");
}
