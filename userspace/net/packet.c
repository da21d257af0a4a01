// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <string.h>

#include "net/packet.h"
#include "xkv/addr.h"

#define VLAN_HLEN     4
#define IPV6_EXT_MAX  4 /* as the XDP program */
#define REPLY_TTL     64

static bool ipv6_ext(uint8_t nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS;
}

/* Returns the offset of the UDP header, or -EINVAL. */
static int parse_ipv4(const uint8_t *p, uint32_t len, uint32_t off, struct xkv_route *r)
{
	struct iphdr ip;
	uint32_t hdr_len;

	if (off + sizeof(ip) > len)
		return -EINVAL;
	memcpy(&ip, p + off, sizeof(ip));
	hdr_len = ip.ihl * 4u;
	if (ip.version != 4 || hdr_len < sizeof(ip) || ip.protocol != IPPROTO_UDP ||
	    (ntohs(ip.frag_off) & 0x3fff) || off + ntohs(ip.tot_len) > len ||
	    ntohs(ip.tot_len) < hdr_len + sizeof(struct udphdr))
		return -EINVAL;
	r->ip_version = 4;
	memcpy(r->ip_src, &ip.saddr, 4);
	memcpy(r->ip_dst, &ip.daddr, 4);
	return (int)(off + hdr_len);
}

static int parse_ipv6(const uint8_t *p, uint32_t len, uint32_t off, struct xkv_route *r)
{
	struct ipv6hdr ip;
	uint8_t nexthdr;
	uint32_t end;

	if (off + sizeof(ip) > len)
		return -EINVAL;
	memcpy(&ip, p + off, sizeof(ip));
	end = off + sizeof(ip) + ntohs(ip.payload_len);
	if (ip.version != 6 || end > len)
		return -EINVAL;
	r->ip_version = 6;
	memcpy(r->ip_src, &ip.saddr, 16);
	memcpy(r->ip_dst, &ip.daddr, 16);
	nexthdr = ip.nexthdr;
	off += sizeof(ip);
	for (int i = 0; i < IPV6_EXT_MAX && ipv6_ext(nexthdr); i++) {
		if (off + 2 > end)
			return -EINVAL;
		nexthdr = p[off];
		off += (p[off + 1] + 1u) * 8;
	}
	return nexthdr == IPPROTO_UDP && off + sizeof(struct udphdr) <= end ? (int)off : -EINVAL;
}

int xkv_frame_parse(const uint8_t *frame, uint32_t len, struct xkv_route *r,
		    uint32_t *payload_off, uint32_t *payload_len)
{
	uint32_t off = ETH_HLEN;
	struct udphdr udp;
	uint16_t proto;
	int udp_off;

	if (len < ETH_HLEN)
		return -EINVAL;
	memcpy(r->eth_dst, frame, 6);
	memcpy(r->eth_src, frame + 6, 6);
	memcpy(&proto, frame + 12, 2);
	r->vlan_proto = 0;
	if (proto == htons(ETH_P_8021Q) || proto == htons(ETH_P_8021AD)) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return -EINVAL;
		r->vlan_proto = proto;
		memcpy(&r->vlan_tci, frame + ETH_HLEN, 2);
		memcpy(&proto, frame + ETH_HLEN + 2, 2);
		off += VLAN_HLEN;
	}
	if (proto == htons(ETH_P_IP))
		udp_off = parse_ipv4(frame, len, off, r);
	else if (proto == htons(ETH_P_IPV6))
		udp_off = parse_ipv6(frame, len, off, r);
	else
		return -EINVAL;
	if (udp_off < 0 || (uint32_t)udp_off + sizeof(udp) > len)
		return -EINVAL;
	memcpy(&udp, frame + udp_off, sizeof(udp));
	if (ntohs(udp.len) < sizeof(udp) || (uint32_t)udp_off + ntohs(udp.len) > len)
		return -EINVAL;
	r->port_src = udp.source;
	r->port_dst = udp.dest;
	*payload_off = (uint32_t)udp_off + sizeof(udp);
	*payload_len = ntohs(udp.len) - sizeof(udp);
	return 0;
}

