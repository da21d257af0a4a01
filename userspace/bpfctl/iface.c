// SPDX-License-Identifier: MIT
/* bpfctl: an interface: up or down, its index and queues, and what XDP program it has now. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <sys/mount.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"

const char *bpfctl_mode_name(enum bpfctl_mode mode)
{
	switch (mode) {
	case BPFCTL_MODE_NONE:
		return "none";
	case BPFCTL_MODE_NATIVE:
		return "native";
	case BPFCTL_MODE_SKB:
		return "skb";
	case BPFCTL_MODE_OTHER:
		break;
	}
	return "other";
}

/* An SIOCGIF* request about the interface into ifr; what names it for pr_warn. */
int bpfctl_iface_ioctl(const char *ifname, unsigned long request, struct ifreq *ifr,
		       const char *what)
{
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	strncpy(ifr->ifr_name, ifname, IFNAMSIZ - 1);
	if (ioctl(fd, request, ifr)) {
		err = -errno;
		pr_warn("read the %s of %s: %s\n", what, ifname, strerror(-err));
	}
	close(fd);
	return err;
}

int bpfctl_iface_check_up(const char *ifname)
{
	struct ifreq ifr;
	int err = bpfctl_iface_ioctl(ifname, SIOCGIFFLAGS, &ifr, "flags");

	if (!err && !(ifr.ifr_flags & IFF_UP)) {
		err = -ENETDOWN;
		pr_warn("interface %s is down (ip link set dev %s up)\n", ifname, ifname);
	}
	return err;
}

int bpfctl_iface_index(const char *ifname, unsigned int *ifindex)
{
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		pr_warn("no such interface: %s\n", ifname);
		return -ENODEV;
	}
	return 0;
}

int bpfctl_xdp_prog_open(unsigned int ifindex, __u32 id)
{
	struct bpf_prog_info info = {0};
	__u32 info_len = sizeof(info);
	char ifname[IF_NAMESIZE], path[PATH_MAX];
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd >= 0 || errno != EPERM)
		return fd >= 0 ? fd : -errno;
	/* without CAP_SYS_ADMIN: ours, pinned beside its maps, is the one if its id is */
	if (!if_indextoname(ifindex, ifname) || bpfctl_pin_path(path, ifname, BPFCTL_PROG_NAME))
		return -EPERM;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -EPERM;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || info.id != id) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int bpfctl_xdp_state_get(unsigned int ifindex, struct bpfctl_xdp_state *st)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	struct bpf_prog_info info = {0};
	__u32 info_len = sizeof(info);
	int err, fd;

	memset(st, 0, sizeof(*st));
	err = bpf_xdp_query(ifindex, 0, &query);
	if (err) {
		pr_warn("query the XDP program of ifindex %u: %s\n", ifindex, strerror(-err));
		return err;
	}
	switch (query.attach_mode) {
	case XDP_ATTACHED_NONE:
		return 0;
	case XDP_ATTACHED_DRV:
		st->mode = BPFCTL_MODE_NATIVE;
		break;
	case XDP_ATTACHED_SKB:
		st->mode = BPFCTL_MODE_SKB;
		break;
	default:
		st->mode = BPFCTL_MODE_OTHER;
		break;
	}
	st->prog_id = query.prog_id ?: query.drv_prog_id ?: query.skb_prog_id ?: query.hw_prog_id;
	fd = bpfctl_xdp_prog_open(ifindex, st->prog_id);
	if (fd < 0) {
		pr_warn("open XDP program id %u: %s\n", st->prog_id, strerror(-fd));
		return fd;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	close(fd);
	if (err) {
		err = -errno;
		pr_warn("read XDP program id %u: %s\n", st->prog_id, strerror(-err));
		return err;
	}
	memcpy(st->name, info.name, sizeof(st->name));
	st->name[sizeof(st->name) - 1] = '\0';
	st->ours = st->mode != BPFCTL_MODE_OTHER && !strcmp(st->name, BPFCTL_PROG_NAME);
	return 0;
}

__u32 bpfctl_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr = {.ifr_data = (void *)&ch};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t n = 0;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd >= 0 && ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		n = ch.rx_count + ch.combined_count;
	if (fd >= 0)
		close(fd);
	return n;
}
