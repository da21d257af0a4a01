// SPDX-License-Identifier: MIT
#include "fuzz.h"
#include "reasm_fuzz.h"

static struct xkv_reasm_stats totals;

static void count_dropped(void *ctx, const struct xkv_reasm_msg *msg)
{
	struct reasm_fuzz *f = ctx;

	FUZZ_CHECK(msg->pieces > 0);
	f->dropped++;
	if (f->ndrops < REASM_FUZZ_DROPS) {
		f->drop_peer[f->ndrops] = msg->peer;
		f->drop_id[f->ndrops++] = msg->head.request_id;
	}
}

void reasm_fuzz_open(struct reasm_fuzz *f, uint32_t max_messages, size_t memory_limit,
		     uint64_t timeout_ns)
{
	*f = (struct reasm_fuzz){
	    .cfg = {.memory_limit = memory_limit,
		    .max_messages = max_messages,
		    .timeout_ns = timeout_ns,
		    .dropped = count_dropped,
		    .ctx = f},
	};
	f->r = xkv_reasm_create(&f->cfg);
	FUZZ_CHECK(f->r);
}

struct xkv_reasm_stats reasm_fuzz_check(const struct reasm_fuzz *f)
{
	struct xkv_reasm_stats s;

	xkv_reasm_get_stats(f->r, &s);
	FUZZ_CHECK(s.bytes <= f->cfg.memory_limit);
	FUZZ_CHECK(s.in_flight <= f->cfg.max_messages);
	FUZZ_CHECK(f->dropped == s.timeouts + s.too_scattered + s.evicted);
	return s;
}

void reasm_fuzz_close(struct reasm_fuzz *f)
{
	struct xkv_reasm_stats s = reasm_fuzz_check(f);

	totals.completed += s.completed;
	totals.duplicates += s.duplicates;
	totals.timeouts += s.timeouts;
	totals.no_room += s.no_room;
	totals.mismatches += s.mismatches;
	totals.too_scattered += s.too_scattered;
	totals.evicted += s.evicted;
	totals.late += s.late;
	xkv_reasm_destroy(f->r);
}

const struct xkv_reasm_stats *reasm_fuzz_totals(void)
{
	return &totals;
}

int reasm_fuzz_reached(void)
{
	return fuzz_reached("a completed message", totals.completed) |
	       fuzz_reached("a duplicate piece", totals.duplicates) |
	       fuzz_reached("a timeout", totals.timeouts) |
	       fuzz_reached("no room", totals.no_room) |
	       fuzz_reached("a contradicting piece", totals.mismatches) |
	       fuzz_reached("a late piece", totals.late);
}

const struct xkv_peer *reasm_fuzz_peer(unsigned i)
{
	static const struct xkv_peer peers[REASM_FUZZ_PEERS] = {
	    {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1}, .port = 1000},
	    {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1}, .port = 1001},
	    {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 2}, .port = 1000},
	    {.addr = {[0] = 0xfe, [1] = 0x80, [15] = 1}, .port = 1000},
	};

	return &peers[i % REASM_FUZZ_PEERS];
}

int reasm_fuzz_status(uint32_t request_id)
{
	return (int)(request_id % XKV_S_END);
}
