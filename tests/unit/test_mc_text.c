// SPDX-License-Identifier: MIT
/*
 * The memcached session (text, meta and binary) on a real store, nothing mocked: writes run
 * through xkv_mc_apply, at once (the partition's writer is this thread) or deferred
 * (handed over, completed later through resume), and the bytes must be memcached's.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>
#include <xkv/memcached.h>
#include <xkv/proto.h>
#include "engine/mc_exec.h"
#include "proto/mc_text.h"
#include "store_clock.h"

static struct xkv_store *store;
static uint8_t scratch[XKV_VALUE_MAX];

/* A write handed over: copies of its key and value, as a hand-off message keeps them. */
static struct pending {
	bool busy;
	struct xkv_msg w;
	uint64_t hash;
	char key[XKV_KEY_MAX];
	uint8_t *value;
} pending;
static bool defer;   /* the backend defers every write */
static int deferred; /* writes it deferred */
static bool refuse;  /* the backend refuses every write, as a worker whose slot is busy */

static int read_store(void *ctx, const void *key, uint16_t key_len, uint64_t hash, void *buf,
		      size_t cap, uint32_t *value_len, struct xkv_item_meta *meta)
{
	(void)ctx;
	return xkv_store_get_meta(store, key, key_len, hash, buf, cap, value_len, meta);
}

static int peek_store(void *ctx, const void *key, uint16_t key_len, uint64_t hash,
		      struct xkv_item_meta *meta)
{
	uint32_t value_len;

	(void)ctx;
	return xkv_store_peek_meta(store, key, key_len, hash, &value_len, meta);
}

static int write_store(void *ctx, const struct xkv_msg *w, uint64_t hash, struct xkv_mc_result *r)
{
	(void)ctx;
	if (refuse && !defer) {
		*r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
		return 0;
	}
	if (!defer) {
		xkv_mc_apply(store, w, hash, scratch, r);
		return 0;
	}
	cr_assert(!pending.busy, "a second write while one is in progress");
	pending.busy = true;
	pending.w = *w;
	pending.hash = hash;
	memcpy(pending.key, w->key, w->key_len);
	pending.w.key = pending.key;
	pending.value = malloc(w->value_len + 1);
	cr_assert_not_null(pending.value);
	if (w->value_len) /* a delete or a touch has no value, not even a pointer */
		memcpy(pending.value, w->frag, w->value_len);
	pending.w.frag = pending.value;
	deferred++;
	return -EINPROGRESS;
}

/* The writer's side of a deferred write: apply it, and hand the result back. */
static void complete(struct xkv_mc_session *s, struct xkv_mc_buf *out)
{
	struct xkv_mc_result r;

	cr_assert(pending.busy);
	if (refuse) /* its writer did not hold the slot: nothing written */
		r = (struct xkv_mc_result){.status = XKV_MC_NO_MEMORY};
	else
		xkv_mc_apply(store, &pending.w, pending.hash, scratch, &r);
	free(pending.value);
	pending.busy = false;
	xkv_mc_session_resume(s, &r, out);
}

/* The last delay a flush_all passed on: the backend keeps it for later (the server's tick). */
static int32_t flush_delay;

static int flush_store(void *ctx, int32_t delay)
{
	(void)ctx;
	flush_delay = delay;
	if (delay <= 0)
		xkv_store_flush(store);
	return 0;
}

/* As the server's: up to the limit the store was made with (64 MiB here), no further. */
static int limit_store(void *ctx, size_t bytes)
{
	(void)ctx;
	if (bytes > 64 << 20)
		return -ERANGE;
	xkv_store_set_limit(store, bytes);
	return 0;
}

static uint32_t store_now(void *ctx)
{
	(void)ctx;
	return xkv_store_now(store);
}

static const struct xkv_mc_backend backend = {
	.read = read_store,
	.peek = peek_store,
	.write = write_store,
	.flush = flush_store,
	.memlimit = limit_store,
	.now = store_now,
};

static struct xkv_mc_session session;
static struct xkv_mc_buf out;

static void setup(void)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 64 << 20,
		.mode = XKV_MODE_STORE,
		.bucket_bits = 8,
		.overflow_buckets = 16,
	};

	xkv_store_thread_online();
	store = xkv_store_create(&cfg);
	cr_assert_not_null(store);
	xkv_mc_session_init(&session, &backend);
	memset(&out, 0, sizeof(out));
	defer = false;
	deferred = 0;
	refuse = false;
}

static void teardown(void)
{
	xkv_mc_buf_free(&out);
	xkv_mc_session_free(&session);
	xkv_store_destroy(store);
	xkv_store_thread_offline();
}

TestSuite(mc_text, .init = setup, .fini = teardown);

/*
 * The connection's side: in[0..len) arrives step bytes at a time, and what the
 * session consumed is scribbled over at once, so that nothing may point into it
 * afterwards; deferred writes complete when the session waits. Returns whether the
 * session closed.
 */
static bool drive(const char *request, size_t len, size_t step)
{
	char *in = malloc(len + 1);
	size_t have = 0, used = 0;
	bool close = false;

	cr_assert_not_null(in);
	memcpy(in, request, len);
	for (;;) {
		size_t n;

		if (xkv_mc_session_waiting(&session)) {
			complete(&session, &out);
			continue;
		}
		n = xkv_mc_session_feed(&session, in + used, have - used, &out, &close);
		memset(in + used, '!', n);
		used += n;
		if (close)
			break;
		if (xkv_mc_session_waiting(&session))
			continue;
		if (have == len)
			break;
		have = have + step < len ? have + step : len;
	}
	free(in);
	cr_assert(!close || !xkv_mc_session_waiting(&session));
	return close;
}

static void assert_out(const char *want, size_t want_len, const char *what)
{
	cr_assert(out.len == want_len && memcmp(out.data, want, want_len) == 0,
		  "%s: got %zu bytes \"%.*s\", want \"%s\"", what, out.len, (int)out.len,
		  out.data, want);
}

