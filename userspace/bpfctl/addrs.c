// SPDX-License-Identifier: MIT
/* bpfctl: addresses as the options give them (CIDRs, local ones) or the interface has them. */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/sockios.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"
#include "xkv/addr.h"

int bpfctl_parse_local(const char *text, struct bpfctl_local *local)
{
	__u8 addr[16];

	if (inet_pton(AF_INET, text, addr) == 1 && !xkv_ipv4_is_group(addr))
		return bpfctl_local_add(local, XKV_LOCAL_IP, addr, 4, XKV_LOCAL_UNICAST);
	if (inet_pton(AF_INET6, text, addr) == 1 && !xkv_ipv6_is_group(addr))
		return bpfctl_local_add(local, XKV_LOCAL_IP, addr, 16, XKV_LOCAL_UNICAST);
	pr_warn("not a unicast IP address: '%s' (expected e.g. 10.1.2.3 or fd00::1)\n", text);
	return -EINVAL;
}

/* The interface's MAC: the one unicast MAC its requests come to. */
static int local_learn_mac(const char *ifname, struct bpfctl_local *local)
{
	struct ifreq ifr;
	int err = bpfctl_iface_ioctl(ifname, SIOCGIFHWADDR, &ifr, "MAC");

	return err ? err
		   : bpfctl_local_add(local, XKV_LOCAL_MAC, ifr.ifr_hwaddr.sa_data, ETH_ALEN,
				      XKV_LOCAL_UNICAST);
}

/* The interface's IPv4 and IPv6 addresses, and its IPv4 subnets' broadcast addresses. */
static int local_learn_ips(const char *ifname, struct bpfctl_local *local)
{
	struct ifaddrs *all, *ifa;
	int err = 0;

	if (getifaddrs(&all)) {
		err = -errno;
		pr_warn("read the addresses of %s: %s\n", ifname, strerror(-err));
		return err;
	}
	for (ifa = all; ifa && !err; ifa = ifa->ifa_next) {
		const struct sockaddr *sa = ifa->ifa_addr;

		if (!sa || strcmp(ifa->ifa_name, ifname))
			continue;
		if (sa->sa_family == AF_INET) {
			err = bpfctl_local_add(local, XKV_LOCAL_IP,
					       &((const struct sockaddr_in *)sa)->sin_addr, 4,
					       XKV_LOCAL_UNICAST);
			if (!err && (ifa->ifa_flags & IFF_BROADCAST) && ifa->ifa_broadaddr)
				err = bpfctl_local_add(
				    local, XKV_LOCAL_IP,
				    &((const struct sockaddr_in *)ifa->ifa_broadaddr)->sin_addr, 4,
				    XKV_LOCAL_BROADCAST);
		} else if (sa->sa_family == AF_INET6) {
			err = bpfctl_local_add(local, XKV_LOCAL_IP,
					       &((const struct sockaddr_in6 *)sa)->sin6_addr, 16,
					       XKV_LOCAL_UNICAST);
		}
	}
	freeifaddrs(all);
	return err;
}

int bpfctl_local_learn(const char *ifname, struct bpfctl_local *local)
{
	int err = local_learn_mac(ifname, local);

	return err ? err : local_learn_ips(ifname, local);
}

int bpfctl_parse_cidr(const char *text, struct xkv_allow_key *key)
{
	const char *slash = strchr(text, '/');
	size_t addr_len = slash ? (size_t)(slash - text) : strlen(text);
	char addr[INET6_ADDRSTRLEN];
	unsigned int base, max;
	long bits;
	char *end;

	memset(key, 0, sizeof(*key));
	if (addr_len >= sizeof(addr))
		goto out_invalid;
	memcpy(addr, text, addr_len);
	addr[addr_len] = '\0';
	if (inet_pton(AF_INET, addr, &key->addr[12]) == 1) {
		key->addr[10] = key->addr[11] = 0xff;
		base = XKV_V4MAPPED_PREFIX;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, key->addr) == 1) {
		base = 0;
		max = 128;
	} else {
		goto out_invalid;
	}
	bits = max;
	if (slash) {
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || bits < 0 || bits > (long)max)
			goto out_invalid;
	}
	key->prefixlen = base + bits;
	/* equal networks must give equal keys: clear the host bits */
	for (unsigned int bit = key->prefixlen; bit < 128; bit++)
		key->addr[bit / 8] &= ~(0x80 >> (bit % 8));
	return 0;

out_invalid:
	pr_warn("not a network: '%s' (expected e.g. 10.0.0.0/8, fd00::/8 or 10.1.2.3)\n", text);
	return -EINVAL;
}

int bpfctl_format_cidr(const struct xkv_allow_key *key, char *buf, size_t len)
{
	static const __u8 v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	bool v4 = key->prefixlen >= XKV_V4MAPPED_PREFIX && !memcmp(key->addr, v4mapped, 12);
	char addr[INET6_ADDRSTRLEN];
	int n;

	if (!inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? &key->addr[12] : key->addr, addr,
		       sizeof(addr)))
		return -errno;
	n = snprintf(buf, len, "%s/%u", addr, key->prefixlen - (v4 ? XKV_V4MAPPED_PREFIX : 0));
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}
