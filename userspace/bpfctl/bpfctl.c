// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/file.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xkv.skel.h"
#include "bpfctl/bpfctl.h"
#include "bpfctl/log.h"
#include "xkv/addr.h"

/* What is attached to an interface now. */
struct xdp_state {
	__u32 prog_id;
	enum bpfctl_mode mode;
	char name[BPFCTL_NAME_MAX];
	bool ours;
};

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

static __u32 mode_flags(enum bpfctl_mode mode)
{
	return mode == BPFCTL_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

static int pin_path(char *buf, const char *ifname, const char *map_name)
{
	int n = snprintf(buf, PATH_MAX, BPFCTL_PIN_ROOT "/%s%s%s", ifname, map_name ? "/" : "",
			 map_name ? map_name : "");

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static bool bpffs_mounted(void)
{
	struct statfs fs;

	return !statfs(BPFCTL_BPFFS, &fs) && fs.f_type == BPF_FS_MAGIC;
}

static int bpffs_ensure(void)
{
	int err;

	if (bpffs_mounted())
		return 0;
	if (mount("bpf", BPFCTL_BPFFS, "bpf", 0, NULL)) {
		err = -errno;
		pr_warn("bpffs is not mounted at %s and mounting it failed: %s "
			"(try: mount -t bpf bpf %s)\n",
			BPFCTL_BPFFS, strerror(-err), BPFCTL_BPFFS);
		return err;
	}
	pr_info("mounted bpffs at %s\n", BPFCTL_BPFFS);
	return 0;
}

/* An SIOCGIF* request about the interface into ifr; what names it for pr_warn. */
static int iface_ioctl(const char *ifname, unsigned long request, struct ifreq *ifr,
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

static int iface_check_up(const char *ifname)
{
	struct ifreq ifr;
	int err = iface_ioctl(ifname, SIOCGIFFLAGS, &ifr, "flags");

	if (!err && !(ifr.ifr_flags & IFF_UP)) {
		err = -ENETDOWN;
		pr_warn("interface %s is down (ip link set dev %s up)\n", ifname, ifname);
	}
	return err;
}

static int iface_index(const char *ifname, unsigned int *ifindex)
{
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		pr_warn("no such interface: %s\n", ifname);
		return -ENODEV;
	}
	return 0;
}

static int xdp_state_get(unsigned int ifindex, struct xdp_state *st)
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
	fd = bpf_prog_get_fd_by_id(st->prog_id);
	if (fd < 0) {
		err = -errno;
		pr_warn("open XDP program id %u: %s\n", st->prog_id, strerror(-err));
		return err;
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

static bool pins_exist(const char *ifname)
{
	char dir[PATH_MAX];

	return !pin_path(dir, ifname, NULL) && !access(dir, F_OK);
}

static int pins_remove(const char *ifname)
{
	char dir[PATH_MAX];
	struct dirent *ent;
	int err = 0;
	DIR *d;

	err = pin_path(dir, ifname, NULL);
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((ent = readdir(d))) {
		if (ent->d_name[0] == '.')
			continue;
		if (unlinkat(dirfd(d), ent->d_name, 0)) {
			err = -errno;
			pr_warn("remove pin %s/%s: %s\n", dir, ent->d_name, strerror(-err));
		}
	}
	closedir(d);
	if (!err && rmdir(dir)) {
		err = -errno;
		pr_warn("remove %s: %s\n", dir, strerror(-err));
	}
	/* the root goes with its last interface; others may still use it */
	if (!err && rmdir(BPFCTL_PIN_ROOT) && errno != ENOTEMPTY)
		pr_debug("keep %s: %s\n", BPFCTL_PIN_ROOT, strerror(errno));
	return err;
}

int bpfctl_map_open(const char *ifname, const char *map_name)
{
	char path[PATH_MAX];
	int fd;

	fd = pin_path(path, ifname, map_name);
	if (fd)
		return fd;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fd = -errno;
		pr_warn("open pinned map %s: %s%s\n", path, strerror(-fd),
			fd == -ENOENT ? " (is xkv attached?)" : "");
	}
	return fd;
}

/* Opens the program with every map pinned under the interface's folder, reusing pins that exist. */
static int prog_load_pinned(const char *ifname, struct xkv_bpf **skel_out)
{
	char path[PATH_MAX];
	struct xkv_bpf *skel;
	struct bpf_map *map;
	int err;

	/* libbpf creates only the last folder of a pin path */
	if (mkdir(BPFCTL_PIN_ROOT, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("create %s: %s\n", BPFCTL_PIN_ROOT, strerror(-err));
		return err;
	}
	skel = xkv_bpf__open();
	if (!skel) {
		err = -errno;
		pr_warn("open the XDP program: %s\n", strerror(-err));
		return err;
	}
	bpf_object__for_each_map(map, skel->obj) {
		err = pin_path(path, ifname, bpf_map__name(map));
		if (!err)
			err = bpf_map__set_pin_path(map, path);
		if (err) {
			pr_warn("pin map %s: %s\n", bpf_map__name(map), strerror(-err));
			goto out_destroy_skel;
		}
	}
	err = xkv_bpf__load(skel);
	if (err) {
		pr_warn("load the XDP program: %s%s\n", strerror(-err),
			err == -EINVAL ? " (pins of another xkv build? detach first)" : "");
		goto out_destroy_skel;
	}
	*skel_out = skel;
	return 0;

out_destroy_skel:
	xkv_bpf__destroy(skel);
	return err;
}

int bpfctl_config_write(int config_fd, const struct xkv_config *cfg)
{
	struct bpf_map_info info = {0};
	__u32 zero = 0, info_len = sizeof(info);
	struct xkv_config next = *cfg, cur;
	int err;

	if (!cfg->port) {
		pr_warn("config: port must be 1..65535\n");
		return -EINVAL;
	}
	if (cfg->memcached_port == cfg->port) {
		pr_warn("config: the memcached port must differ from the xkv port %u\n", cfg->port);
		return -EINVAL;
	}
	if (cfg->owner > XKV_OWNER_SERVER) {
		pr_warn("config: unknown owner %u\n", cfg->owner);
		return -EINVAL;
	}
	if (cfg->workers < 1 || cfg->workers > XKV_WORKERS_MAX) {
		pr_warn("config: workers must be 1..%d, not %u\n", XKV_WORKERS_MAX, cfg->workers);
		return -EINVAL;
	}
	if (cfg->policy >= XKV_POLICY_END) {
		pr_warn("config: unknown policy %u\n", cfg->policy);
		return -EINVAL;
	}
	/* the kernel copies the map's value size: a smaller map of an older build drops fields */
	if (bpf_obj_get_info_by_fd(config_fd, &info, &info_len)) {
		err = -errno;
		pr_warn("read the config map: %s\n", strerror(-err));
		return err;
	}
	if (info.value_size != sizeof(*cfg)) {
		pr_warn("config map of %u bytes, this build's is %zu: pins of another xkv build? "
			"detach first\n", info.value_size, sizeof(*cfg));
		return -EINVAL;
	}
	/* only the server knows its sockets' frames: the loader's attach under it keeps them */
	if (!next.frame_max && !bpf_map_lookup_elem(config_fd, &zero, &cur))
		next.frame_max = cur.frame_max;
	err = bpf_map_update_elem(config_fd, &zero, &next, BPF_ANY);
	if (err) {
		err = -errno;
		pr_warn("write the config map: %s\n", strerror(-err));
	}
	return err;
}

/* Whether keys[0..n) of key_size bytes each holds key. */
static bool keys_contain(const void *keys, size_t key_size, size_t n, const void *key)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp((const __u8 *)keys + i * key_size, key, key_size))
			return true;
	return false;
}

/*
 * Makes the map (a hash or an LPM trie) hold exactly the n keys, key i with value
 * values[i], or 1 without values. The new keys go in before stale ones go out, so
 * that a key that stays is never missing meanwhile. what names the map for pr_warn.
 */
static int map_set_exactly(int fd, const void *keys, size_t key_size, const __u8 *values,
			   size_t n, size_t max, const char *what)
{
	__u8 key[32], *prev = NULL, *stale;
	size_t n_stale = 0;
	__u8 one = 1;
	int err = 0;

	if (n > max) {
		pr_warn("%s: at most %zu entries, not %zu\n", what, max, n);
		return -E2BIG;
	}
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, (const __u8 *)keys + i * key_size,
					values ? &values[i] : &one, BPF_ANY)) {
			err = -errno;
			pr_warn("%s: add an entry: %s\n", what, strerror(-err));
			return err;
		}
	}
	stale = calloc(max, key_size);
	if (!stale)
		return -ENOMEM;
	while (n_stale < max && !bpf_map_get_next_key(fd, prev, key)) {
		if (!keys_contain(keys, key_size, n, key))
			memcpy(stale + n_stale++ * key_size, key, key_size);
		prev = key;
	}
	for (size_t i = 0; i < n_stale && !err; i++) {
		if (bpf_map_delete_elem(fd, stale + i * key_size) && errno != ENOENT) {
			err = -errno;
			pr_warn("%s: remove an entry: %s\n", what, strerror(-err));
		}
	}
	free(stale);
	return err;
}