/* "@" is a 251-byte key, "#" a 250-byte one. */
static char *expand(const char *t, size_t *len)
{
	char *s = malloc(strlen(t) * 251 + 1), *p = s;

	cr_assert_not_null(s);
	for (; *t; t++) {
		size_t n = *t == '@' ? 251 : *t == '#' ? 250 : 0;

		if (n) {
			memset(p, 'a', n);
			p += n;
		} else {
			*p++ = *t;
		}
	}
	*len = (size_t)(p - s);
	return s;
}

/*
 * Requests and the bytes memcached 1.6.18 answered them with (memcached -t 1, python
 * over TCP, each on a flushed server), every reply without a CAS in it.
 */
static const struct {
	const char *request, *reply;
} memcached_said[] = {
	{"bogus\r\n",
	 "ERROR\r\n"},
	{"\r\n",
	 "ERROR\r\n"},
	{"get\r\n",
	 "ERROR\r\n"},
	{"set k 0 0\r\n",
	 "ERROR\r\n"},
	{"set k 0 0 1 2 3\r\n"
	 "x\r\n",
	 "ERROR\r\n"
	 "ERROR\r\n"},
	{"set k abc 0 1\r\n"
	 "x\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 -1\r\n"
	 "x\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "set k 0 0 3\r\n"
	 "abcd\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "CLIENT_ERROR bad data chunk\r\n"
	 "ERROR\r\n"
	 "VALUE k 0 1\r\n"
	 "x\r\n"
	 "END\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "set k 0 0 3\r\n"
	 "abcdefgh\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "CLIENT_ERROR bad data chunk\r\n"
	 "ERROR\r\n"
	 "VALUE k 0 1\r\n"
	 "x\r\n"
	 "END\r\n"},
	{"get @\r\n",
	 "CLIENT_ERROR bad command line format\r\n"},
	{"get #\r\n",
	 "END\r\n"},
	{"set @ 0 0 1\r\n"
	 "x\r\n"
	 "get k\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"
	 "END\r\n"},
	{"incr k abc\r\n",
	 "CLIENT_ERROR invalid numeric delta argument\r\n"},
	{"incr k -1\r\n",
	 "CLIENT_ERROR invalid numeric delta argument\r\n"},
	{"incr nokey 1\r\n",
	 "NOT_FOUND\r\n"},
	{"decr\r\n",
	 "ERROR\r\n"},
	{"flush_all\r\n",
	 "OK\r\n"},
	{"flush_all 0\r\n",
	 "OK\r\n"},
	{"flush_all noreply\r\n"
	 "mn\r\n",
	 "MN\r\n"},
	{"flush_all abc\r\n",
	 "CLIENT_ERROR invalid exptime argument\r\n"},
	{"flush_all -1\r\n",
	 "OK\r\n"},
	{"verbosity\r\n",
	 "ERROR\r\n"},
	{"verbosity 1\r\n",
	 "OK\r\n"},
	{"verbosity 1 noreply\r\n"
	 "mn\r\n",
	 "MN\r\n"},
	{"stats reset\r\n"
	 "stats reset extra\r\n"
	 "stats sizes\r\n"
	 "stats detail dump\r\n"
	 "stats detail off\r\n",
	 "RESET\r\nRESET\r\nSTAT sizes_status disabled\r\nEND\r\nEND\r\nOK\r\n"},
	{"stats detail\r\n"
	 "stats detail foo\r\n"
	 "stats foo\r\n"
	 "stats RESET\r\n",
	 "CLIENT_ERROR usage: stats detail on|off|dump\r\n"
	 "CLIENT_ERROR usage: stats detail on|off|dump\r\n"
	 "ERROR\r\nERROR\r\n"},
	{"cache_memlimit\r\n"
	 "cache_memlimit abc\r\n"
	 "cache_memlimit -5\r\n"
	 "cache_memlimit 8 9 10\r\n",
	 "ERROR\r\nERROR\r\nERROR\r\nERROR\r\n"},
	{"cache_memlimit 7\r\n"
	 "cache_memlimit 0\r\n",
	 "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n"
	 "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n"},
	{"cache_memlimit 2000000000\r\n",
	 "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n"},
	{"cache_memlimit 64\r\n"
	 "cache_memlimit 4294967304\r\n" /* 2^32 + 8: memcached's 32 bits, 8 */
	 "cache_memlimit 8 noreply\r\n"
	 "mn\r\n",
	 "OK\r\nOK\r\nMN\r\n"},
	{"verbosity a\r\n"
	 "verbosity 1 2 3\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"set k 5 0 1\r\n"
	 "x\r\n"
	 "touch k 10\r\n"
	 "touch nokey 10\r\n"
	 "touch k\r\n"
	 "touch k abc\r\n",
	 "STORED\r\n"
	 "TOUCHED\r\n"
	 "NOT_FOUND\r\n"
	 "ERROR\r\n"
	 "CLIENT_ERROR invalid exptime argument\r\n"},
	{"set k 5 0 1\r\n"
	 "x\r\n"
	 "gat 10 k nokey k\r\n"
	 "gat k\r\n"
	 "gat abc k\r\n"
	 "gat 10\r\n",
	 "STORED\r\n"
	 "VALUE k 5 1\r\n"
	 "x\r\n"
	 "VALUE k 5 1\r\n"
	 "x\r\n"
	 "END\r\n"
	 "CLIENT_ERROR invalid exptime argument\r\n"
	 "CLIENT_ERROR invalid exptime argument\r\n"
	 "END\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "delete k 0\r\n"
	 "delete k 5\r\n"
	 "delete k noreply\r\n"
	 "delete k\r\n"
	 "delete\r\n",
	 "STORED\r\n"
	 "DELETED\r\n"
	 "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n"
	 "NOT_FOUND\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 1\n"
	 "x\n"
	 "get k\n",
	 "CLIENT_ERROR bad data chunk\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 1\r\n"
	 "x\n"
	 "get k\r\n",
	 "CLIENT_ERROR bad data chunk\r\n"
	 "ERROR\r\n"},
	{"GET k\r\n",
	 "ERROR\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "get k  k\r\n",
	 "STORED\r\n"
	 "VALUE k 0 1\r\n"
	 "x\r\n"
	 "VALUE k 0 1\r\n"
	 "x\r\n"
	 "END\r\n"},
	{"  get k\r\n",
	 "END\r\n"},
	{"set k 0 0 1 noreply\r\n"
	 "x\r\n"
	 "set k 0 0 1 bogus\r\n"
	 "y\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "VALUE k 0 1\r\n"
	 "y\r\n"
	 "END\r\n"},
	{"set k 4294967295 0 1\r\n"
	 "x\r\n"
	 "set j 4294967296 0 1\r\n"
	 "x\r\n"
	 "get k j\r\n",
	 "STORED\r\n"
	 "STORED\r\n"
	 "VALUE k 4294967295 1\r\n"
	 "x\r\n"
	 "VALUE j 0 1\r\n"
	 "x\r\n"
	 "END\r\n"},
	{"set k 0 abc 1\r\n"
	 "x\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 abc\r\n"
	 "x\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "cas k 0 0 1\r\n"
	 "x\r\n",
	 "STORED\r\n"
	 "ERROR\r\n"
	 "ERROR\r\n"},
	{"cas k 0 0 1 abc\r\n"
	 "x\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"incr k 18446744073709551616\r\n",
	 "CLIENT_ERROR invalid numeric delta argument\r\n"},
	{"set n 0 0 1\r\n"
	 "5\r\n"
	 "incr n 18446744073709551615\r\n",
	 "STORED\r\n"
	 "4\r\n"},
	{"touch @ 1\r\n",
	 "CLIENT_ERROR bad command line format\r\n"},
	{"delete @\r\n",
	 "CLIENT_ERROR bad command line format\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "get k\rget k\r\n",
	 "STORED\r\n"
	 "VALUE k 0 1\r\n"
	 "x\r\n"
	 "END\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "append k 0 0 1 noreply\r\n"
	 "y\r\n"
	 "prepend k 0 0 1\r\n"
	 "z\r\n"
	 "get k\r\n"
	 "append nokey 0 0 1\r\n"
	 "x\r\n",
	 "STORED\r\n"
	 "STORED\r\n"
	 "VALUE k 0 3\r\n"
	 "zxy\r\n"
	 "END\r\n"
	 "NOT_STORED\r\n"},
	{"mn\r\n"
	 "mg\r\n"
	 "mg nokey\r\n"
	 "mg nokey v\r\n"
	 "mg nokey q\r\n"
	 "mn\r\n",
	 "MN\r\n"
	 "ERROR\r\n"
	 "EN\r\n"
	 "EN\r\n"
	 "MN\r\n"},
	{"ms k 2 ME\r\n"
	 "hi\r\n"
	 "ms k 2 ME\r\n"
	 "hi\r\n"
	 "ms new 2 ME\r\n"
	 "hi\r\n"
	 "ms nokey 2 MR\r\n"
	 "hi\r\n"
	 "ms k 2 MA\r\n"
	 "yo\r\n"
	 "mg k v\r\n"
	 "ms k 2 MP\r\n"
	 "zz\r\n"
	 "mg k v\r\n"
	 "ms k 2 MX\r\n"
	 "hi\r\n",
	 "HD\r\n"
	 "NS\r\n"
	 "HD\r\n"
	 "NS\r\n"
	 "HD\r\n"
	 "VA 4\r\n"
	 "hiyo\r\n"
	 "HD\r\n"
	 "VA 6\r\n"
	 "zzhiyo\r\n"
	 "CLIENT_ERROR invalid mode for ms M token\r\n"},
	{"ms k 2\r\n"
	 "hi\r\n"
	 "md k\r\n"
	 "md k\r\n"
	 "md k q\r\n"
	 "mn\r\n"
	 "md k O9 k\r\n",
	 "HD\r\n"
	 "HD\r\n"
	 "NF\r\n"
	 "NF\r\n"
	 "MN\r\n"
	 "NF O9 kk\r\n"},
	{"set s 0 0 1\r\n"
	 "x\r\n"
	 "ma s\r\n"
	 "ma cnt Mz\r\n",
	 "STORED\r\n"
	 "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
	 "CLIENT_ERROR invalid mode for ma M token\r\n"},
	{"ms k 2\r\n"
	 "hi\r\n"
	 "mg k zz\r\n"
	 "mg k !\r\n"
	 "mg @ v\r\n",
	 "HD\r\n"
	 "CLIENT_ERROR invalid flag\r\n"
	 "CLIENT_ERROR invalid flag\r\n"
	 "CLIENT_ERROR bad command line format\r\n"},
	{"ms k\r\n"
	 "hi\r\n"
	 "ms k abc\r\n"
	 "hi\r\n"
	 "ms k 2\r\n"
	 "hiX\r\n"
	 "mn\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"
	 "CLIENT_ERROR bad data chunk\r\n"
	 "ERROR\r\n"
	 "MN\r\n"},
	{"mg nokey O1 k v s f t c\r\n"
	 "mg nokey k O2 q\r\n"
	 "mn\r\n",
	 "EN O1 knokey\r\n"
	 "MN\r\n"},
	{"ms k 2 zz\r\n"
	 "hi\r\n"
	 "mn\r\n",
	 "CLIENT_ERROR invalid flag\r\n"
	 "MN\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "md k C1\r\n"
	 "md k q\r\n"
	 "mn\r\n"
	 "md k C1 q\r\n"
	 "mn\r\n",
	 "STORED\r\n"
	 "EX\r\n"
	 "MN\r\n"
	 "NF\r\n"
	 "MN\r\n"},
	{"set n 0 0 1\r\n"
	 "5\r\n"
	 "ma n T100 t v\r\n"
	 "mg n t\r\n"
	 "ma n C1\r\n"
	 "ma nokey C1\r\n",
	 "STORED\r\n"
	 "VA 1 t100\r\n"
	 "6\r\n"
	 "HD t100\r\n"
	 "EX\r\n"
	 "NF\r\n"},
	{"\n",
	 "ERROR\r\n"},
	{"mn extra\r\n",
	 "MN\r\n"},
	{"mn\n",
	 "MN\r\n"},
	{"ms k 2 T-1\r\n"
	 "hi\r\n"
	 "mg k v\r\n"
	 "ms k 2 Tabc\r\n"
	 "hi\r\n"
	 "mn\r\n",
	 "HD\r\n"
	 "EN\r\n"
	 "CLIENT_ERROR bad token in command line format\r\n"
	 "MN\r\n"},
	{"ms k 2 F-1\r\n"
	 "hi\r\n"
	 "ms k 2 Fabc\r\n"
	 "hi\r\n"
	 "mn\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "CLIENT_ERROR bad command line format\r\n"
	 "MN\r\n"},
	{"set k 0 0 1\r\n"
	 "x\r\n"
	 "mg k s v s\r\n"
	 "mg k O1111111111111111111111111111111111111111\r\n",
	 "STORED\r\n"
	 "CLIENT_ERROR duplicate flag\r\n"
	 "CLIENT_ERROR opaque token too long\r\n"},
	{"ms k 2\r\n"
	 "hi\r\n"
	 "ms k 2 MS\r\n"
	 "hi\r\n"
	 "ms k 2 Ms\r\n"
	 "hi\r\n"
	 "ms k 2 MA N100\r\n"
	 "hi\r\n"
	 "ms nn 2 MA N100\r\n"
	 "hi\r\n"
	 "mg nn t v\r\n",
	 "HD\r\n"
	 "HD\r\n"
	 "CLIENT_ERROR invalid mode for ms M token\r\n"
	 "HD\r\n"
	 "NS\r\n"
	 "EN\r\n"},
	{"set n 0 0 1\r\n"
	 "5\r\n"
	 "ma n MI D5\r\n"
	 "ma n M+ D5 v\r\n"
	 "ma n M- D1 v\r\n"
	 "ma n Mi v\r\n",
	 "STORED\r\n"
	 "HD\r\n"
	 "VA 2\r\n"
	 "15\r\n"
	 "VA 2\r\n"
	 "14\r\n"
	 "CLIENT_ERROR invalid mode for ma M token\r\n"},
	{"gets\r\n"
	 "gat 10\r\n"
	 "touch\r\n"
	 "incr k\r\n"
	 "set k 0 0 1\r\n"
	 "x\r\n"
	 "incr k 1 2\r\n"
	 "delete k 0 noreply\r\n"
	 "mn\r\n",
	 "ERROR\r\n"
	 "END\r\n"
	 "ERROR\r\n"
	 "ERROR\r\n"
	 "STORED\r\n"
	 "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
	 "MN\r\n"},
	{"set k 0 0 1 noreply extra\r\n"
	 "x\r\n"
	 "mn\r\n",
	 "ERROR\r\n"
	 "ERROR\r\n"
	 "MN\r\n"},
	{"flush_all 0 noreply extra\r\n"
	 "mn\r\n",
	 "ERROR\r\n"
	 "MN\r\n"},
	{"set k 0 0 1 noreply\r\n"
	 "xy\r\n"
	 "mn\r\n",
	 "ERROR\r\n"
	 "MN\r\n"},
	{"set @ 0 0 1 noreply\r\n"
	 "x\r\n"
	 "mn\r\n",
	 "ERROR\r\n"
	 "MN\r\n"},
	{"incr k abc noreply\r\n"
	 "mn\r\n",
	 "MN\r\n"},
	{"touch k abc noreply\r\n"
	 "mn\r\n",
	 "MN\r\n"},
	{"set k 0 0 1\r\n"
	 "5\r\n"
	 "incr k 1 noreply\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "VALUE k 0 1\r\n"
	 "6\r\n"
	 "END\r\n"},
	{"get k HTTP/1.1\r\n",
	 "END\r\n"},
	{"ms k 2 q F1\r\n"
	 "hi\r\n"
	 "ms k 2 q C1\r\n"
	 "hi\r\n"
	 "mn\r\n",
	 "EX\r\n"
	 "MN\r\n"},
	{"ms k 2\r\n"
	 "hi\r\n"
	 "mg k O123 q v\r\n"
	 "mg zz O1 q k\r\n"
	 "mn\r\n",
	 "HD\r\n"
	 "VA 2 O123\r\n"
	 "hi\r\n"
	 "MN\r\n"},
	{"ma k MX\r\n",
	 "CLIENT_ERROR invalid mode for ma M token\r\n"},
	{"ms k -1\r\n"
	 "hi\r\n",
	 "CLIENT_ERROR bad command line format\r\n"
	 "ERROR\r\n"},
	{"ms k 2\r\n"
	 "hi\r\n"
	 "ma k q v\r\n"
	 "mn\r\n",
	 "HD\r\n"
	 "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
	 "MN\r\n"},
	{"ma nope q\r\n"
	 "mn\r\n",
	 "NF\r\n"
	 "MN\r\n"},
	{"set k 0 0 5\r\n"
	 "hello\r\n"
	 "get k k k\r\n"
	 "get k",
	 "STORED\r\n"
	 "VALUE k 0 5\r\n"
	 "hello\r\n"
	 "VALUE k 0 5\r\n"
	 "hello\r\n"
	 "VALUE k 0 5\r\n"
	 "hello\r\n"
	 "END\r\n"},
	{"set k 0 0 2\r\n"
	 "10\r\n"
	 "decr k 1\r\n"
	 "get k\r\n"
	 "incr k 99\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "9\r\n"
	 "VALUE k 0 2\r\n"
	 "9 \r\n"
	 "END\r\n"
	 "108\r\n"
	 "VALUE k 0 3\r\n"
	 "108\r\n"
	 "END\r\n"},
	{"set k 0 -1 1\r\n"
	 "x\r\n"
	 "get k\r\n"
	 "set k 0 2592001 1\r\n"
	 "x\r\n"
	 "get k\r\n",
	 "STORED\r\n"
	 "END\r\n"
	 "STORED\r\n"
	 "END\r\n"},
	{"add k 0 0 1\r\n"
	 "x\r\n"
	 "add k 0 0 1\r\n"
	 "y\r\n"
	 "replace k 0 0 1\r\n"
	 "z\r\n"
	 "replace q 0 0 1\r\n"
	 "z\r\n"
	 "get k q\r\n",
	 "STORED\r\n"
	 "NOT_STORED\r\n"
	 "STORED\r\n"
	 "NOT_STORED\r\n"
	 "VALUE k 0 1\r\n"
	 "z\r\n"
	 "END\r\n"},
};

