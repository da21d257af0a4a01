// SPDX-License-Identifier: MIT
/* The smallest XDP program: the benchmark's baseline for the cost of BPF_PROG_RUN itself. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
