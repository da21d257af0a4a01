/* SPDX-License-Identifier: MIT */
/*
 * A snapshot published by its one writer under a sequence count and read whole by
 * any thread, without a lock: the layout of the live counters' slots (include/xkv/
 * stats.h) and of what else a worker publishes (engine/hot.c).
 */
#ifndef XKV_SEQCOUNT_H
#define XKV_SEQCOUNT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes len bytes of src over the published slot dst, whose first 8 bytes are the
 * sequence count, and stamps it with now_ns (the second 8 bytes). One writer per slot.
 * Slots are 8-byte aligned and len a multiple of 8, as the structs of stats.h are.
 */
void xkv_counters_publish(void *dst, const void *src, size_t len, uint64_t now_ns);

/*
 * Copies the slot src (len bytes, as published above) into dst, consistent as of one
 * snapshot. Returns 0, or -EAGAIN when the writer kept changing it.
 */
int xkv_counters_read(void *dst, const void *src, size_t len);

#endif /* XKV_SEQCOUNT_H */