static void run_table(size_t step, bool deferring)
{
	for (size_t i = 0; i < sizeof(memcached_said) / sizeof(memcached_said[0]); i++) {
		size_t len, want_len;
		char *req = expand(memcached_said[i].request, &len);
		char *want = expand(memcached_said[i].reply, &want_len);

		teardown();
		setup();
		defer = deferring;
		drive(req, len, step);
		assert_out(want, want_len, memcached_said[i].request);
		free(req);
		free(want);
	}
}

Test(mc_text, replies_are_memcached_bytes)
{
	run_table(SIZE_MAX / 2, false);
}

/* Every partial line and partial value waits for more, and nothing changes. */
Test(mc_text, one_byte_at_a_time_changes_nothing)
{
	run_table(1, false);
}

/* Writes completed later, on another thread's turn, give the same bytes in the same order. */
Test(mc_text, deferred_writes_change_nothing)
{
	run_table(7, true);
	cr_assert_gt(deferred, 0);
}

/* One feed of a whole request, no deferral: the bytes consumed. */
static size_t feed(const char *in, bool *close)
{
	return xkv_mc_session_feed(&session, in, strlen(in), &out, close);
}

#define ASSERT_OUT(want) assert_out(want, strlen(want), want)

/* A write in progress holds back every command after it, reads included. */
Test(mc_text, a_write_in_progress_holds_back_what_follows)
{
	const char *req = "set a 0 0 1\r\nx\r\nget a\r\nmn\r\n";
	bool close;
	size_t n;

	defer = true;
	n = feed(req, &close);
	cr_assert_eq(n, strlen("set a 0 0 1\r\nx\r\n"), "the set is consumed, nothing more");
	cr_assert(xkv_mc_session_waiting(&session));
	cr_assert_eq(out.len, 0);
	cr_assert_eq(xkv_mc_session_feed(&session, req + n, strlen(req + n), &out, &close), 0,
		     "waiting: nothing consumed");
	complete(&session, &out);
	ASSERT_OUT("STORED\r\n");
	cr_assert_eq(feed(req + n, &close), strlen(req + n));
	ASSERT_OUT("STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nMN\r\n");
}

