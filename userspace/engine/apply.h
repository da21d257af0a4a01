/* SPDX-License-Identifier: MIT */
/*
 * A write applied to the store by its partition's writer, whatever brought it: a
 * PUT or DELETE, an item another worker built, a memcached write. Here invariant 1
 * is checked in checked builds (no two workers inside one partition's write), and
 * under minos's roles the xkv_large_keys map follows what the write did. Nothing is
 * answered here.
 */
#ifndef XKV_ENGINE_APPLY_H
#define XKV_ENGINE_APPLY_H

#include <stdint.h>

#include "proto/codec.h"
#include "proto/mc_cmd.h"
#include "store/store.h"

struct xkv_worker;

/* A PUT or DELETE; returns its status. */
enum xkv_status xkv_apply_msg(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash);

/* An item another worker built for a PUT of value_len bytes; takes item. 0 or -errno. */
int xkv_apply_item(struct xkv_worker *w, struct xkv_item *item, uint64_t hash,
		   uint32_t value_len);

/* A memcached write; its result in *r. */
void xkv_apply_mc(struct xkv_worker *w, const struct xkv_msg *m, uint64_t hash,
		  struct xkv_mc_result *r);

#endif /* XKV_ENGINE_APPLY_H */
