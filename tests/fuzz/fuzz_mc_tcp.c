// SPDX-License-Identifier: MIT
/*
 * memcached over TCP (proto/mc_session.h), on any bytes: the stream a connection
 * receives, text or binary as its first byte decides, served from a real store.
 * Input: byte 0 is how many bytes each receive brings (0: all at once), the rest is
 * the stream. Besides not crashing:
 * - the session never consumes more than it was given, reads nothing past it, and
 *   nothing it consumed again (each call's bytes are a fresh allocation, freed after);
 * - the stream fed in pieces of that size gets exactly the replies, and closes or
 *   not exactly, as the stream fed whole: how TCP cuts a stream changes nothing (a
 *   run the store's clock crosses a second in is not compared: TTLs could differ).
 * Each run has a store of its own, made afresh so that a crash replays alone and every
 * item is freed (LeakSanitizer); freeing one waits out an RCU grace period, so this
 * harness runs some 50 inputs a second.
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>

#include "engine/mc_exec.h"
#include "fuzz.h"
#include "proto/mc_session.h"
#include "store/store.h"

static uint8_t scratch[XKV_VALUE_MAX];
static uint64_t reached_text, reached_binary, reached_close, reached_error, reached_value,
	reached_partial;

static int read_store(void *ctx, const void *key, uint16_t key_len, uint64_t hash, void *buf,
		      size_t cap, uint32_t *value_len, struct xkv_item_meta *meta)
{
	return xkv_store_get_meta(ctx, key, key_len, hash, buf, cap, value_len, meta);
}

static int peek_store(void *ctx, const void *key, uint16_t key_len, uint64_t hash,
		      struct xkv_item_meta *meta)
{
	uint32_t value_len;

	return xkv_store_peek_meta(ctx, key, key_len, hash, &value_len, meta);
}

static int write_store(void *ctx, const struct xkv_msg *w, uint64_t hash, struct xkv_mc_result *r)
{
	xkv_mc_apply(ctx, w, hash, scratch, r);
	return 0;
}

static int flush_store(void *ctx, int32_t delay)
{
	if (delay <= 0)
		xkv_store_flush(ctx);
	return 0;
}

static uint32_t store_now(void *ctx)
{
	return xkv_store_now(ctx);
}

static struct xkv_store *store_new(void)
{
	const struct xkv_store_config cfg = {
		.memory_limit = 8 << 20,
		.mode = XKV_MODE_CACHE,
		.bucket_bits = 4,
		.overflow_buckets = 8,
	};
	struct xkv_store *store = xkv_store_create(&cfg);

	FUZZ_CHECK(store);
	return store;
}

/*
 * in[0..len) received step bytes at a time (0: at once) by a session on a fresh store;
 * its replies into *out. Returns whether it closed.
 */
static bool serve(const uint8_t *in, size_t len, size_t step, struct xkv_mc_buf *out)
{
	struct xkv_store *store = store_new();
	const struct xkv_mc_backend backend = {
		.read = read_store,
		.peek = peek_store,
		.write = write_store,
		.flush = flush_store,
		.now = store_now,
		.ctx = store,
	};
	struct xkv_mc_session s;
	size_t have = 0, used = 0, n;
	bool close = false;
	char *buf;

	xkv_mc_session_init(&s, &backend);
	while (!close && used < len) {
		have += step && len - have > step ? step : len - have;
		/*
		 * exactly the bytes not yet consumed, freed after the call: a read past
		 * them, or of them once consumed, is one ASan reports
		 */
		buf = malloc(have - used);
		FUZZ_CHECK(buf);
		memcpy(buf, in + used, have - used);
		n = xkv_mc_session_feed(&s, buf, have - used, out, &close);
		free(buf);
		FUZZ_CHECK(n <= have - used);
		used += n;
		if (!n && have == len)
			break; /* an unfinished command: the stream ended within it */
		reached_partial += !n;
	}
	reached_binary += s.negotiated && s.binary;
	reached_text += s.negotiated && !s.binary;
	xkv_mc_session_free(&s);
	xkv_store_destroy(store);
	return close;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xkv_mc_buf whole = {0}, pieces = {0};
	bool closed_whole, closed_pieces;
	uint32_t before;

	if (size < 2)
		return 0;
	xkv_store_thread_online();
	before = xkv_store_now(NULL);
	closed_whole = serve(data + 1, size - 1, 0, &whole);
	closed_pieces = serve(data + 1, size - 1, data[0], &pieces);
	if (xkv_store_now(NULL) == before) {
		FUZZ_CHECK(closed_whole == closed_pieces);
		FUZZ_CHECK(whole.len == pieces.len &&
			   (!whole.len || !memcmp(whole.data, pieces.data, whole.len)));
	}
	reached_close += closed_whole;
	reached_error += whole.len && memmem(whole.data, whole.len, "ERROR", 5);
	reached_value += whole.len && (memmem(whole.data, whole.len, "VALUE ", 6) ||
				       ((uint8_t *)whole.data)[0] == 0x81);
	xkv_mc_buf_free(&whole);
	xkv_mc_buf_free(&pieces);
	xkv_store_thread_offline();
	return 0;
}

int fuzz_replay_done(void)
{
	return fuzz_reached("the text protocol", reached_text) |
	       fuzz_reached("the binary protocol", reached_binary) |
	       fuzz_reached("a command cut by a receive", reached_partial) |
	       fuzz_reached("a close (quit)", reached_close) |
	       fuzz_reached("an error reply", reached_error) |
	       fuzz_reached("a value or a binary response", reached_value);
}