/* gat touches key after key, each write in progress in turn; the reply comes out whole. */
Test(mc_text, gat_resumes_key_after_key)
{
	const char *sets = "set a 1 0 1\r\nx\r\nset b 2 0 2\r\nyy\r\n";
	bool close;

	cr_assert_eq(feed(sets, &close), strlen(sets));
	defer = true;
	feed("gat 100 a nokey b\r\n", &close);
	for (int i = 0; i < 3; i++) {
		cr_assert(xkv_mc_session_waiting(&session), "touch %d in progress", i);
		complete(&session, &out);
	}
	cr_assert(!xkv_mc_session_waiting(&session));
	cr_assert_eq(deferred, 3);
	ASSERT_OUT("STORED\r\nSTORED\r\nVALUE a 1 1\r\nx\r\nVALUE b 2 2\r\nyy\r\nEND\r\n");
	out.len = 0;
	xkv_store_clock_shift(store, 99);
	defer = false;
	feed("get a b\r\nmg a t v\r\n", &close);
	ASSERT_OUT("VALUE a 1 1\r\nx\r\nVALUE b 2 2\r\nyy\r\nEND\r\nVA 1 t1\r\nx\r\n");
}

/* The CAS gets and mg c show is the store's, and cas takes it. */
Test(mc_text, gets_shows_the_cas_that_cas_takes)
{
	struct xkv_item_meta meta;
	char want[128], req[64];
	uint32_t len;
	bool close;

	feed("set k 7 0 2\r\nhi\r\n", &close);
	cr_assert_eq(xkv_store_get_meta(store, "k", 1, xkv_hash("k", 1), scratch, sizeof(scratch),
					&len, &meta),
		     0);
	out.len = 0;
	feed("gets k\r\nmg k c\r\n", &close);
	snprintf(want, sizeof(want), "VALUE k 7 2 %" PRIu64 "\r\nhi\r\nEND\r\nHD c%" PRIu64 "\r\n",
		 meta.cas, meta.cas);
	ASSERT_OUT(want);
	out.len = 0;
	snprintf(req, sizeof(req), "cas k 0 0 1 %" PRIu64 "\r\nz\r\n", meta.cas + 1);
	feed(req, &close);
	snprintf(req, sizeof(req), "cas k 0 0 1 %" PRIu64 "\r\nz\r\n", meta.cas);
	feed(req, &close);
	feed(req, &close);
	ASSERT_OUT("EXISTS\r\nSTORED\r\nEXISTS\r\n");
}

