/* SPDX-License-Identifier: MIT */
/*
 * Minos's roles as a worker follows them (engine/roles_adopt.h has how they change hands):
 * adopted between requests, after the compaction windows opened under the old ones;
 * the size classes this worker serves; the large worker a GET for a large value goes
 * to. Nothing happens here under a policy without roles.
 */
#ifndef XKV_ENGINE_WORKER_ROLES_H
#define XKV_ENGINE_WORKER_ROLES_H

#include <stdbool.h>

struct xkv_worker;

/* Between requests: newer roles, if any, are adopted. */
void xkv_worker_roles_check(struct xkv_worker *w);

/* The executor follows the worker's roles (after they are adopted, or on waking). */
void xkv_worker_roles_applied(struct xkv_worker *w);

/* Whether the worker is one of the small workers of its roles. */
bool xkv_worker_is_small(const struct xkv_worker *w);

#endif /* XKV_ENGINE_WORKER_ROLES_H */
