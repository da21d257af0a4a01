/* SPDX-License-Identifier: MIT */
/*
 * Keys and values of the maps the XDP program shares with userspace, defined once
 * for both sides. bpf/maps.bpf.h declares the maps; userspace/bpfctl pins them
 * under /sys/fs/bpf/xkv/<iface>/<map name>. docs/LOADER.md shows how to read each
 * one with bpftool.
 */
#ifndef XKV_MAPS_H
#define XKV_MAPS_H

#include <linux/types.h>
#include "proto.h"

#define XKV_WORKERS_MAX 64
#define XKV_QUEUES_MAX	64
/* one socket per (rx queue, worker): index rx_queue * workers + worker */
#define XKV_XSKS_MAX	(XKV_QUEUES_MAX * XKV_WORKERS_MAX)
#define XKV_ALLOW_MAX	1024 /* client networks in the allowlist */
#define XKV_LOCAL_MAX	64   /* the interface's own addresses, MAC and IP (xkv_local) */
#define XKV_LARGE_KEYS_MAX 65536 /* keys of values in pieces that minos steers by (xkv_large_keys) */
#define XKV_LARGE_FILTER_CELLS 65536 /* counts of those keys by hash, in front (xkv_large_filter) */

/*
 * Why the XDP program drops a packet, beyond the protocol reasons of proto.h,
 * numbered on from XKV_R_PROTO_END. X(enum suffix, name shown by the tools).
 */
#define XKV_PKT_REASONS(X)                                                                         \
	X(MULTICAST_SOURCE, "multicast_source") /* source MAC or IP multicast or broadcast */     \
	X(BAD_DEST_MAC, "bad_dest_mac")       /* destination MAC not the interface's */            \
	X(NOT_FOR_US, "not_for_us")           /* destination IP not the interface's (xkv_local) */ \
	X(NOT_ALLOWED, "not_allowed")         /* source not in the allowlist */                    \
	X(IP_FRAGMENT, "ip_fragment")         /* first fragment of a datagram to the port */       \
	X(BAD_IP_LEN, "bad_ip_len")           /* IP length beyond the packet or below headers */   \
	X(BAD_UDP_LEN, "bad_udp_len")         /* UDP length disagrees with the IP length */        \
	X(REPLY_TO_SERVER, "reply_to_server") /* a reply sent to the server port */                \
	X(BAD_CONFIG, "bad_config")           /* config map holds no usable worker count/policy */ \
	X(NO_SOCKET, "no_socket")             /* no AF_XDP socket in the chosen XSKMAP slot */     \
	X(EWT_BUSY, "ewt_busy")               /* the write's EWT slot stayed contended or full */  \
	X(FRAME_TOO_LARGE, "frame_too_large") /* over frame_max: no AF_XDP socket would take it */

#define XKV_REASON_ENUM(name, str) XKV_R_##name,
enum xkv_pkt_reason {
	XKV_R_PKT_START = XKV_R_PROTO_END - 1, /* so that the first one is XKV_R_PROTO_END */
	XKV_PKT_REASONS(XKV_REASON_ENUM) XKV_R_END, /* number of stats slots */
};
#undef XKV_REASON_ENUM

/* XKV_R_OK never counts a drop, so its stats slot counts packets passed to the stack */
#define XKV_STAT_PASSED XKV_R_OK

/* Steering policies, chosen in the config map at run time. X(enum suffix, name). */
#define XKV_POLICIES(X)                                                                            \
	X(EREW, "erew") /* every request to the partition's static owner */                       \
	X(CREW, "crew") /* writes to the static owner, reads to the less loaded of two */       \
	X(MINOS, "minos") /* small and large requests on disjoint workers (include/xkv/roles.h) */ \
	X(DCREW, "dcrew") /* crew, and writes balanced unless their partition is held (ewt.h) */ \
	X(XKV, "xkv")	  /* minos's sizes, and dcrew's EWT over the small workers' writes */

#define XKV_POLICY_ENUM(name, str) XKV_POLICY_##name,
enum xkv_policy {
	XKV_POLICIES(XKV_POLICY_ENUM) XKV_POLICY_END,
};
#undef XKV_POLICY_ENUM

/* Whether policy steers by minos's roles (xkv_roles), and whether writes claim the EWT (xkv_ewt). */
static __always_inline int xkv_policy_roles(__u32 policy)
{
	return policy == XKV_POLICY_MINOS || policy == XKV_POLICY_XKV;
}

static __always_inline int xkv_policy_ewt(__u32 policy)
{
	return policy == XKV_POLICY_DCREW || policy == XKV_POLICY_XKV;
}

/*
 * The cell of xkv_large_filter that counts a key hash: its low bits, which neither the
 * partition (the top bits) nor the store's tag (bits 32-47) use.
 */
static __always_inline __u32 xkv_large_cell(__u64 hash)
{
	return (__u32)hash & (XKV_LARGE_FILTER_CELLS - 1);
}

/* Who attached the program: the loader's attachment outlives servers; a server's is its own. */
enum xkv_owner {
	XKV_OWNER_LOADER = 0,
	XKV_OWNER_SERVER = 1,
};

