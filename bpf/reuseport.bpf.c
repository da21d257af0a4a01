// SPDX-License-Identifier: MIT
/*
 * Steering for the io_uring backend: an SK_REUSEPORT program on the group of UDP
 * sockets the workers bind to the xkv port. It picks the worker's socket with the
 * same policy code as the XDP program (steer.h), so writes to a partition reach
 * only its owner (docs/DESIGN.md invariant 1) without XDP. Requests from sources outside
 * the allowlist (xkv_allow, as XDP's) and malformed ones are dropped and counted under the
 * same reasons.
 */
#include <stddef.h>
#include "maps.bpf.h"
#include "parse.h"
#include "steer.h"

/* The workers' sockets, by worker index: written by the server at start. */
struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, XKV_WORKERS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xkv_socks SEC(".maps");

static __always_inline int reuse_drop(__u32 reason)
{
	__u64 *count = bpf_map_lookup_elem(&xkv_stats, &reason);

	if (count)
		*count += 1; /* per-CPU slot: no other writer */
	return SK_DROP;
}

/* The source address as an allowlist key; md->data is past the IP header, so read relative. */
static __always_inline int reuse_source(struct sk_reuseport_md *md, struct xkv_allow_key *src)
{
	__be32 v4;
	__u64 lo;

	src->prefixlen = 128;
	if (md->eth_protocol == bpf_htons(ETH_P_IPV6))
		return bpf_skb_load_bytes_relative(md, offsetof(struct ipv6hdr, saddr), src->addr,
						   sizeof(src->addr), BPF_HDR_START_NET);
	if (bpf_skb_load_bytes_relative(md, offsetof(struct iphdr, saddr), &v4, sizeof(v4),
					BPF_HDR_START_NET))
		return -1;
	lo = xkv_v4mapped_lo(v4);
	__builtin_memset(src->addr, 0, 8);
	__builtin_memcpy(src->addr + 8, &lo, 8);
	return 0;
}

SEC("sk_reuseport")
int xkv_reuseport(struct sk_reuseport_md *md)
{
	__u8 key[XKV_KEY_MAX + 6] __attribute__((aligned(8))); /* whole words for the hash */
	const struct xkv_config *shared;
	struct xkv_allow_key src;
	struct xkv_config cfg;
	enum xkv_reason reason;
	struct xkv_hdr hdr;
	struct udphdr udp;
	__u32 zero = 0, worker, key_len, payload_len, draw;

	shared = bpf_map_lookup_elem(&xkv_config, &zero);
	if (!shared)
		return reuse_drop(XKV_R_BAD_CONFIG);
	cfg = *(volatile const struct xkv_config *)shared;
	if (cfg.workers < 1 || cfg.workers > XKV_WORKERS_MAX || cfg.policy >= XKV_POLICY_END)
		return reuse_drop(XKV_R_BAD_CONFIG);
	if (reuse_source(md, &src) || !bpf_map_lookup_elem(&xkv_allow, &src))
		return reuse_drop(XKV_R_NOT_ALLOWED);

	/* md->data is the UDP header; the kernel checked its length against the IP header */
	if (bpf_skb_load_bytes(md, 0, &udp, sizeof(udp)))
		return reuse_drop(XKV_R_BAD_UDP_LEN);
	payload_len = xkv_be16(udp.len) - sizeof(udp); /* below 8 wraps: bad_length */
	if (payload_len < sizeof(hdr) || bpf_skb_load_bytes(md, sizeof(udp), &hdr, sizeof(hdr)))
		return reuse_drop(XKV_R_TRUNCATED);
	reason = xkv_hdr_check(&hdr, payload_len);
	if (reason != XKV_R_OK)
		return reuse_drop(reason);
	if (hdr.op & XKV_OP_REPLY)
		return reuse_drop(XKV_R_REPLY_TO_SERVER);

	key_len = xkv_be16(hdr.key_len);
	barrier_var(key_len); /* the verifier must see the bound on this register */
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return reuse_drop(XKV_R_BAD_KEY_LEN);
	if (bpf_skb_load_bytes(md, sizeof(udp) + sizeof(hdr) + xkv_ext_len(&hdr), key, key_len))
		return reuse_drop(XKV_R_TRUNCATED);

	/* the server refuses minos, dcrew and xkv here: no EWT claims, no hand-offs */
	/* only crew's GETs take a second choice here: no draw for the rest */
	draw = hdr.op == XKV_OP_GET && cfg.policy != XKV_POLICY_EREW ? xkv_random() : 0;
	worker = xkv_choose_worker(&cfg, hdr.op, xkv_be32(hdr.value_len), xkv_hash(key, key_len),
				   draw, 0);
	if (worker >= cfg.workers)
		return reuse_drop(XKV_R_BAD_CONFIG);
	if (bpf_sk_select_reuseport(md, &xkv_socks, &worker, 0))
		return reuse_drop(XKV_R_NO_SOCKET);
	xkv_depth_add(worker);
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
