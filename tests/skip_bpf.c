// SPDX-License-Identifier: MIT
/*
 * For the test scripts (tests/skip.sh, need_bpf): skip-bpf TYPE prints "SKIP: <why>" and
 * exits SKIP_EXIT when BPF programs of TYPE (libbpf's section name: xdp, sk_reuseport)
 * do not load here, for the reason a Criterion suite would skip (skip_reason_bpf);
 * exits 0 when they load.
 */
#include <bpf/libbpf.h>
#include <stdio.h>

#include "skip.h"

int main(int argc, char **argv)
{
	enum bpf_attach_type attach;
	enum bpf_prog_type type;
	const char *why;

	if (argc != 2 || libbpf_prog_type_by_name(argv[1], &type, &attach)) {
		fprintf(stderr, "usage: skip-bpf TYPE (libbpf's section name: xdp, sk_reuseport)\n");
		return 2;
	}
	why = skip_reason_bpf(type);
	if (!why)
		return 0;
	printf("SKIP: %s\n", why);
	return SKIP_EXIT;
}
