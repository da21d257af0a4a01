// SPDX-License-Identifier: MIT
/*
 * Nanoseconds per packet of the xkv XDP program under BPF_PROG_RUN with repeat,
 * for a small GET, a small PUT and a UDP packet that is not xkv, each next to a
 * trivial XDP_PASS program measured in the same run on the same packet. The
 * ratio is the figure to compare across machines; the absolute time is not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xdp_pass.skel.h"
#include "fixture.h"
#include "packet.h"

#define REPEAT	1000000 /* packets per BPF_PROG_RUN call */
#define ROUNDS	7	/* median of these */
#define WORKERS 4

struct bench_case {
	const char *name;
	struct pkt_spec pkt;
	__u32 verdict;
};

static const struct bench_case cases[] = {
	{"GET, 16-byte key", {.key = "user:00000000042"}, XDP_REDIRECT},
	{"PUT, 16-byte key, 64-byte value",
	 {.key = "user:00000000042", .op = XKV_OP_PUT, .value_len = 64, .frag_len = 64},
	 XDP_REDIRECT},
	{"UDP to another port", {.dport = 53}, XDP_PASS},
};

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Median ns per packet over ROUNDS runs; -errno on failure or on an unexpected verdict. */
static long median_ns(int prog_fd, const __u8 *pkt, __u32 len, __u32 verdict)
{
	__u32 ns[ROUNDS], got;
	int err;

	for (int r = 0; r < ROUNDS; r++) {
		err = xdp_run(prog_fd, pkt, len, REPEAT, &got, &ns[r]);
		if (err)
			return err;
		if (got != verdict) {
			fprintf(stderr, "bench-xdp: verdict %u, expected %u\n", got, verdict);
			return -EINVAL;
		}
	}
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_u32);
	return ns[ROUNDS / 2];
}

int main(void)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = WORKERS};
	struct xdp_pass_bpf *baseline;
	struct pkt_layout layout;
	__u8 pkt[PKT_SIZE_MAX];
	struct fixture f;
	int err, ret = 1;

	err = fixture_open(&f, &cfg, WORKERS);
	if (err) {
		fprintf(stderr, "bench-xdp: load the xkv program: %s\n", strerror(-err));
		goto out_close_fixture;
	}
	baseline = xdp_pass_bpf__open_and_load();
	if (!baseline) {
		fprintf(stderr, "bench-xdp: load the XDP_PASS program: %s\n", strerror(errno));
		goto out_close_fixture;
	}
	printf("BPF_PROG_RUN, median of %d x %d packets\n", ROUNDS, REPEAT);
	printf("%-34s %8s %9s %7s\n", "packet", "xkv ns", "pass ns", "ratio");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long xkv_ns, pass_ns;

		pkt_build(&cases[i].pkt, pkt, &layout);
		xkv_ns = median_ns(bpf_program__fd(f.skel->progs.xkv_xdp), pkt, layout.len,
				   cases[i].verdict);
		pass_ns = median_ns(bpf_program__fd(baseline->progs.xdp_pass), pkt, layout.len,
				    XDP_PASS);
		if (xkv_ns < 0 || pass_ns < 0) {
			fprintf(stderr, "bench-xdp: %s: %s\n", cases[i].name,
				strerror(-(xkv_ns < 0 ? xkv_ns : pass_ns)));
			goto out_destroy_baseline;
		}
		printf("%-34s %8ld %9ld %6.1fx\n", cases[i].name, xkv_ns, pass_ns,
		       (double)xkv_ns / (pass_ns ? pass_ns : 1));
	}
	ret = 0;
out_destroy_baseline:
	xdp_pass_bpf__destroy(baseline);
out_close_fixture:
	fixture_close(&f);
	return ret;
}
