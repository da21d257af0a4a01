/* SPDX-License-Identifier: MIT */
/* What the files of bpfctl share among themselves, and nobody else uses. */
#ifndef XKV_BPFCTL_INTERNAL_H
#define XKV_BPFCTL_INTERNAL_H

#include <stdbool.h>
#include <net/if.h>
#include <linux/types.h>

#include "bpfctl/bpfctl.h"

struct xkv_bpf;

/* What is attached to an interface now. */
struct bpfctl_xdp_state {
	__u32 prog_id;
	enum bpfctl_mode mode;
	char name[BPFCTL_NAME_MAX];
	bool ours;
};

/* An SIOCGIF* request about the interface into ifr; what names it for pr_warn. */
int bpfctl_iface_ioctl(const char *ifname, unsigned long request, struct ifreq *ifr,
		       const char *what);

/* Whether bpffs is mounted at /sys/fs/bpf; mounts it if not (0 or -errno). */
bool bpfctl_bpffs_mounted(void);
int bpfctl_bpffs_ensure(void);

/* 0 if the interface is up, else -ENETDOWN (said why); its index; what XDP it has. */
int bpfctl_iface_check_up(const char *ifname);
int bpfctl_iface_index(const char *ifname, unsigned int *ifindex);
int bpfctl_xdp_state_get(unsigned int ifindex, struct bpfctl_xdp_state *st);

/* Whether the interface's pins exist; removing them all (0 or -errno). */
bool bpfctl_pins_exist(const char *ifname);
int bpfctl_pins_remove(const char *ifname);

/*
 * The XDP program of this id on ifindex, opened: by its id (CAP_SYS_ADMIN), or else
 * xkv's own, pinned beside its maps, if it is that one. An fd, or -errno.
 */
int bpfctl_xdp_prog_open(unsigned int ifindex, __u32 id);

/* Opens the program with every map pinned under the interface's folder, reusing pins that exist. */
int bpfctl_prog_load_pinned(const char *ifname, struct xkv_bpf **skel_out);

/* The pin of map_name under the interface's folder, in buf (PATH_MAX): 0 or -ENAMETOOLONG. */
int bpfctl_pin_path(char *buf, const char *ifname, const char *map_name);

#endif /* XKV_BPFCTL_INTERNAL_H */