/* One more on the allowlist's generation: atomically, whoever else changes it. */
static int allow_gen_next(int gen_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	_Atomic __u64 *gen = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, gen_fd, 0);

	if (gen == MAP_FAILED) {
		pr_warn("allowlist: map its generation: %s\n", strerror(errno));
		return -errno;
	}
	atomic_fetch_add(gen, 1); /* after the trie's changes: the syscalls came first */
	munmap((void *)gen, page);
	return 0;
}

int bpfctl_allow_write(int allow_fd, int gen_fd, const struct xkv_allow_key *keys, size_t n)
{
	int err = map_set_exactly(allow_fd, keys, sizeof(*keys), NULL, n, XKV_ALLOW_MAX,
				  "allowlist");

	return err || gen_fd < 0 ? err : allow_gen_next(gen_fd);
}

/* Adds len bytes at addr to a fixed table of the fast entry; -E2BIG when it is full. */
static int local_fast_add(__u8 *table, __u32 *n, __u32 max, size_t stride, const void *addr,
			  size_t len, const char *what)
{
	if (*n == max) {
		pr_warn("local addresses: at most %u %s\n", max, what);
		return -E2BIG;
	}
	memcpy(table + (*n)++ * stride, addr, len);
	return 0;
}

int bpfctl_local_write(int local_fd, int fast_fd, const struct bpfctl_local *local)
{
	struct xkv_local_key ips[XKV_LOCAL_MAX];
	__u8 use[XKV_LOCAL_MAX];
	struct xkv_local_fast fast = {0};
	size_t nips = 0;
	__u32 zero = 0;
	int err = 0;

	/* MACs and broadcast addresses go where XDP compares them in place; IPs to the hash */
	for (size_t i = 0; i < local->n && !err; i++) {
		const struct xkv_local_key *k = &local->keys[i];

		if (k->kind == XKV_LOCAL_MAC)
			err = local_fast_add(&fast.mac[0][0], &fast.nmac, XKV_LOCAL_MACS,
					     sizeof(fast.mac[0]), k->addr, ETH_ALEN, "MACs");
		else if (local->use[i] == XKV_LOCAL_BROADCAST)
			err = local_fast_add(&fast.bcast[0][0], &fast.nbcast, XKV_LOCAL_BCASTS,
					     sizeof(fast.bcast[0]), k->addr + 12, 4,
					     "broadcast addresses");
		else
			ips[nips] = *k, use[nips++] = local->use[i];
	}
	if (err)
		return err;
	/* the unicast IPs in place too, if they fit; xkv_local has them all either way */
	for (size_t i = 0; i < nips && fast.nip <= XKV_LOCAL_IPS; i++)
		if (use[i] == XKV_LOCAL_UNICAST && fast.nip++ < XKV_LOCAL_IPS)
			memcpy(fast.ip[fast.nip - 1], ips[i].addr, sizeof(fast.ip[0]));
	if (bpf_map_update_elem(fast_fd, &zero, &fast, BPF_ANY)) {
		err = -errno;
		pr_warn("local addresses: write the MACs and broadcast addresses: %s\n",
			strerror(-err));
		return err;
	}
	return map_set_exactly(local_fd, ips, sizeof(ips[0]), use, nips, XKV_LOCAL_MAX,
			       "local addresses");
}

