// SPDX-License-Identifier: MIT
/*
 * A controller that removes a key without Pegasus's migration phase (Sec. 6.5): linked
 * with -Wl,--wrap=dirctl_migrate, so that a key leaves the directory at once, its
 * writes never sent home first and its newest value left wherever it is, while its
 * home may hold an older value than one a client was answered. For run-dir-lincheck,
 * which must call the history not linearizable.
 */
#include "dirctl/internal.h"

int __wrap_dirctl_migrate(const struct xkv_dirctl *d, struct xkv_client *pool,
			  const struct xkv_dir_config *cfg, uint64_t hash, const void *key,
			  size_t key_len, int wait_ms);

int __wrap_dirctl_migrate(const struct xkv_dirctl *d, struct xkv_client *pool,
			  const struct xkv_dir_config *cfg, uint64_t hash, const void *key,
			  size_t key_len, int wait_ms)
{
	(void)d, (void)pool, (void)cfg, (void)hash, (void)key, (void)key_len, (void)wait_ms;
	return 0;
}
