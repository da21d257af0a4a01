// SPDX-License-Identifier: MIT
/*
 * dcrew (C-4): a partition's writer is whoever holds its EWT slot, which XDP gives
 * the worker a write is steered to when the slot is free. A worker that claims a
 * slot itself (memcached over TCP) takes a free one for itself.
 */
#include "engine/policy.h"
#include "engine/worker.h"
#include "engine/writes.h"

static uint32_t dcrew_writer(const struct xkv_worker *w, uint64_t hash)
{
	(void)hash;
	return w->id;
}

const struct xkv_policy_ops xkv_policy_dcrew = {
	.id = XKV_POLICY_DCREW,
	.writer = dcrew_writer,
	.foreign = xkv_write_refuse, /* never asked: the slot's holder writes */
};