int bpfctl_local_add(struct bpfctl_local *local, enum xkv_local_kind kind, const void *addr,
		     size_t len, enum xkv_local_use use)
{
	struct xkv_local_key key = {.kind = kind};

	memcpy(key.addr + (len == 4 ? 12 : 0), addr, len);
	if (len == 4)
		key.addr[10] = key.addr[11] = 0xff;
	if (keys_contain(local->keys, sizeof(key), local->n, &key))
		return 0;
	if (local->n == XKV_LOCAL_MAX) {
		pr_warn("local addresses: at most %d\n", XKV_LOCAL_MAX);
		return -E2BIG;
	}
	local->keys[local->n] = key;
	local->use[local->n++] = (__u8)use;
	return 0;
}

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
	int err = iface_ioctl(ifname, SIOCGIFHWADDR, &ifr, "MAC");

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

int bpfctl_parse_policy(const char *name)
{
	for (int p = 0; p < XKV_POLICY_END; p++)
		if (!strcmp(name, xkv_policy_name(p)))
			return p;
	pr_warn("unknown policy '%s'\n", name);
	return -EINVAL;
}

/* The interface's addresses as they are now, and --listen's, into the map. */
static int local_update(const struct bpfctl_attach_opts *opts, int local_fd, int fast_fd)
{
	struct bpfctl_local *local = calloc(1, sizeof(*local));
	int err;

	if (!local)
		return -ENOMEM;
	if (opts->listen)
		*local = *opts->listen;
	err = bpfctl_local_learn(opts->ifname, local);
	if (!err)
		err = bpfctl_local_write(local_fd, fast_fd, local);
	free(local);
	return err;
}