/* Relative and absolute exptimes, through the store's clock. */
Test(mc_text, items_expire_by_the_store_clock)
{
	char req[64];
	bool close;

	snprintf(req, sizeof(req), "set abs 0 %u 1\r\nb\r\n", xkv_store_now(store) + 50);
	feed(req, &close);
	feed("set rel 0 10 1\r\nr\r\nset never 0 0 1\r\nn\r\n", &close);
	xkv_store_clock_shift(store, 10);
	out.len = 0;
	feed("get rel abs never\r\nmg abs t\r\n", &close);
	ASSERT_OUT("VALUE abs 0 1\r\nb\r\nVALUE never 0 1\r\nn\r\nEND\r\nHD t40\r\n");
	xkv_store_clock_shift(store, 40);
	out.len = 0;
	feed("get abs\r\ntouch abs 10\r\n", &close);
	ASSERT_OUT("END\r\nNOT_FOUND\r\n");
}

/*
 * cache_memlimit: the store's limit follows it, down and back up to what the server
 * can hold; past that it is refused, the limit unchanged. In store mode, writes past a
 * lowered limit are refused.
 */
Test(mc_text, cache_memlimit_moves_the_stores_limit)
{
	enum { VALUE = 600 * 1024 };
	static char req[VALUE + 64];
	struct xkv_store_stats st;
	bool close;
	int stored = 0;

	feed("cache_memlimit 65\r\n", &close);
	ASSERT_OUT("MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n");
	xkv_store_get_stats(store, &st);
	cr_assert_eq(st.bytes_limit, 64 << 20);
	out.len = 0;
	feed("cache_memlimit 8\r\n", &close);
	ASSERT_OUT("OK\r\n");
	xkv_store_get_stats(store, &st);
	cr_assert_eq(st.bytes_limit, 8 << 20);
	for (int i = 0; i < 20; i++) { /* 12 MB offered to 8 */
		int n = snprintf(req, sizeof(req), "set big%d 0 0 %d\r\n", i, VALUE);

		memset(req + n, 'v', VALUE);
		memcpy(req + n + VALUE, "\r\n", 2);
		out.len = 0;
		drive(req, (size_t)n + VALUE + 2, (size_t)n + VALUE + 2);
		stored += out.len == 8 && !memcmp(out.data, "STORED\r\n", 8);
	}
	cr_assert(stored >= 12 && stored < 14, "%d of 20 values of 600 KB stored under 8 MiB",
		  stored);
	out.len = 0;
	feed("cache_memlimit 64\r\nset big19 0 0 1\r\nx\r\n", &close);
	ASSERT_OUT("OK\r\nSTORED\r\n");
}

