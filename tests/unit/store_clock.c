// SPDX-License-Identifier: MIT
#include <stdatomic.h>

#include "store/store.h"
#include "store_clock.h"

static _Atomic int64_t shift;

uint32_t __real_xkv_store_now(const struct xkv_store *s);
uint32_t __wrap_xkv_store_now(const struct xkv_store *s);

uint32_t __wrap_xkv_store_now(const struct xkv_store *s)
{
	return (uint32_t)(__real_xkv_store_now(s) + atomic_load(&shift));
}

void xkv_store_clock_shift(struct xkv_store *s, int32_t seconds)
{
	(void)s;
	atomic_fetch_add(&shift, seconds);
}
