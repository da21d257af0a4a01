// SPDX-License-Identifier: MIT
/*
 * xkv, the default: minos's roles for size classes and dcrew's EWT for writes. A free
 * slot goes to a small worker that claims it, else to the partition's owner by the
 * roles, as XDP gives it (bpf/steer.h): large workers serve large values and are
 * nobody's writers of first resort.
 */
#include "engine/policy.h"
#include "engine/worker.h"
#include "engine/worker_roles.h"
#include "engine/writes.h"

static uint32_t xkv_writer(const struct xkv_worker *w, uint64_t hash)
{
	return xkv_worker_is_small(w) ? w->id : xkv_roles_owner(&w->roles, xkv_partition(hash));
}

const struct xkv_policy_ops xkv_policy_xkv = {
	.id = XKV_POLICY_XKV,
	.writer = xkv_writer,
	.foreign = xkv_write_refuse, /* never asked: the slot's holder writes */
};