/* Attached already: only the config, the allowlist and the local addresses change. */
static int attach_update(const struct bpfctl_attach_opts *opts, const struct xdp_state *cur)
{
	int config_fd, allow_fd, gen_fd, local_fd, fast_fd, err;

	config_fd = bpfctl_map_open(opts->ifname, "xkv_config");
	if (config_fd < 0)
		return config_fd;
	allow_fd = bpfctl_map_open(opts->ifname, "xkv_allow");
	if (allow_fd < 0) {
		err = allow_fd;
		goto out_close_config;
	}
	gen_fd = bpfctl_map_open(opts->ifname, "xkv_allow_gen");
	if (gen_fd < 0) {
		err = gen_fd;
		goto out_close_allow;
	}
	local_fd = bpfctl_map_open(opts->ifname, "xkv_local");
	if (local_fd < 0) {
		err = local_fd;
		goto out_close_gen;
	}
	fast_fd = bpfctl_map_open(opts->ifname, "xkv_local_l2");
	if (fast_fd < 0) {
		err = fast_fd;
		goto out_close_local;
	}
	err = bpfctl_config_write(config_fd, &opts->config);
	if (!err)
		err = bpfctl_allow_write(allow_fd, gen_fd, opts->allow, opts->n_allow);
	if (!err)
		err = local_update(opts, local_fd, fast_fd);
	if (!err)
		pr_info("xkv already attached to %s (prog id %u): config updated\n", opts->ifname,
			cur->prog_id);
	close(fast_fd);
out_close_local:
	close(local_fd);
out_close_gen:
	close(gen_fd);
out_close_allow:
	close(allow_fd);
out_close_config:
	close(config_fd);
	return err;
}

static void attach_explain(const struct bpfctl_attach_opts *opts, int err)
{
	const char *mode = bpfctl_mode_name(opts->mode);

	if (err == -EOPNOTSUPP)
		pr_warn("%s does not support %s mode XDP%s\n", opts->ifname, mode,
			opts->mode == BPFCTL_MODE_NATIVE ? " (try --mode skb)" : "");
	else if (err == -EEXIST || err == -EBUSY)
		pr_warn("attach to %s: another XDP program was attached meanwhile\n", opts->ifname);
	else
		pr_warn("attach to %s in %s mode: %s\n", opts->ifname, mode, strerror(-err));
}