void xkv_route_peer(const struct xkv_route *r, struct xkv_peer *peer)
{
	memset(peer, 0, sizeof(*peer));
	if (r->ip_version == 4) {
		peer->addr[10] = 0xff;
		peer->addr[11] = 0xff;
		memcpy(peer->addr + 12, r->ip_src, 4);
	} else {
		memcpy(peer->addr, r->ip_src, 16);
	}
	peer->port = r->port_src;
}

uint32_t xkv_reply_hdr_len(const struct xkv_route *r)
{
	return ETH_HLEN + (r->vlan_proto ? VLAN_HLEN : 0) +
	       (r->ip_version == 4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) +
	       sizeof(struct udphdr);
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Whether a reply along r would go to, or come from, a multicast or broadcast address. */
static bool route_has_group(const struct xkv_route *r)
{
	if (xkv_mac_is_group(r->eth_src) || xkv_mac_is_group(r->eth_dst))
		return true;
	if (r->ip_version == 4)
		return xkv_ipv4_is_group(r->ip_src) || xkv_ipv4_is_group(r->ip_dst);
	return xkv_ipv6_is_group(r->ip_src) || xkv_ipv6_is_group(r->ip_dst);
}

uint32_t xkv_reply_write_hdr(uint8_t *frame, const struct xkv_route *r, uint32_t payload_len)
{
	uint32_t off = ETH_HLEN, udp_len = sizeof(struct udphdr) + payload_len;
	uint16_t proto = htons(r->ip_version == 4 ? ETH_P_IP : ETH_P_IPV6);
	struct udphdr udp = {
		.source = r->port_dst,
		.dest = r->port_src,
		.len = htons((uint16_t)udp_len),
	};

	/* XDP lets no such request through; this is the last line should one come */
	if (route_has_group(r))
		return 0;
	memcpy(frame, r->eth_src, 6);
	memcpy(frame + 6, r->eth_dst, 6);
	if (r->vlan_proto) {
		memcpy(frame + 12, &r->vlan_proto, 2);
		memcpy(frame + ETH_HLEN, &r->vlan_tci, 2);
		off += VLAN_HLEN;
	}
	memcpy(frame + off - 2, &proto, 2);

	if (r->ip_version == 4) {
		struct iphdr ip = {
			.version = 4,
			.ihl = 5,
			.tot_len = htons((uint16_t)(sizeof(ip) + udp_len)),
			.frag_off = htons(0x4000), /* don't fragment */
			.ttl = REPLY_TTL,
			.protocol = IPPROTO_UDP,
		};

		memcpy(&ip.saddr, r->ip_dst, 4);
		memcpy(&ip.daddr, r->ip_src, 4);
		ip.check = csum_fold(csum_add(0, (const uint8_t *)&ip, sizeof(ip)));
		memcpy(frame + off, &ip, sizeof(ip));
		off += sizeof(ip);
		/* UDP over IPv4 may go without a checksum: the payload is not summed twice */
		memcpy(frame + off, &udp, sizeof(udp));
	} else {
		struct ipv6hdr ip = {
			.version = 6,
			.payload_len = htons((uint16_t)udp_len),
			.nexthdr = IPPROTO_UDP,
			.hop_limit = REPLY_TTL,
		};
		uint32_t sum;

		memcpy(&ip.saddr, r->ip_dst, 16);
		memcpy(&ip.daddr, r->ip_src, 16);
		memcpy(frame + off, &ip, sizeof(ip));
		off += sizeof(ip);
		memcpy(frame + off, &udp, sizeof(udp));
		/* pseudo-header: addresses, length, next header; then UDP header and payload */
		sum = csum_add(0, (const uint8_t *)&ip.saddr, 32);
		sum += udp_len + IPPROTO_UDP;
		sum = csum_add(sum, frame + off, udp_len);
		udp.check = csum_fold(sum);
		if (!udp.check)
			udp.check = 0xffff; /* 0 means "none", which IPv6 forbids */
		memcpy(frame + off, &udp, sizeof(udp));
	}
	return off + udp_len;
}

void xkv_route_onward(const struct xkv_route *route, uint32_t addr, uint16_t port,
		      struct xkv_route *out)
{
	*out = *route;
	/* a reply goes to the route's source from its destination: swap them to match */
	memcpy(out->ip_src, &addr, 4);
	memcpy(out->ip_dst, route->ip_src, 4);
	out->port_src = port;
	out->port_dst = route->port_src;
}