/* Where memcached would start counting per key prefix, xkv says it does not. */
Test(mc_text, stats_detail_on_is_refused_saying_so)
{
	bool close;

	feed("stats detail on\r\n", &close);
	ASSERT_OUT("CLIENT_ERROR stats detail on is not supported\r\n");
}

/* A delay goes to the backend, which flushes when it comes (the server: server_mc_tick). */
Test(mc_text, flush_all_passes_its_delay_on)
{
	static const struct {
		const char *in, *want;
		int32_t delay;
	} steps[] = {
		{"set k 0 0 1\r\nx\r\nflush_all 10\r\nget k\r\n",
		 "STORED\r\nOK\r\nVALUE k 0 1\r\nx\r\nEND\r\n", 10},
		{"flush_all 5 noreply\r\nflush_all\r\nget k\r\n", "OK\r\nEND\r\n", 0},
	};
	bool close;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		out.len = 0;
		feed(steps[i].in, &close);
		assert_out(steps[i].want, strlen(steps[i].want), steps[i].in);
		cr_assert_eq(flush_delay, steps[i].delay);
	}
}

/* 1 MiB values both ways; one byte more is refused, its bytes skipped however they come. */
Test(mc_text, one_mib_values_and_one_byte_more)
{
	static char req[XKV_VALUE_MAX + 100], want[XKV_VALUE_MAX + 100];
	int n = snprintf(req, sizeof(req), "set k 0 0 %u\r\n", XKV_VALUE_MAX);
	int w = snprintf(want, sizeof(want), "STORED\r\nVALUE k 0 %u\r\n", XKV_VALUE_MAX);

	memset(req + n, 'v', XKV_VALUE_MAX);
	memcpy(req + n + XKV_VALUE_MAX, "\r\nget k\r\n", 9);
	memset(want + w, 'v', XKV_VALUE_MAX);
	memcpy(want + w + XKV_VALUE_MAX, "\r\nEND\r\n", 7);
	cr_assert(!drive(req, (size_t)n + XKV_VALUE_MAX + 9, 65536));
	assert_out(want, (size_t)w + XKV_VALUE_MAX + 7, "1 MiB");

	out.len = 0;
	n = snprintf(req, sizeof(req), "set k 0 0 %u\r\n", XKV_VALUE_MAX + 1);
	memset(req + n, 'v', XKV_VALUE_MAX + 1);
	memcpy(req + n + XKV_VALUE_MAX + 1, "\r\nget k\r\n", 9);
	defer = true;
	cr_assert(!drive(req, (size_t)n + XKV_VALUE_MAX + 1 + 9, 4000));
	/* and, as memcached, the old value is gone rather than stale */
	ASSERT_OUT("SERVER_ERROR object too large for cache\r\nEND\r\n");
}

/* A line without a newline: memcached hangs up after 2048 bytes, unless it is a get. */
Test(mc_text, long_lines_close_unless_a_get)
{
	static char req[4096];
	bool close;

	memset(req, 'x', 3000);
	cr_assert_eq(xkv_mc_session_feed(&session, req, 2048, &out, &close), 0);
	cr_assert(!close, "2048 bytes may still be a line");
	cr_assert_eq(xkv_mc_session_feed(&session, req, 2049, &out, &close), 0);
	cr_assert(close);
	memcpy(req, "get ", 4);
	for (int i = 4; i < 3000; i += 2)
		memcpy(req + i, "k ", 2);
	cr_assert_eq(xkv_mc_session_feed(&session, req, 3000, &out, &close), 0);
	cr_assert(!close, "a long multiget waits for its newline");
	memcpy(req + 3000, "\r\n", 2);
	cr_assert_eq(xkv_mc_session_feed(&session, req, 3002, &out, &close), 3002);
	ASSERT_OUT("END\r\n");
}

