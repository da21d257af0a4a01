// SPDX-License-Identifier: MIT
/*
 * xkv-bench's XDP program for its AF_XDP transport (tools/bench/afxdp.c), on the
 * client's interface: a UDP datagram from the server's address and port goes to the
 * AF_XDP socket of the bench thread whose port it is addressed to, if it came in on
 * the rx queue that socket is bound to (threads spread over --queues). Everything
 * else (ARP, other traffic, a reply to a port without a socket) passes to the kernel.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "parse.h"

/* Set by xkv-bench before loading. */
const volatile __u8 server_addr[16]; /* IPv4-mapped, as xkv_parse_udp() writes sources */
const volatile __be16 server_port;

/* Read by xkv-bench through the skeleton's mmapped .bss; any CPU may add: atomics. */
__u64 redirected;  /* replies handed to a bench socket */
__u64 wrong_queue; /* replies that came in on another queue: dropped (AF_XDP would lose them) */
__u64 no_socket;   /* replies for a port without a bench socket: passed */

/* The AF_XDP socket of each bench thread, by its UDP port: written by xkv-bench. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} bench_xsks SEC(".maps");

/* The rx queue each of those sockets is bound to, by the same port: written before it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} bench_queues SEC(".maps");

static __always_inline bool from_server(const struct xkv_udp_view *v)
{
	const __u8 *src = (const __u8 *)v->addr.src; /* the address's bytes, in order */

#pragma unroll
	for (int i = 0; i < 16; i++)
		if (src[i] != server_addr[i])
			return false;
	return v->udp->source == server_port;
}

SEC("xdp")
int bench_client(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct xkv_udp_view v;
	__u32 port, *queue;

	if (!xkv_parse_udp(data, end, &v) || v.fragment || v.ip_len_bad || !from_server(&v))
		return XDP_PASS;
	port = bpf_ntohs(v.udp->dest);
	if (!bpf_map_lookup_elem(&bench_xsks, &port)) {
		__sync_fetch_and_add(&no_socket, 1);
		return XDP_PASS;
	}
	queue = bpf_map_lookup_elem(&bench_queues, &port);
	if (!queue || ctx->rx_queue_index != *queue) {
		__sync_fetch_and_add(&wrong_queue, 1);
		return XDP_DROP;
	}
	__sync_fetch_and_add(&redirected, 1);
	return bpf_redirect_map(&bench_xsks, port, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
