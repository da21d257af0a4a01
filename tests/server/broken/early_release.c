// SPDX-License-Identifier: MIT
/*
 * A broken server for the test that shows invariant 1's check can fail: a worker lets
 * each write's EWT hold go the moment it claims it, before the write is applied, so
 * XDP may give the partition to another worker while this one still writes it.
 * Linked into a checked server with -Wl,--wrap=xkv_holds_claim: the production
 * objects are unchanged, and every claim passes through here.
 */
#include "engine/holds.h"

bool __real_xkv_holds_claim(struct xkv_holds *h, uint32_t partition);
bool __wrap_xkv_holds_claim(struct xkv_holds *h, uint32_t partition);

bool __wrap_xkv_holds_claim(struct xkv_holds *h, uint32_t partition)
{
	if (!__real_xkv_holds_claim(h, partition))
		return false;
	xkv_holds_let_go(h, partition, 1);
	return true;
}
