// SPDX-License-Identifier: MIT
/*
 * The XDP server suite's client side made a slow receiver: every packet waits about
 * 40 us before it passes. With the veth's NAPI in a thread of its own, the kernel then
 * takes the server's replies off its TX ring slower than a worker writes them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define DELAY_NS 40000

SEC("xdp")
int slow_receiver(struct xdp_md *ctx __attribute__((unused)))
{
	__u64 until = bpf_ktime_get_ns() + DELAY_NS;

	/* bounded for the verifier; 4000 clock reads outlast the delay */
	for (int i = 0; i < 4000 && bpf_ktime_get_ns() < until; i++)
		;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