/* The single entry of the config map; written by bpfctl, read by XDP per packet. */
struct xkv_config {
	__u16 port;    /* UDP port of xkv requests, host order; 0: not configured, pass all */
	__u8 policy;   /* enum xkv_policy */
	__u8 owner;    /* enum xkv_owner: who attached, and so who detaches; XDP ignores it */
	__u32 workers; /* 1..XKV_WORKERS_MAX worker threads per rx queue */
	__u16 memcached_port; /* UDP port of memcached requests (memcached.h), host order; 0: off */
	/* bytes of the largest frame, from its Ethernet header, the server's sockets take; 0: any */
	__u16 frame_max;
	/* 1: redirected requests go without their arrival stamp (include/xkv/latency.h) */
	__u8 no_arrival_stamp;
	__u8 pad[3];
};

_Static_assert(sizeof(struct xkv_config) == 16, "config layout is shared with BPF");

/* One worker's queue depth, alone on its cache line so workers don't false-share. */
struct xkv_qdepth {
	__u64 depth;  /* requests steered (XDP adds) minus requests completed (worker subtracts) */
	__u8 pad[56]; /* to 64 bytes */
};

_Static_assert(sizeof(struct xkv_qdepth) == 64, "one cache line per worker");

/*
 * Allowlist key: an LPM-trie key over IPv6 addresses; IPv4 networks are stored
 * IPv4-mapped (::ffff:a.b.c.d, prefix length + 96) so one trie serves both.
 */
struct xkv_allow_key {
	__u32 prefixlen; /* bits of addr that must match, 0..128 */
	__u8 addr[16];	 /* network byte order */
};

_Static_assert(sizeof(struct xkv_allow_key) == 20, "LPM key: prefix length + IPv6 address");

#define XKV_ADDR_CACHE 64 /* addresses each CPU remembers as answerable (xkv_addr_cache) */

/*
 * The addresses of a request that may be answered (from an allowed unicast source to
 * the interface's own MAC and IP), remembered by one CPU: valid while the generation of
 * the allowlist and the local addresses (xkv_addr_gen) is still the one read before
 * they were checked. IPs as an allowlist key's 16 bytes, the MAC as ETH_ALEN bytes then
 * zeros, each in 8-byte words.
 */
struct xkv_addr_cached {
	__u64 tag; /* that generation + 1: an entry never written (0) matches nothing */
	__u64 src[2];
	__u64 dst[2];
	__u64 mac_dst;
};

#define XKV_V4MAPPED_PREFIX 96 /* bits before the IPv4 address in ::ffff:a.b.c.d */

/* What an xkv_local entry is. */
enum xkv_local_kind {
	XKV_LOCAL_MAC = 1, /* addr: the 6 bytes of a MAC, then zeros */
	XKV_LOCAL_IP = 2,  /* addr: IPv6, or IPv4-mapped as in the allowlist */
};

/* The value of an IP entry of xkv_local (MAC entries are all unicast). */
enum xkv_local_use {
	XKV_LOCAL_UNICAST = 1,	 /* requests to it are served */
	XKV_LOCAL_BROADCAST = 2, /* a subnet's broadcast address: neither source nor destination */
};

#define XKV_LOCAL_MACS	 4 /* the interface's MACs, in xkv_local_l2 */
#define XKV_LOCAL_BCASTS 8 /* its IPv4 subnets' broadcast addresses, in xkv_local_l2 */
#define XKV_LOCAL_IPS	 8 /* its unicast IPs compared in place, when no more */

/*
 * What XDP compares in place rather than looks up (xkv_local_l2's one entry): every
 * request is checked against all, and a few compares cost less than a hash lookup
 * (xkv_local's cost a GET 25-29 ns of 106-135, bench-xdp). An interface with more
 * than XKV_LOCAL_IPS unicast IPs has nip XKV_LOCAL_IPS + 1: xkv_local is looked up.
 */
struct xkv_local_fast {
	__u32 nmac, nbcast;
	__u8 mac[XKV_LOCAL_MACS][8];	 /* ETH_ALEN bytes, then zeros */
	__u8 bcast[XKV_LOCAL_BCASTS][4]; /* network order */
	__u32 nip, pad;
	__u64 ip[XKV_LOCAL_IPS][2]; /* as xkv_local_key's addr: IPv4-mapped for IPv4 */
};

/* Key of xkv_local: one address of the interface that requests may be sent to. */
struct xkv_local_key {
	__u32 kind; /* enum xkv_local_kind */
	__u8 addr[16];
};

_Static_assert(sizeof(struct xkv_local_key) == 20, "local address key layout is shared with BPF");

#ifndef __bpf__
/* Name of a stats slot, for the tools: both reason lists, then "passed" for slot 0. */
static inline const char *xkv_reason_name(__u32 reason)
{
#define XKV_REASON_NAME(name, str) [XKV_R_##name] = str,
	static const char *const names[XKV_R_END] = {
		[XKV_STAT_PASSED] = "passed",
		XKV_PROTO_REASONS(XKV_REASON_NAME) XKV_PKT_REASONS(XKV_REASON_NAME)};
#undef XKV_REASON_NAME
	return reason < XKV_R_END ? names[reason] : "unknown";
}

static inline const char *xkv_policy_name(__u32 policy)
{
#define XKV_POLICY_NAME(name, str) [XKV_POLICY_##name] = str,
	static const char *const names[XKV_POLICY_END] = {XKV_POLICIES(XKV_POLICY_NAME)};
#undef XKV_POLICY_NAME
	return policy < XKV_POLICY_END ? names[policy] : "unknown";
}
#endif /* !__bpf__ */

#endif /* XKV_MAPS_H */
