// SPDX-License-Identifier: MIT
/*
 * erew and crew: each partition has a static owner, xkv_partition_owner (the i-th of
 * `workers` equal runs of partitions is worker i's), which alone writes it. They differ only in steering (crew lets any worker read); a write that
 * reaches another worker is a steering bug, refused.
 */
#include "engine/policy.h"
#include "engine/worker.h"
#include "engine/writes.h"

static uint32_t static_writer(const struct xkv_worker *w, uint64_t hash)
{
	return xkv_partition_owner(xkv_partition(hash), w->nworkers);
}

const struct xkv_policy_ops xkv_policy_erew = {
	.id = XKV_POLICY_EREW,
	.writer = static_writer,
	.foreign = xkv_write_refuse,
};

const struct xkv_policy_ops xkv_policy_crew = {
	.id = XKV_POLICY_CREW,
	.writer = static_writer,
	.foreign = xkv_write_refuse,
};
