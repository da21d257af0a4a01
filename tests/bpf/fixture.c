// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include "bpfctl/log.h"
#include "fixture.h"

#define UMEM_FRAMES 16
#define FRAME_SIZE  4096
#define RING_SIZE   16

static const char *const allowed[] = {"10.0.0.0/8", "fd00::/16"};
static const __u8 local_mac[ETH_ALEN] = {2, 0, 0, 0, 0, 2}; /* PKT_MAC_DST */
static const __u8 local_broadcast[4] = {10, 255, 255, 255};  /* of 10.0.0.0/8 */

/* packet.h's server: PKT_MAC_DST, 10.0.0.2 and fd00::2, on 10.0.0.0/8. */
static int local_write(struct fixture *f)
{
	struct bpfctl_local local = {0};
	int err;

	err = bpfctl_local_add(&local, XKV_LOCAL_MAC, local_mac, ETH_ALEN, XKV_LOCAL_UNICAST);
	if (!err)
		err = bpfctl_parse_local("10.0.0.2", &local);
	if (!err)
		err = bpfctl_parse_local("fd00::2", &local);
	if (!err)
		err = bpfctl_local_add(&local, XKV_LOCAL_IP, local_broadcast, 4,
				       XKV_LOCAL_BROADCAST);
	return err ? err
		   : bpfctl_local_write(bpf_map__fd(f->skel->maps.xkv_local),
					bpf_map__fd(f->skel->maps.xkv_local_l2),
					bpf_map__fd(f->skel->maps.xkv_addr_gen), &local);
}

/* A copy-mode socket on lo queue 0: enough for the XSKMAP, never read. */
static int xsk_open(struct fixture *f)
{
	struct sockaddr_xdp addr = {.sxdp_family = AF_XDP, .sxdp_flags = XDP_COPY};
	struct xdp_umem_reg reg = {.len = UMEM_FRAMES * FRAME_SIZE, .chunk_size = FRAME_SIZE};
	int ring = RING_SIZE;

	/* our own loopback: another test process can't have bound its queue 0 */
	if (unshare(CLONE_NEWNET))
		return -errno;
	addr.sxdp_ifindex = if_nametoindex("lo");
	f->umem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->umem == MAP_FAILED)
		return -errno;
	reg.addr = (__u64)(unsigned long)f->umem;
	f->xsk_fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (f->xsk_fd < 0 || setsockopt(f->xsk_fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(f->xsk_fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(f->xsk_fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) ||
	    setsockopt(f->xsk_fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    bind(f->xsk_fd, (struct sockaddr *)&addr, sizeof(addr)))
		return -errno;
	return 0;
}

int fixture_open(struct fixture *f, const struct xkv_config *cfg, __u32 sockets)
{
	struct xkv_allow_key keys[sizeof(allowed) / sizeof(allowed[0])];
	int err, xsks_fd;

	memset(f, 0, sizeof(*f));
	f->xsk_fd = -1;
	f->umem = MAP_FAILED;
	bpfctl_log_set_level(BPFCTL_LOG_WARN);
	f->skel = xkv_bpf__open_and_load();
	if (!f->skel)
		return -errno;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		err = bpfctl_parse_cidr(allowed[i], &keys[i]);
		if (err)
			return err;
	}
	err = bpfctl_allow_write(bpf_map__fd(f->skel->maps.xkv_allow),
				 bpf_map__fd(f->skel->maps.xkv_addr_gen), keys,
				 sizeof(keys) / sizeof(keys[0]));
	if (!err)
		err = local_write(f);
	if (!err)
		err = fixture_config(f, cfg);
	if (!err)
		err = xsk_open(f);
	xsks_fd = bpf_map__fd(f->skel->maps.xkv_xsks);
	for (__u32 slot = 0; slot < sockets && !err; slot++)
		if (bpf_map_update_elem(xsks_fd, &slot, &f->xsk_fd, BPF_ANY))
			err = -errno;
	return err;
}

void fixture_close(struct fixture *f)
{
	if (f->xsk_fd >= 0)
		close(f->xsk_fd);
	if (f->umem != MAP_FAILED)
		munmap(f->umem, UMEM_FRAMES * FRAME_SIZE);
	xkv_bpf__destroy(f->skel);
}

int fixture_config(struct fixture *f, const struct xkv_config *cfg)
{
	__u32 zero = 0;

	/* written raw, so tests can also store configs that bpfctl refuses */
	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.xkv_config), &zero, cfg, BPF_ANY))
		return -errno;
	return 0;
}

int xdp_run(int prog_fd, const void *pkt, __u32 len, int repeat, __u32 *verdict, __u32 *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .data_size_in = len, .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &run))
		return -errno;
	*verdict = run.retval;
	if (ns)
		*ns = run.duration;
	return 0;
}

int fixture_stats(struct fixture *f, struct bpfctl_stats *stats)
{
	return bpfctl_stats_read(bpf_map__fd(f->skel->maps.xkv_stats),
				 bpf_map__fd(f->skel->maps.xkv_steered), stats);
}

__u64 fixture_depth(struct fixture *f, __u32 worker)
{
	struct xkv_qdepth qd = {0};

	bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.xkv_qdepth), &worker, &qd);
	return qd.depth;
}

int fixture_ewt_set(struct fixture *f, __u32 partition, __u64 word)
{
	__u32 slot = xkv_ewt_slot_of(partition);

	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.xkv_ewt), &slot, &word, BPF_ANY))
		return -errno;
	return 0;
}

__u64 fixture_ewt_word(struct fixture *f, __u32 partition)
{
	__u32 slot = xkv_ewt_slot_of(partition);
	__u64 word = 0;

	bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.xkv_ewt), &slot, &word);
	return word;
}

int fixture_ewt_reset(struct fixture *f)
{
	int err = 0;

	for (__u32 p = 0; p < XKV_EWT_SLOTS && !err; p++)
		err = fixture_ewt_set(f, p, 0);
	return err;
}

int fixture_ewt(struct fixture *f, struct bpfctl_ewt *ewt)
{
	return bpfctl_ewt_read(bpf_map__fd(f->skel->maps.xkv_ewt),
			       bpf_map__fd(f->skel->maps.xkv_ewt_stats), ewt);
}
