/* SPDX-License-Identifier: MIT */
/*
 * From the Ethernet frame to the UDP header: one 802.1Q/802.1ad tag, IPv4 with
 * options, IPv6 with a few extension headers. Lengths are recorded, not trusted:
 * xkv.bpf.c decides what a lie costs once it knows the datagram is for xkv.
 */
#ifndef XKV_PARSE_H
#define XKV_PARSE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "xkv/addr.h"
#include "xkv/hash.h" /* xkv_load64 */
#include "xkv/maps.h"

/*
 * x ^ any ^ any: the same value, but the verifier cannot see it and takes x as any
 * value; bound it again after. any is a register it knows nothing of either.
 */
#define xkv_opaque_to_verifier(x, any)                                                             \
	asm volatile("%0 ^= %1; %0 ^= %1" : "+r"(x) : "r"((__u64)(any)))

/* a linear XDP buffer is one page: no header ends further in (a bound for the verifier) */
#define XKV_KEY_OFF_MAX 4096
#define XKV_IPV6_EXT_MAX 4 /* extension headers walked before giving up (and passing) */

#define XKV_IP_MF     0x2000 /* IPv4: more fragments */
#define XKV_IP_OFFSET 0x1fff /* IPv4: fragment offset in 8-byte units */
#define XKV_IP6_MF    0x0001 /* IPv6 fragment header: more fragments */
#define XKV_IP6_OFF   0xfff8 /* IPv6 fragment header: offset, already in bytes */

struct xkv_vlan_hdr {
	__be16 tci;
	__be16 proto; /* the encapsulated EtherType */
};

struct xkv_ipv6_ext {
	__u8 nexthdr;
	__u8 len; /* in 8-byte units, not counting the first 8 */
};

struct xkv_ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset | flags */
	__be32 id;
};

/*
 * A datagram's addresses in 8-byte words, each loaded whole and kept in memory order so
 * that one compare checks 8 bytes: IPs as the 16 bytes of an allowlist key or of
 * xkv_local_key (IPv4-mapped for IPv4), MACs as ETH_ALEN bytes and then zeros.
 */
struct xkv_addresses {
	__u64 src[2];
	__u64 dst[2];
	__u64 mac_dst;
	__u64 mac_src;
	__u32 src_group; /* the source IP is multicast or broadcast */
};

/* A UDP datagram as its headers describe it. */
struct xkv_udp_view {
	struct udphdr *udp;	 /* wholly inside the packet */
	__u32 ip_payload_len;	 /* bytes after the IP header(s) by the IP length field */
	bool ip_len_bad;	 /* the IP length is beyond the packet or below the headers */
	bool fragment;		 /* first fragment of a fragmented datagram */
	struct xkv_addresses addr;
};

#define XKV_MAC_MASK 0xffffffffffffULL /* a MAC's ETH_ALEN bytes of a little-endian word */

/*
 * An IPv4 address, as loaded from the packet, as the second word of its IPv4-mapped
 * form ::ffff:a.b.c.d (the first is 0): bytes 00 00 ff ff a b c d, on a little-endian
 * CPU (include/xkv/hash.h refuses any other).
 */
static __always_inline __u64 xkv_v4mapped_lo(__u32 v4)
{
	return (__u64)v4 << 32 | 0xffff0000;
}

/* IPv4 header with options; false when it can't carry a UDP header we can read. */
static __always_inline bool xkv_parse_ipv4(void *pos, void *end, struct xkv_udp_view *v)
{
	struct iphdr *ip = pos;
	__u32 hdr_len, tot_len, frag;

	if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5)
		return false;
	hdr_len = ip->ihl * 4;
	frag = bpf_ntohs(ip->frag_off);
	/* later fragments have no UDP header: nothing tells whether they are xkv */
	if (ip->protocol != IPPROTO_UDP || (frag & XKV_IP_OFFSET))
		return false;
	v->udp = pos + hdr_len;
	if ((void *)(v->udp + 1) > end)
		return false;

	tot_len = bpf_ntohs(ip->tot_len);
	v->ip_len_bad = tot_len < hdr_len + sizeof(struct udphdr) || tot_len > end - pos;
	v->ip_payload_len = tot_len - hdr_len;
	v->fragment = frag & XKV_IP_MF;
	v->addr.src[0] = 0;
	v->addr.src[1] = xkv_v4mapped_lo(ip->saddr);
	v->addr.dst[0] = 0;
	v->addr.dst[1] = xkv_v4mapped_lo(ip->daddr);
	v->addr.src_group = xkv_ipv4_is_group((const __u8 *)&ip->saddr);
	return true;
}

