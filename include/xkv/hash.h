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

/*
 * The key hash is XXH64 with seed 0 (xxhash.com), byte for byte: it takes 8 bytes a
 * step, 32 once a key has 32, mixes well enough that every bit range below is
 * uniform, and a reference implementation (libxxhash) pins it in the tests.
 */
#define XKV_XXH_P1 0x9E3779B185EBCA87ULL
#define XKV_XXH_P2 0xC2B2AE3D27D4EB4FULL
#define XKV_XXH_P3 0x165667B19E3779F9ULL
#define XKV_XXH_P4 0x85EBCA77C2B2AE63ULL
#define XKV_XXH_P5 0x27D4EB2F165667C5ULL

static __always_inline __u64 xkv_rotl64(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Little-endian loads at any alignment: one load in BPF (the JIT allows it), memcpy here. */
#ifdef __bpf__
#define xkv_load64(p) (*(const __u64 *)(p))
#define xkv_load32(p) (*(const __u32 *)(p))
#else
/*
 * GCC's bounds warning cannot see the checks before these loads (xkv_crosses) once
 * it inlines them into a caller with a short key buffer: a false alarm, off here.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
static __always_inline __u64 xkv_load64(const void *p)
{
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static __always_inline __u32 xkv_load32(const void *p)
{
	__u32 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}
#pragma GCC diagnostic pop
#endif
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xkv_load64/32 read little-endian words only on a little-endian machine"
#endif

/*
 * Hides x from the optimiser, which would otherwise turn "p + n > end" in a loop into
 * arithmetic on end, which the BPF verifier refuses for packet ends.
 */
#ifdef __bpf__
#define xkv_opaque(x) asm volatile("" : "+r"(x))
#else
#define xkv_opaque(x) ((void)0)
#endif

/*
 * Whether n bytes from s would cross stop. BPF needs the "pointer + n > end" form
 * to learn the packet's bounds; in C a pointer past its object is undefined, so
 * userspace compares what is left instead.
 */
#ifdef __bpf__
#define xkv_crosses(s, n, stop) ((s) + (n) > (stop))
#else
#define xkv_crosses(s, n, stop) ((__u64)((stop) - (s)) < (n))
#endif

static __always_inline __u64 xkv_xxh_round(__u64 acc, __u64 input)
{
	return xkv_rotl64(acc + input * XKV_XXH_P2, 31) * XKV_XXH_P1;
}

static __always_inline __u64 xkv_xxh_merge(__u64 h, __u64 acc)
{
	return (h ^ xkv_xxh_round(0, acc)) * XKV_XXH_P1 + XKV_XXH_P4;
}

/*
 * The steps below take a key as it lies: *p moves on, and none reads at or past
 * stop (-1 instead). They are called a fixed number of times rather than looped:
 * code without back edges lets the BPF verifier walk each length's path once.
 */
static __always_inline int xkv_xxh_stripe(const __u8 **p, const __u8 *stop, __u64 v[4])
{
	const __u8 *s = *p;

	xkv_opaque(s);
	if (xkv_crosses(s, 32, stop))
		return -1;
	v[0] = xkv_xxh_round(v[0], xkv_load64(s));
	v[1] = xkv_xxh_round(v[1], xkv_load64(s + 8));
	v[2] = xkv_xxh_round(v[2], xkv_load64(s + 16));
	v[3] = xkv_xxh_round(v[3], xkv_load64(s + 24));
	*p = s + 32;
	return 0;
}

static __always_inline int xkv_xxh_word(const __u8 **p, const __u8 *stop, __u64 *h)
{
	const __u8 *s = *p;

	xkv_opaque(s);
	if (xkv_crosses(s, 8, stop))
		return -1;
	*h = xkv_rotl64(*h ^ xkv_xxh_round(0, xkv_load64(s)), 27) * XKV_XXH_P1 + XKV_XXH_P4;
	*p = s + 8;
	return 0;
}

static __always_inline int xkv_xxh_half(const __u8 **p, const __u8 *stop, __u64 *h)
{
	const __u8 *s = *p;

	xkv_opaque(s);
	if (xkv_crosses(s, 4, stop))
		return -1;
	*h = xkv_rotl64(*h ^ (__u64)xkv_load32(s) * XKV_XXH_P1, 23) * XKV_XXH_P2 + XKV_XXH_P3;
	*p = s + 4;
	return 0;
}

static __always_inline int xkv_xxh_byte(const __u8 **p, const __u8 *stop, __u64 *h)
{
	const __u8 *s = *p;

	xkv_opaque(s);
	if (xkv_crosses(s, 1, stop))
		return -1;
	*h = xkv_rotl64(*h ^ *s * XKV_XXH_P5, 11) * XKV_XXH_P1;
	*p = s + 1;
	return 0;
}

/*
 * The hash of key[0, len), len at most XKV_KEY_MAX, reading no byte at or past end:
 * 0 and *hash, or -1 if the key crosses end. In XDP, key points into the packet and
 * end is data_end, so the hash reads the key where it lies, with no copy; the
 * checks also give the verifier its bounds. Elsewhere end is key + len.
 */
static __always_inline int xkv_hash_within(const __u8 *key, __u32 len, const void *end,
					   __u64 *hash)
{
	const __u8 *p = key, *stop = (const __u8 *)end;
	__u32 rest = len & 31;
	__u64 h;

	_Static_assert(XKV_KEY_MAX < 8 * 32, "seven stripes at most");
	if (len >= 32) {
		__u64 v[4] = {XKV_XXH_P1 + XKV_XXH_P2, XKV_XXH_P2, 0, -XKV_XXH_P1};

		if (xkv_xxh_stripe(&p, stop, v) ||
		    (len >= 2 * 32 && xkv_xxh_stripe(&p, stop, v)) ||
		    (len >= 3 * 32 && xkv_xxh_stripe(&p, stop, v)) ||
		    (len >= 4 * 32 && xkv_xxh_stripe(&p, stop, v)) ||
		    (len >= 5 * 32 && xkv_xxh_stripe(&p, stop, v)) ||
		    (len >= 6 * 32 && xkv_xxh_stripe(&p, stop, v)) ||
		    (len >= 7 * 32 && xkv_xxh_stripe(&p, stop, v)))
			return -1;
		h = xkv_rotl64(v[0], 1) + xkv_rotl64(v[1], 7) + xkv_rotl64(v[2], 12) +
		    xkv_rotl64(v[3], 18);
		h = xkv_xxh_merge(h, v[0]);
		h = xkv_xxh_merge(h, v[1]);
		h = xkv_xxh_merge(h, v[2]);
		h = xkv_xxh_merge(h, v[3]);
	} else {
		h = XKV_XXH_P5;
	}
	h += len;
	/* the rest, under 32 bytes: words of 8, then 4, then single bytes */
	if ((rest >= 8 && xkv_xxh_word(&p, stop, &h)) ||
	    (rest >= 16 && xkv_xxh_word(&p, stop, &h)) ||
	    (rest >= 24 && xkv_xxh_word(&p, stop, &h)) ||
	    ((rest & 4) && xkv_xxh_half(&p, stop, &h)) ||
	    ((rest & 3) >= 1 && xkv_xxh_byte(&p, stop, &h)) ||
	    ((rest & 3) >= 2 && xkv_xxh_byte(&p, stop, &h)) ||
	    ((rest & 3) == 3 && xkv_xxh_byte(&p, stop, &h)))
		return -1;
	h ^= h >> 33;
	h *= XKV_XXH_P2;
	h ^= h >> 29;
	h *= XKV_XXH_P3;
	h ^= h >> 32;
	*hash = h;
	return 0;
}

static __always_inline __u64 xkv_hash(const void *key, __u32 len)
{
	__u64 h = 0;

	xkv_hash_within((const __u8 *)key, len, (const __u8 *)key + len, &h);
	return h;
}

static __always_inline __u32 xkv_partition(__u64 hash)
{
	return (__u32)(hash >> (64 - XKV_PARTITION_BITS));
}

static __always_inline __u16 xkv_tag(__u64 hash)
{
	return (__u16)(hash >> 32);
}

/*
 * Static owner of a partition among n workers (EREW writes, CREW writes): worker i owns
 * the i-th of n equal runs of partitions, floor(partition * n / XKV_PARTITIONS). A
 * multiply and a shift: partition % n, as it was, cost the XDP program a division,
 * 6 ns of an erew GET's 44 (bench-xdp). partition < XKV_PARTITIONS.
 */
static __always_inline __u32 xkv_partition_owner(__u32 partition, __u32 nworkers)
{
	return (partition * nworkers) >> XKV_PARTITION_BITS;
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
