/* SPDX-License-Identifier: MIT */
/*
 * The key hash, the key-to-partition function and the size classes: one
 * definition for the XDP program and userspace, so that steering and the store
 * always agree on who owns a key.
 *
 * A 64-bit hash is cut into independent bit ranges:
 *   bits 56..63  partition (XKV_PARTITION_BITS of them)
 *   bits 32..47  tag kept in the store's bucket slots
 *   bits  0..31  bucket index within the partition
 */
#ifndef XKV_HASH_H
#define XKV_HASH_H

#include <linux/types.h>
#include "proto.h"

#define XKV_PARTITION_BITS 8
#define XKV_PARTITIONS	   (1u << XKV_PARTITION_BITS)

/* class i holds sizes in [2^(i-1), 2^i); class 0 holds 0 */
#define XKV_SIZE_CLASSES 22 /* 0 .. class of XKV_VALUE_MAX (2^20) = 21 */

#define XKV_FNV_OFFSET 0xcbf29ce484222325ULL
#define XKV_FNV_PRIME  0x100000001b3ULL

/* FNV-1a consumes one byte at a time, which a BPF loop over packet bytes can do */
static __always_inline __u64 xkv_hash_byte(__u64 h, __u8 byte)
{
	return (h ^ byte) * XKV_FNV_PRIME;
}

/* FNV-1a alone mixes its high bits poorly; murmur3's finaliser spreads every bit */
static __always_inline __u64 xkv_hash_finish(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static __always_inline __u64 xkv_hash(const void *key, __u32 len)
{
	const __u8 *p = (const __u8 *)key;
	__u64 h = XKV_FNV_OFFSET;

	for (__u32 i = 0; i < XKV_KEY_MAX; i++) {
		if (i >= len)
			break;
		h = xkv_hash_byte(h, p[i]);
	}
	return xkv_hash_finish(h);
}

static __always_inline __u32 xkv_partition(__u64 hash)
{
	return (__u32)(hash >> (64 - XKV_PARTITION_BITS));
}

static __always_inline __u16 xkv_tag(__u64 hash)
{
	return (__u16)(hash >> 32);
}

/* Static owner of a partition among n workers (EREW writes, CREW writes). */
static __always_inline __u32 xkv_partition_owner(__u32 partition, __u32 nworkers)
{
	return nworkers ? partition % nworkers : 0;
}

/* Size class of a value length: floor(log2(size)) + 1, written without clz for BPF. */
static __always_inline __u32 xkv_size_class(__u32 size)
{
	__u32 c = 0;

	if (size >> 16) {
		size >>= 16;
		c += 16;
	}
	if (size >> 8) {
		size >>= 8;
		c += 8;
	}
	if (size >> 4) {
		size >>= 4;
		c += 4;
	}
	if (size >> 2) {
		size >>= 2;
		c += 2;
	}
	if (size >> 1) {
		size >>= 1;
		c += 1;
	}
	return c + size;
}

#endif /* XKV_HASH_H */
