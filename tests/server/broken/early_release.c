// SPDX-License-Identifier: MIT
/*
 * A broken server for the test that shows invariant 1's check can fail: a worker lets
 * each write's EWT hold go the moment it claims it, before the write is applied, so
 * XDP may give the partition to another worker while this one still writes it.
 * Linked into a checked server with -Wl,--wrap=xkv_holds_claim,--wrap=xkv_apply_write:
 * the production objects are unchanged, and every claim and write passes through here.
 */
#include <time.h>

#include "engine/execute.h"
#include "engine/holds.h"

/* long enough that a second writer, let in early, is still likely to meet this one */
#define WRITE_DAWDLE_NS 100000

bool __real_xkv_holds_claim(struct xkv_holds *h, uint32_t partition);
bool __wrap_xkv_holds_claim(struct xkv_holds *h, uint32_t partition);
enum xkv_status __real_xkv_apply_write(struct xkv_exec *x, const struct xkv_msg *req,
				       uint64_t hash);
enum xkv_status __wrap_xkv_apply_write(struct xkv_exec *x, const struct xkv_msg *req,
				       uint64_t hash);

bool __wrap_xkv_holds_claim(struct xkv_holds *h, uint32_t partition)
{
	if (!__real_xkv_holds_claim(h, partition))
		return false;
	xkv_holds_let_go(h, partition, 1);
	return true;
}

/* Asleep inside its write, its partition marked: on 2 cores the others run meanwhile. */
enum xkv_status __wrap_xkv_apply_write(struct xkv_exec *x, const struct xkv_msg *req,
				       uint64_t hash)
{
	nanosleep(&(struct timespec){.tv_nsec = WRITE_DAWDLE_NS}, NULL);
	return __real_xkv_apply_write(x, req, hash);
}