/* Attaches in place of whatever cur describes, atomically when the mode stays the same. */
static int attach_prog(const struct bpfctl_attach_opts *opts, unsigned int ifindex,
		       const struct xdp_state *cur, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, attach);
	__u32 flags = mode_flags(opts->mode);
	int err, old_fd = -1;

	if (cur->prog_id && cur->mode != opts->mode) {
		/* one mode at a time: the old one goes first */
		err = bpf_xdp_detach(ifindex, mode_flags(cur->mode), NULL);
		if (err) {
			pr_warn("detach %s mode program from %s: %s\n", bpfctl_mode_name(cur->mode),
				opts->ifname, strerror(-err));
			return err;
		}
	} else if (cur->prog_id) {
		old_fd = bpf_prog_get_fd_by_id(cur->prog_id);
		if (old_fd < 0) {
			err = -errno;
			pr_warn("open XDP program id %u: %s\n", cur->prog_id, strerror(-err));
			return err;
		}
		attach.old_prog_fd = old_fd;
		flags |= XDP_FLAGS_REPLACE;
	}
	if (old_fd < 0)
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	err = bpf_xdp_attach(ifindex, prog_fd, flags, &attach);
	if (err)
		attach_explain(opts, err);
	if (old_fd >= 0)
		close(old_fd);
	return err;
}

int bpfctl_attach(const struct bpfctl_attach_opts *opts)
{
	struct xdp_state cur;
	struct xkv_bpf *skel;
	unsigned int ifindex;
	int err;

	err = iface_index(opts->ifname, &ifindex);
	if (!err)
		err = iface_check_up(opts->ifname);
	if (!err)
		err = bpffs_ensure();
	if (!err)
		err = xdp_state_get(ifindex, &cur);
	if (err)
		return err;
	if (cur.prog_id && !cur.ours) {
		if (!opts->force || cur.mode == BPFCTL_MODE_OTHER) {
			pr_warn("%s already runs XDP program '%s' (id %u)%s\n", opts->ifname,
				cur.name, cur.prog_id,
				cur.mode == BPFCTL_MODE_OTHER ? ": offloaded or several, remove it"
							      : "; --force replaces it");
			return -EBUSY;
		}
		pr_info("replacing XDP program '%s' (id %u) on %s\n", cur.name, cur.prog_id,
			opts->ifname);
	}
	if (cur.ours && cur.mode == opts->mode && pins_exist(opts->ifname))
		return attach_update(opts, &cur);
	/* pins without our program are left by a killed process: start afresh */
	if (!cur.ours && pins_exist(opts->ifname)) {
		pr_info("removing stale pins under %s/%s\n", BPFCTL_PIN_ROOT, opts->ifname);
		err = pins_remove(opts->ifname);
		if (err)
			return err;
	}

	err = prog_load_pinned(opts->ifname, &skel);
	if (err)
		return err;
	/* configured before attaching, so no packet meets an empty config */
	err = bpfctl_config_write(bpf_map__fd(skel->maps.xkv_config), &opts->config);
	if (!err)
		err = bpfctl_allow_write(bpf_map__fd(skel->maps.xkv_allow),
					 bpf_map__fd(skel->maps.xkv_allow_gen), opts->allow,
					 opts->n_allow);
	if (!err)
		err = local_update(opts, bpf_map__fd(skel->maps.xkv_local),
				   bpf_map__fd(skel->maps.xkv_local_l2));
	if (!err)
		err = attach_prog(opts, ifindex, &cur, bpf_program__fd(skel->progs.xkv_xdp));
	if (!err)
		pr_info("attached xkv to %s in %s mode, maps pinned under %s/%s\n", opts->ifname,
			bpfctl_mode_name(opts->mode), BPFCTL_PIN_ROOT, opts->ifname);
	else if (!cur.ours)
		pins_remove(opts->ifname); /* ours were made just now, for nothing */
	xkv_bpf__destroy(skel);
	return err;
}

int bpfctl_detach(const char *ifname, bool force)
{
	unsigned int ifindex = if_nametoindex(ifname);
	bool pinned = bpffs_mounted() && pins_exist(ifname);
	struct xdp_state cur = {0};
	int err;

	if (!ifindex && !pinned) {
		pr_warn("no such interface: %s\n", ifname);
		return -ENODEV;
	}
	if (ifindex) {
		err = xdp_state_get(ifindex, &cur);
		if (err)
			return err;
	}
	if (cur.prog_id && !cur.ours && (!force || cur.mode == BPFCTL_MODE_OTHER)) {
		pr_warn("%s runs XDP program '%s' (id %u), not xkv: left attached%s\n", ifname,
			cur.name, cur.prog_id,
			cur.mode == BPFCTL_MODE_OTHER ? "" : " (--force detaches it)");
		return -EBUSY;
	}
	if (cur.prog_id) {
		err = bpf_xdp_detach(ifindex, mode_flags(cur.mode), NULL);
		if (err) {
			pr_warn("detach XDP program id %u from %s: %s\n", cur.prog_id, ifname,
				strerror(-err));
			return err;
		}
		pr_info("detached XDP program '%s' (id %u) from %s\n", cur.name, cur.prog_id,
			ifname);
	}
	if (pinned) {
		err = pins_remove(ifname);
		if (err)
			return err;
		pr_info("removed the pins under %s/%s\n", BPFCTL_PIN_ROOT, ifname);
	}
	if (!cur.prog_id && !pinned)
		pr_info("nothing attached to %s\n", ifname);
	return 0;
}

