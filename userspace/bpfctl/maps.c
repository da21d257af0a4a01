// SPDX-License-Identifier: MIT
/* bpfctl: writing the maps that configure the program: its config, the allowlist, the local addresses. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"

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

/*
 * One more on the generation of the allowlist and the local addresses (xkv_addr_gen),
 * after a change to either: atomically, whoever else changes it.
 */
static int addr_gen_next(int gen_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	_Atomic __u64 *gen = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, gen_fd, 0);

	if (gen == MAP_FAILED) {
		pr_warn("addresses: map their generation: %s\n", strerror(errno));
		return -errno;
	}
	atomic_fetch_add(gen, 1); /* after the maps' changes: the syscalls came first */
	munmap((void *)gen, page);
	return 0;
}

int bpfctl_allow_write(int allow_fd, int gen_fd, const struct xkv_allow_key *keys, size_t n)
{
	int err = map_set_exactly(allow_fd, keys, sizeof(*keys), NULL, n, XKV_ALLOW_MAX,
				  "allowlist");

	return err || gen_fd < 0 ? err : addr_gen_next(gen_fd);
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

int bpfctl_local_write(int local_fd, int fast_fd, int gen_fd, const struct bpfctl_local *local)
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
	err = map_set_exactly(local_fd, ips, sizeof(ips[0]), use, nips, XKV_LOCAL_MAX,
			      "local addresses");
	return err ? err : addr_gen_next(gen_fd);
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
