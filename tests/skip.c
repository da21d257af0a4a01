// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "skip.h"

const char *skip_reason_bpf(enum bpf_prog_type type)
{
	/* r0 = 0; exit: whatever the type, the verifier takes it */
	static const struct bpf_insn ret0[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	static char why[160];
	const char *name = libbpf_bpf_prog_type_str(type);
	/* libbpf_probe_bpf_prog_type() would not tell "not root" from "not here" */
	int fd = bpf_prog_load(type, NULL, "GPL", ret0, sizeof(ret0) / sizeof(ret0[0]), NULL);

	if (fd >= 0) {
		close(fd);
		return NULL;
	}
	if (fd == -EPERM)
		snprintf(why, sizeof(why),
			 "needs root (CAP_BPF, CAP_NET_ADMIN) to load BPF programs of type %s",
			 name);
	else if (fd == -EINVAL)
		snprintf(why, sizeof(why), "this kernel has no BPF programs of type %s", name);
	else
		snprintf(why, sizeof(why), "BPF programs of type %s do not load here: %s", name,
			 strerror(-fd));
	return why;
}
