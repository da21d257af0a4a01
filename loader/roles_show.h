/* SPDX-License-Identifier: MIT */
/* `xkv-loader status` under minos: the roles the XDP program steers by now. */
#ifndef XKV_LOADER_ROLES_SHOW_H
#define XKV_LOADER_ROLES_SHOW_H

#include <stdio.h>
#include <xkv/roles.h>

#include "util/json.h"

/* The live roles pinned on ifname (the slot with the higher gen): 0, -ENODATA if none yet. */
int roles_read(const char *ifname, struct xkv_roles *r);

/* The threshold and each of workers' roles, a line each, indented under status. */
void roles_print_text(const struct xkv_roles *r, uint32_t workers, FILE *out);

/* The same as a "minos" member of the open status object. */
void roles_json(const struct xkv_roles *r, uint32_t workers, struct xkv_json *w);

#endif /* XKV_LOADER_ROLES_SHOW_H */