/* quit, and an HTTP request, close; nothing after them is read. */
Test(mc_text, quit_and_http_close)
{
	const char *req = "mn\r\nquit\r\nmn\r\n";
	bool close;

	cr_assert_eq(feed(req, &close), strlen("mn\r\nquit\r\n"));
	cr_assert(close);
	ASSERT_OUT("MN\r\n");
	feed("GET / HTTP/1.1\r\nmn\r\n", &close);
	cr_assert(close);
	ASSERT_OUT("MN\r\n");
}

/* What xkv refuses, it says so: flags it does not implement, a meta debug command. */
Test(mc_text, refused_meta_flags_say_so)
{
	bool close;

	feed("mg k l\r\nms k 1 I\r\nx\r\nmd k I\r\nmg k N30 v\r\nmg k R30\r\nmd k T30\r\nmn\r\n",
	     &close);
	ASSERT_OUT("CLIENT_ERROR unsupported flag\r\nCLIENT_ERROR unsupported flag\r\n"
		   "CLIENT_ERROR unsupported flag\r\nCLIENT_ERROR unsupported flag\r\n"
		   "CLIENT_ERROR unsupported flag\r\nCLIENT_ERROR unsupported flag\r\nMN\r\n");
}

/*
 * A write the engine could not do (its EWT slot stayed busy, a hand-off ring was full,
 * its writer no longer held the slot) is SERVER_ERROR in every command, at once or on
 * resume, never a success: md once answered HD for a delete that never happened, and
 * mg with T a miss (or, at once, a hit) for a touch that never happened.
 */
Test(mc_text, a_refused_write_is_an_error_never_a_success)
{
	const char *req = "set k 0 0 1\r\nx\r\ndelete k\r\nms k 1\r\ny\r\nmd k\r\n"
			  "md k q\r\nma k\r\nmg k T30 v\r\nmn\r\n";
	const char *want = "SERVER_ERROR out of memory storing object\r\n";
	bool close;
	char all[512];

	cr_assert_eq(feed("set k 0 0 1\r\nv\r\n", &close), strlen("set k 0 0 1\r\nv\r\n"));
	out.len = 0;
	snprintf(all, sizeof(all), "%s%s%s%s%s%s%sMN\r\n", want, want, want, want, want, want,
		 want);
	refuse = true;
	feed(req, &close);
	assert_out(all, strlen(all), "refused at once");
	out.len = 0;
	defer = true;
	cr_assert(drive(req, strlen(req), 1) == false);
	assert_out(all, strlen(all), "refused on resume");
	cr_assert_eq(deferred, 7);
	refuse = defer = false;
	out.len = 0;
	feed("get k\r\n", &close);
	ASSERT_OUT("VALUE k 0 1\r\nv\r\nEND\r\n");
}

/*
 * The binary protocol (mc_binary.c): a connection whose first byte is 0x80 speaks it.
 * Its replies are checked against memcached's by tests/interop/binary.py; here, that
 * partial arrivals and writes completed later change none of them.
 */
TestSuite(mc_binary, .init = setup, .fini = teardown);

/* One binary request at p: its length. */
static size_t bin_req(char *p, uint8_t opcode, const char *key, const void *extras,
		      uint8_t extras_len, const char *value, uint64_t cas)
{
	size_t key_len = strlen(key), value_len = value ? strlen(value) : 0;
	struct xkv_mc_bin_hdr h = {
		.magic = XKV_MC_BIN_REQUEST,
		.opcode = opcode,
		.key_len = htons((uint16_t)key_len),
		.extras_len = extras_len,
		.body_len = htonl((uint32_t)(extras_len + key_len + value_len)),
		.opaque = htonl(0x01020304),
		.cas = xkv_be64(cas),
	};

	memcpy(p, &h, sizeof(h));
	if (extras_len)
		memcpy(p + sizeof(h), extras, extras_len);
	memcpy(p + sizeof(h) + extras_len, key, key_len);
	if (value_len)
		memcpy(p + sizeof(h) + extras_len + key_len, value, value_len);
	return sizeof(h) + extras_len + key_len + value_len;
}

/* The opcode and status of each reply in out, as "op:status " pairs, in hex. */
static void bin_statuses(char *text, size_t cap)
{
	size_t at = 0, n = 0;

	text[0] = '\0';
	while (at + sizeof(struct xkv_mc_bin_hdr) <= out.len) {
		struct xkv_mc_bin_hdr h;

		memcpy(&h, out.data + at, sizeof(h));
		cr_assert_eq(h.magic, XKV_MC_BIN_RESPONSE);
		cr_assert_eq(ntohl(h.opaque), 0x01020304, "the opaque comes back");
		n += (size_t)snprintf(text + n, cap - n, "%02x:%x ", h.opcode, ntohs(h.status));
		at += sizeof(h) + ntohl(h.body_len);
	}
	cr_assert_eq(at, out.len, "whole replies");
}

/* set, add taken, getk, incr made then added to, append, gat, touch, delete, getkq missed, noop */
static size_t bin_script(char *p)
{
	const uint8_t set_x[8] = {0, 0, 0, 7}, touch_x[4] = {0, 0, 1, 0};
	const uint8_t incr_x[20] = {[7] = 5, [15] = 10};
	size_t n = 0;

	n += bin_req(p + n, XKV_MC_BIN_SET, "k", set_x, 8, "value", 0);
	n += bin_req(p + n, XKV_MC_BIN_ADD, "k", set_x, 8, "other", 0);
	n += bin_req(p + n, XKV_MC_BIN_GETK, "k", NULL, 0, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_INCREMENT, "n", incr_x, 20, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_INCREMENTQ, "n", incr_x, 20, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_INCREMENT, "n", incr_x, 20, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_APPEND, "k", NULL, 0, "-tail", 0);
	n += bin_req(p + n, XKV_MC_BIN_GAT, "k", touch_x, 4, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_TOUCH, "none", touch_x, 4, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_DELETEQ, "k", NULL, 0, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_GETKQ, "k", NULL, 0, NULL, 0);
	n += bin_req(p + n, XKV_MC_BIN_NOOP, "", NULL, 0, NULL, 0);
	return n;
}

