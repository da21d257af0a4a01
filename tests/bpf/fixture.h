/* SPDX-License-Identifier: MIT */
/*
 * The xkv XDP program loaded (not attached, not pinned) for BPF_PROG_RUN, with
 * an AF_XDP socket in chosen XSKMAP slots so that steered packets really return
 * XDP_REDIRECT. The socket is bound to the loopback of a network namespace of the
 * calling process's own, so parallel tests never share a queue.
 */
#ifndef XKV_TEST_FIXTURE_H
#define XKV_TEST_FIXTURE_H

#include <linux/types.h>
#include "xkv.skel.h"
#include "bpfctl/bpfctl.h"

struct fixture {
	struct xkv_bpf *skel;
	int xsk_fd;
	void *umem;
};

/*
 * Loads the program, allows 10.0.0.0/8 and fd00::/16, makes packet.h's server addresses
 * (PKT_MAC_DST, 10.0.0.2, fd00::2, broadcast 10.255.255.255) local, puts a socket in
 * slots 0..sockets-1.
 */
int fixture_open(struct fixture *f, const struct xkv_config *cfg, __u32 sockets);
void fixture_close(struct fixture *f);

int fixture_config(struct fixture *f, const struct xkv_config *cfg);

/* BPF_PROG_RUN of an XDP program on the packet, repeated; ns gets the mean time per run. */
int xdp_run(int prog_fd, const void *pkt, __u32 len, int repeat, __u32 *verdict, __u32 *ns);

int fixture_stats(struct fixture *f, struct bpfctl_stats *stats);

__u64 fixture_depth(struct fixture *f, __u32 worker);

/* dcrew's EWT: the slot word of a partition, written or read; reset empties every slot. */
int fixture_ewt_set(struct fixture *f, __u32 partition, __u64 word);
__u64 fixture_ewt_word(struct fixture *f, __u32 partition);
int fixture_ewt_reset(struct fixture *f);
int fixture_ewt(struct fixture *f, struct bpfctl_ewt *ewt);

#endif /* XKV_TEST_FIXTURE_H */
