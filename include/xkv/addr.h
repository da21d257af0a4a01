/* SPDX-License-Identifier: MIT */
/*
 * Group addresses: multicast and broadcast, MAC and IP. A reply to one would reach every
 * member of the group, and a reply from one would answer in its name; so XDP drops a
 * request that names one, and userspace never builds a reply that does. For BPF and
 * userspace alike; addresses in network byte order.
 */
#ifndef XKV_ADDR_H
#define XKV_ADDR_H

#include <linux/types.h>
#include "proto.h" /* __always_inline outside BPF */

/* The I/G bit: multicast, broadcast (ff:ff:ff:ff:ff:ff) included. */
static __always_inline int xkv_mac_is_group(const __u8 *mac)
{
	return mac[0] & 1;
}

/* 224.0.0.0/4, or the limited broadcast 255.255.255.255 (a.b.c.d as bytes). */
static __always_inline int xkv_ipv4_is_group(const __u8 *ip)
{
	return (ip[0] & 0xf0) == 0xe0 || (ip[0] & ip[1] & ip[2] & ip[3]) == 0xff;
}

/* ff00::/8; IPv6 has no broadcast. */
static __always_inline int xkv_ipv6_is_group(const __u8 *ip)
{
	return ip[0] == 0xff;
}

#endif /* XKV_ADDR_H */
