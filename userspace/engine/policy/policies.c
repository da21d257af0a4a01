// SPDX-License-Identifier: MIT
/* The policies a worker can follow: one line each (engine/policy.h). */
#include "engine/policy.h"

extern const struct xkv_policy_ops xkv_policy_erew, xkv_policy_crew, xkv_policy_minos,
	xkv_policy_dcrew, xkv_policy_xkv;

static const struct xkv_policy_ops *const policies[XKV_POLICY_END] = {
	[XKV_POLICY_EREW] = &xkv_policy_erew,
	[XKV_POLICY_CREW] = &xkv_policy_crew,
	[XKV_POLICY_MINOS] = &xkv_policy_minos,
	[XKV_POLICY_DCREW] = &xkv_policy_dcrew,
	[XKV_POLICY_XKV] = &xkv_policy_xkv,
};

const struct xkv_policy_ops *xkv_policy_ops(enum xkv_policy id)
{
	return (unsigned)id < XKV_POLICY_END ? policies[id] : NULL;
}
