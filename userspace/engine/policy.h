/* SPDX-License-Identifier: MIT */
/*
 * A steering policy as the workers follow it (Hector's point: a policy is a module
 * behind one interface). XDP steers by the policy's id (bpf/steer.h); a worker asks
 * its policy one thing, who writes a partition, and applies everything else the same
 * way under every policy (engine/writes.c). What differs is in the id's predicates,
 * shared with XDP (include/xkv/maps.h, include/xkv/ewt.h): whether writes claim EWT
 * slots, and which; whether minos's roles are followed.
 *
 * Adding a policy (docs/DESIGN.md, "Adding a policy"): one file in engine/policy/
 * defining its struct xkv_policy_ops, one line in engine/policy/policies.c.
 */
#ifndef XKV_ENGINE_POLICY_H
#define XKV_ENGINE_POLICY_H

#include <stdint.h>

#include <xkv/maps.h>

#include "proto/codec.h"
#include "proto/transport.h"

struct xkv_worker;

struct xkv_policy_ops {
	enum xkv_policy id;
	/*
	 * The worker the policy has write hash's partition, as w sees it now. Under the
	 * EWT a slot already held overrides it, and this is the candidate of a join:
	 * the worker that takes the slot if it is free.
	 */
	uint32_t (*writer)(const struct xkv_worker *w, uint64_t hash);
	/*
	 * A whole write m from `from` reached w, whose writer is another worker (never
	 * under the EWT, where the slot's holder is the writer): handed to writer, or
	 * refused and counted. Returns the status w replied with, -1 if another replies.
	 */
	int (*foreign)(struct xkv_worker *w, const struct xkv_origin *from, const struct xkv_msg *m,
		       uint64_t hash, uint32_t writer);
};

/* The registered policy of that id, or NULL (engine/policy/policies.c). */
const struct xkv_policy_ops *xkv_policy_ops(enum xkv_policy id);

#endif /* XKV_ENGINE_POLICY_H */
