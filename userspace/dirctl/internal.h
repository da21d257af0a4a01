/* SPDX-License-Identifier: MIT */
/* What the controller's files share, below dirctl.h. */
#ifndef XKV_DIRCTL_INTERNAL_H
#define XKV_DIRCTL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dirctl/dirctl.h"

/* state.c: the keys replicated, in a file (dirctl.h, xkv_dirctl.state) */
int dirctl_state_each(const char *path, int (*fn)(void *ctx, const uint8_t *key, size_t len),
		      void *ctx);
int dirctl_state_add(const char *path, const void *key, size_t len);
int dirctl_state_remove(const char *path, const void *key, size_t len);
int dirctl_state_clear(const char *path);

/*
 * servers.c: the controller asking a server as the directory would steer it.
 * dirctl_read: server id's value of key (malloc'ed into *value unless NULL; -ENOENT:
 * absent) and the version it vouches for; 0 or -ENOENT, else it did not answer as it
 * must. dirctl_write_home: value (or its absence: a DELETE) written to server home at
 * version ver, which home applies only over an older one.
 */
int dirctl_read(struct xkv_client *pool, uint32_t id, const void *key, size_t key_len,
		uint64_t hash, uint64_t *ver, void **value, uint32_t *value_len);
int dirctl_write_home(struct xkv_client *pool, uint32_t home, const void *key, size_t key_len,
		      uint64_t hash, uint64_t ver, const void *value, uint32_t value_len,
		      bool absent);

/*
 * servers.c: every live server told of key (Pegasus Sec. 6.5's notices: struct
 * xkv_dir_notice), with the pool and its id in it. Every one is told, whoever fails;
 * 0, or the first error.
 */
int dirctl_notify(const struct xkv_dirctl *d, struct xkv_client *pool,
		  const struct xkv_dir_config *cfg, const void *key, size_t key_len,
		  enum xkv_dir_key_state state);

/*
 * migrate.c: Sec. 6.5's migration phase for a key being removed: its writes home only,
 * then its newest value home. 0: the key may leave the directory; on failure its
 * writes go anywhere again.
 */
int dirctl_migrate(const struct xkv_dirctl *d, struct xkv_client *pool,
		   const struct xkv_dir_config *cfg, uint64_t hash, const void *key,
		   size_t key_len, int wait_ms);

/* maps.c: the configuration written back (the hold lifted or set). */
int dirctl_config_set(const struct xkv_dirctl *d, const struct xkv_dir_config *cfg);

#endif /* XKV_DIRCTL_INTERNAL_H */