/* IPv6 and up to XKV_IPV6_EXT_MAX hop-by-hop, routing, destination or fragment headers. */
static __always_inline bool xkv_parse_ipv6(void *pos, void *end, struct xkv_udp_view *v)
{
	struct ipv6hdr *ip6 = pos;
	__u32 ext_len = 0, payload_len;
	__u8 next;

	if ((void *)(ip6 + 1) > end || ip6->version != 6)
		return false;
	next = ip6->nexthdr;
	pos = ip6 + 1;
	v->fragment = false;
#pragma unroll
	for (int i = 0; i < XKV_IPV6_EXT_MAX; i++) {
		struct xkv_ipv6_ext *ext = pos;
		__u32 len;

		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS &&
		    next != IPPROTO_FRAGMENT)
			break;
		if ((void *)(ext + 1) > end)
			return false;
		if (next == IPPROTO_FRAGMENT) {
			struct xkv_ipv6_frag *fh = pos;

			if ((void *)(fh + 1) > end || (bpf_ntohs(fh->frag_off) & XKV_IP6_OFF))
				return false;
			v->fragment = true;
			len = sizeof(*fh);
		} else {
			len = (ext->len + 1) * 8;
		}
		next = ext->nexthdr;
		pos += len;
		ext_len += len;
	}
	if (next != IPPROTO_UDP)
		return false;
	v->udp = pos;
	if ((void *)(v->udp + 1) > end)
		return false;

	payload_len = bpf_ntohs(ip6->payload_len);
	v->ip_len_bad = payload_len < ext_len + sizeof(struct udphdr) ||
			payload_len > end - (void *)(ip6 + 1);
	v->ip_payload_len = payload_len - ext_len;
	v->addr.src[0] = xkv_load64(&ip6->saddr);
	v->addr.src[1] = xkv_load64((const __u8 *)&ip6->saddr + 8);
	v->addr.dst[0] = xkv_load64(&ip6->daddr);
	v->addr.dst[1] = xkv_load64((const __u8 *)&ip6->daddr + 8);
	v->addr.src_group = xkv_ipv6_is_group(ip6->saddr.in6_u.u6_addr8);
	return true;
}

/*
 * struct ethhdr is packed, so clang reads its fields a byte at a time: they are read
 * through data instead, in one load each.
 *
 * Where the network header starts, after Ethernet and one 802.1Q or 802.1ad tag, and
 * its EtherType in *proto; NULL when the frame ends first.
 */
static __always_inline void *xkv_parse_l2(void *data, void *end, __be16 *proto)
{
	void *pos = data + sizeof(struct ethhdr);

	if (pos > end)
		return NULL;
	*proto = *(const __be16 *)(data + offsetof(struct ethhdr, h_proto));
	if (*proto == bpf_htons(ETH_P_8021Q) || *proto == bpf_htons(ETH_P_8021AD)) {
		struct xkv_vlan_hdr *vlan = pos;

		if ((void *)(vlan + 1) > end)
			return NULL;
		*proto = vlan->proto;
		pos = vlan + 1;
	}
	return pos;
}

/* Fills v and returns true when the frame holds a readable UDP header. */
static __always_inline bool xkv_parse_udp(void *data, void *end, struct xkv_udp_view *v)
{
	__be16 proto;
	void *pos = xkv_parse_l2(data, end, &proto);

	if (!pos)
		return false;
	/* the header is 14 bytes: a word from either MAC's start ends within it */
	v->addr.mac_dst = xkv_load64(data + offsetof(struct ethhdr, h_dest)) & XKV_MAC_MASK;
	v->addr.mac_src = xkv_load64(data + offsetof(struct ethhdr, h_source)) & XKV_MAC_MASK;
	if (proto == bpf_htons(ETH_P_IP))
		return xkv_parse_ipv4(pos, end, v);
	if (proto == bpf_htons(ETH_P_IPV6))
		return xkv_parse_ipv6(pos, end, v);
	return false;
}

#endif /* XKV_PARSE_H */