/* Byte by byte, in steps of 7 with every write deferred: the same bytes as at once. */
Test(mc_binary, partial_arrivals_and_deferred_writes_change_nothing)
{
	static const struct {
		size_t step;
		bool defer;
	} runs[] = {{SIZE_MAX / 2, false}, {1, false}, {7, true}, {1, true}};
	char req[1024], first[2048], statuses[256];
	size_t len = bin_script(req), first_len = 0;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		teardown();
		setup();
		defer = runs[i].defer;
		cr_assert(!drive(req, len, runs[i].step), "run %zu closed", i);
		if (i == 0) {
			bin_statuses(statuses, sizeof(statuses));
			/* the add taken: 2 (exists); incrq silent; touch missed: 1; deleteq, getkq silent */
			cr_assert_str_eq(statuses, "01:0 02:2 0c:0 05:0 05:0 0e:0 1d:0 1c:1 0a:0 ");
			cr_assert(out.len < sizeof(first));
			memcpy(first, out.data, out.len);
			first_len = out.len;
		} else {
			cr_assert(out.len == first_len && memcmp(out.data, first, first_len) == 0,
				  "run %zu (step %zu, defer %d) answered otherwise", i, runs[i].step,
				  runs[i].defer);
		}
		if (runs[i].defer)
			cr_assert_gt(deferred, 0);
	}
}

/* A write in progress holds back the requests after it; its reply comes first. */
Test(mc_binary, a_write_in_progress_holds_back_what_follows)
{
	const uint8_t set_x[8] = {0};
	char req[256], statuses[64];
	size_t set_len = bin_req(req, XKV_MC_BIN_SET, "a", set_x, 8, "x", 0), len = set_len;
	bool close;

	len += bin_req(req + len, XKV_MC_BIN_GET, "a", NULL, 0, NULL, 0);
	defer = true;
	cr_assert_eq(xkv_mc_session_feed(&session, req, len, &out, &close), set_len);
	cr_assert(xkv_mc_session_waiting(&session));
	cr_assert_eq(out.len, 0);
	complete(&session, &out);
	cr_assert_eq(xkv_mc_session_feed(&session, req + set_len, len - set_len, &out, &close),
		     len - set_len);
	bin_statuses(statuses, sizeof(statuses));
	cr_assert_str_eq(statuses, "01:0 00:0 ");
	cr_assert_eq(memcmp(out.data + out.len - 1, "x", 1), 0, "the GET sees the set");
}

/* A value over 1 MiB: Too large, its bytes skipped, the old value deleted, even later. */
Test(mc_binary, a_value_too_large_is_skipped_and_the_old_one_deleted)
{
	const uint8_t set_x[8] = {0};
	static char req[XKV_VALUE_MAX + 512], big[XKV_VALUE_MAX + 2];
	char statuses[64];
	size_t len = bin_req(req, XKV_MC_BIN_SET, "k", set_x, 8, "old", 0);

	memset(big, 'v', XKV_VALUE_MAX + 1);
	len += bin_req(req + len, XKV_MC_BIN_SET, "k", set_x, 8, big, 0);
	len += bin_req(req + len, XKV_MC_BIN_GET, "k", NULL, 0, NULL, 0);
	defer = true;
	cr_assert(!drive(req, len, 4000));
	bin_statuses(statuses, sizeof(statuses));
	cr_assert_str_eq(statuses, "01:0 01:3 00:1 ");
	cr_assert_eq(deferred, 2, "the set, then the delete");
}

/* The first byte picks the dialect for good: text after binary is no request. */
Test(mc_binary, the_first_byte_picks_the_dialect)
{
	const char *text = "get a_key_as_long_as_a_header\r\n";
	char req[64];
	size_t len = bin_req(req, XKV_MC_BIN_NOOP, "", NULL, 0, NULL, 0);
	bool close;

	cr_assert_eq(xkv_mc_session_feed(&session, req, len, &out, &close), len);
	cr_assert_eq(out.len, sizeof(struct xkv_mc_bin_hdr), "the NOOP answered");
	cr_assert_eq(feed(text, &close), 0);
	cr_assert(close, "a byte that starts no binary request closes");
	cr_assert_eq(out.len, sizeof(struct xkv_mc_bin_hdr), "and nothing is said");

	xkv_mc_session_free(&session);
	xkv_mc_session_init(&session, &backend);
	out.len = 0;
	feed("mn\r\n", &close);
	ASSERT_OUT("MN\r\n");
}

/* Lengths that lie and keys too long close the connection after their error. */
Test(mc_binary, requests_memcached_cannot_read_on_from_close)
{
	char req[512], statuses[64], key[252];
	size_t len = bin_req(req, XKV_MC_BIN_GET, "key", NULL, 0, NULL, 0);
	struct xkv_mc_bin_hdr h;
	bool close;

	memcpy(&h, req, sizeof(h));
	h.body_len = htonl(2); /* the key runs past the body */
	memcpy(req, &h, sizeof(h));
	cr_assert(drive(req, len, 5));
	bin_statuses(statuses, sizeof(statuses));
	cr_assert_str_eq(statuses, "00:81 ");

	teardown();
	setup();
	memset(key, 'k', 251);
	key[251] = '\0';
	len = bin_req(req, XKV_MC_BIN_GET, key, NULL, 0, NULL, 0);
	cr_assert_eq(xkv_mc_session_feed(&session, req, len, &out, &close), len);
	cr_assert(close);
	bin_statuses(statuses, sizeof(statuses));
	cr_assert_str_eq(statuses, "00:4 ");
}