/* BPFCTL_LOCK_DIR/<ifname>.lock opened with flags: an fd, or -errno. */
static int lock_open(const char *ifname, int flags)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), BPFCTL_LOCK_DIR "/%s.lock", ifname), fd;

	if (n < 0 || n >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((flags & O_CREAT) && mkdir(BPFCTL_LOCK_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = open(path, flags | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* Takes op (LOCK_EX or LOCK_SH) without waiting: -EBUSY, *holder read, if a server holds it. */
static int lock_take(int fd, int op, pid_t *holder)
{
	char buf[16] = {0};

	if (!flock(fd, op | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	*holder = pread(fd, buf, sizeof(buf) - 1, 0) > 0 ? (pid_t)atoi(buf) : 0;
	return -EBUSY;
}

int bpfctl_server_lock(const char *ifname, pid_t *holder)
{
	int fd = lock_open(ifname, O_RDWR | O_CREAT), err, n;
	char pid[16];

	if (fd < 0)
		return fd;
	err = lock_take(fd, LOCK_EX, holder);
	if (err)
		goto out_close_fd;
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		err = -errno;
		goto out_close_fd;
	}
	return fd;
out_close_fd:
	close(fd);
	return err;
}

int bpfctl_server_running(const char *ifname, pid_t *holder)
{
	int fd = lock_open(ifname, O_RDONLY), err;

	if (fd == -ENOENT)
		return 0; /* no server ever ran on it since boot */
	if (fd < 0)
		return fd;
	err = lock_take(fd, LOCK_SH, holder);
	close(fd); /* lets go of our own shared lock, if we took it */
	return err;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void status_read_pins(struct bpfctl_status *st)
{
	char dir[PATH_MAX];
	struct dirent *ent;
	__u32 zero = 0;
	DIR *d;
	int fd;

	if (!bpffs_mounted() || pin_path(dir, st->ifname, NULL))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((ent = readdir(d)) && st->n_pins < BPFCTL_MAPS_MAX) {
		if (ent->d_name[0] == '.')
			continue;
		snprintf(st->pins[st->n_pins++], BPFCTL_NAME_MAX, "%.*s", BPFCTL_NAME_MAX - 1,
			 ent->d_name);
	}
	closedir(d);
	qsort(st->pins, st->n_pins, sizeof(st->pins[0]), name_cmp);

	fd = bpfctl_map_open(st->ifname, "xkv_config");
	if (fd < 0)
		return;
	st->has_config = !bpf_map_lookup_elem(fd, &zero, &st->config);
	close(fd);
}

int bpfctl_status(const char *ifname, struct bpfctl_status *st)
{
	struct xdp_state cur = {0};
	int err;

	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	st->ifindex = if_nametoindex(ifname);
	if (st->ifindex) {
		err = xdp_state_get(st->ifindex, &cur);
		if (err)
			return err;
	}
	st->prog_id = cur.prog_id;
	st->mode = cur.mode;
	st->ours = cur.ours;
	memcpy(st->prog_name, cur.name, sizeof(st->prog_name));
	status_read_pins(st);
	if (!st->ifindex && !st->n_pins) {
		pr_warn("no such interface: %s\n", ifname);
		return -ENODEV;
	}
	return 0;
}

static bool status_listed(const struct bpfctl_status *st, size_t n, const char *ifname)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(st[i].ifname, ifname))
			return true;
	return false;
}

/* Adds the interface to the list when xkv is attached to it or has pins there. */
static int status_add(struct bpfctl_status *st, size_t max, size_t *n, const char *ifname)
{
	int err;

	if (status_listed(st, *n, ifname))
		return 0;
	if (*n == max)
		return -ENOBUFS;
	err = bpfctl_status(ifname, &st[*n]);
	if (err)
		return err;
	if (st[*n].ours || st[*n].n_pins)
		(*n)++;
	return 0;
}

int bpfctl_status_all(struct bpfctl_status *st, size_t max, size_t *n)
{
	struct if_nameindex *ifs, *it;
	struct dirent *ent;
	int err = 0;
	DIR *d;

	*n = 0;
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (it = ifs; it->if_index && !err; it++)
		err = status_add(st, max, n, it->if_name);
	if_freenameindex(ifs);
	/* pins of interfaces that are gone */
	d = bpffs_mounted() ? opendir(BPFCTL_PIN_ROOT) : NULL;
	while (d && !err && (ent = readdir(d)))
		if (ent->d_name[0] != '.')
			err = status_add(st, max, n, ent->d_name);
	if (d)
		closedir(d);
	return err;
}

static int percpu_sum(int fd, __u32 key, __u64 *values, int ncpus, __u64 *sum)
{
	if (bpf_map_lookup_elem(fd, &key, values))
		return -errno;
	*sum = 0;
	for (int cpu = 0; cpu < ncpus; cpu++)
		*sum += values[cpu];
	return 0;
}

int bpfctl_stats_read(int stats_fd, int steered_fd, struct bpfctl_stats *stats)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	__u64 *values;

	if (ncpus < 0)
		return ncpus;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (__u32 slot = 0; slot < XKV_R_END && !err; slot++)
		err = percpu_sum(stats_fd, slot, values, ncpus, &stats->slots[slot]);
	for (__u32 worker = 0; worker < XKV_WORKERS_MAX && !err; worker++)
		err = percpu_sum(steered_fd, worker, values, ncpus, &stats->steered[worker]);
	if (err)
		pr_warn("read the stats maps: %s\n", strerror(-err));
	free(values);
	return err;
}

/* Opens two pinned maps of the interface: 0 with both fds, or -errno with none. */
static int map_open_pair(const char *ifname, const char *first, const char *second, int fds[2])
{
	fds[0] = bpfctl_map_open(ifname, first);
	if (fds[0] < 0)
		return fds[0];
	fds[1] = bpfctl_map_open(ifname, second);
	if (fds[1] < 0) {
		close(fds[0]);
		return fds[1];
	}
	return 0;
}

int bpfctl_stats(const char *ifname, struct bpfctl_stats *stats)
{
	int fds[2], err;

	err = map_open_pair(ifname, "xkv_stats", "xkv_steered", fds);
	if (err)
		return err;
	err = bpfctl_stats_read(fds[0], fds[1], stats);
	close(fds[1]);
	close(fds[0]);
	return err;
}

int bpfctl_ewt_read(int ewt_fd, int ewt_stats_fd, struct bpfctl_ewt *ewt)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	struct xkv_ewt_counters *percpu;
	struct xkv_ewt_slot slot;
	__u32 zero = 0;

	if (ncpus < 0)
		return ncpus;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	memset(ewt, 0, sizeof(*ewt));
	for (__u32 i = 0; i < XKV_EWT_SLOTS && !err; i++) {
		if (bpf_map_lookup_elem(ewt_fd, &i, &slot))
			err = -errno;
		else
			ewt->active += slot.writes > 0;
	}
	if (!err && bpf_map_lookup_elem(ewt_stats_fd, &zero, percpu))
		err = -errno;
	for (int cpu = 0; cpu < ncpus && !err; cpu++) {
		ewt->counters.taken += percpu[cpu].taken;
		ewt->counters.joined += percpu[cpu].joined;
		ewt->counters.cas_retry += percpu[cpu].cas_retry;
		ewt->counters.dropped += percpu[cpu].dropped;
	}
	if (err)
		pr_warn("read the EWT maps: %s\n", strerror(-err));
	free(percpu);
	return err;
}

int bpfctl_ewt(const char *ifname, struct bpfctl_ewt *ewt)
{
	int fds[2], err;

	err = map_open_pair(ifname, "xkv_ewt", "xkv_ewt_stats", fds);
	if (err)
		return err;
	err = bpfctl_ewt_read(fds[0], fds[1], ewt);
	close(fds[1]);
	close(fds[0]);
	return err;
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
