// SPDX-License-Identifier: MIT
/* Loading the directory's program onto interfaces, its maps pinned; and taking it off. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "client/servers.h"
#include "dirctl/dirctl.h"
#include "dir.skel.h"

#define PROG_PIN "prog" /* the program's pin, beside its maps' */
/* the tc filter of the copies (xkv_dir_fanout) on each interface's ingress */
#define TC_HANDLE   0x7864
#define TC_PRIORITY 1

/* The pool's servers into the maps: ids in the list's order, every one live. */
static int write_pool(struct dir_bpf *skel, const struct xkv_dirctl_setup *setup,
		      struct xkv_dir_config *cfg)
{
	struct xkv_server_addr *s;
	struct xkv_dir_pool pool = {0};
	uint32_t n, bad, zero = 0;
	int err = xkv_servers_parse(setup->servers, cfg->port, &s, &n, &bad);

	if (err == -EINVAL)
		fprintf(stderr, "xkv-dir: server %u of the list is not HOST[:PORT[:WEIGHT]][ NAME]\n",
			bad + 1);
	if (err)
		return err;
	if (n > XKV_DIR_SERVERS || strlen(setup->servers) >= sizeof(pool.servers)) {
		fprintf(stderr, "xkv-dir: %u servers in %zu bytes: at most %u in %zu\n", n,
			strlen(setup->servers), XKV_DIR_SERVERS, sizeof(pool.servers) - 1);
		err = -E2BIG;
		goto free_list;
	}
	for (uint32_t id = 0; id < n; id++) {
		struct xkv_dir_server srv = {.port = htons((uint16_t)atoi(s[id].port))};
		struct xkv_dir_addr addr;

		if (inet_pton(AF_INET, s[id].host, &srv.addr) != 1) {
			fprintf(stderr, "xkv-dir: server %u, %s: not an IPv4 address (the directory "
					"is IPv4 only)\n", id + 1, s[id].host);
			err = -EINVAL;
			goto free_list;
		}
		addr = (struct xkv_dir_addr){.addr = srv.addr, .port = srv.port};
		if (bpf_map__update_elem(skel->maps.xkv_dir_servers, &id, sizeof(id), &srv,
					 sizeof(srv), 0) ||
		    bpf_map__update_elem(skel->maps.xkv_dir_addrs, &addr, sizeof(addr), &id,
					 sizeof(id), BPF_NOEXIST)) {
			err = -errno;
			fprintf(stderr, "xkv-dir: server %u, %s:%s: %s\n", id + 1, s[id].host,
				s[id].port, err == -EEXIST ? "listed twice" : strerror(-err));
			goto free_list;
		}
	}
	cfg->nservers = (uint8_t)n;
	cfg->live = n == 32 ? UINT32_MAX : (1u << n) - 1;
	strcpy(pool.servers, setup->servers);
	if (bpf_map__update_elem(skel->maps.xkv_dir_pool, &zero, sizeof(zero), &pool, sizeof(pool),
				 0))
		err = -errno;
free_list:
	free(s);
	return err;
}

/* Removes pin and its files (the program's and the maps' pins). */
static int unpin_all(const char *pin)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir = opendir(pin);
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin, e->d_name);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(dir);
	if (rmdir(pin) && !err)
		err = -errno;
	return err;
}

static __u32 prog_id(int fd)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The tc program that sends a WRITE's copies, on ifindex's ingress (a clsact qdisc's). */
static int tc_attach(int prog_fd, unsigned ifindex)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
			    .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIORITY,
			    .prog_fd = prog_fd);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

/* Takes ours off; the clsact qdisc stays, for whatever else uses it. */
static void tc_detach(unsigned ifindex)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
			    .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIORITY);

	bpf_tc_detach(&hook, &opts);
}

static int attach_one(const struct dir_bpf *skel, const char *ifname, bool skb)
{
	unsigned ifindex = if_nametoindex(ifname);
	__u32 flags = XDP_FLAGS_UPDATE_IF_NOEXIST | (skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	int err;

	if (!ifindex) {
		fprintf(stderr, "xkv-dir: %s: no such interface\n", ifname);
		return -ENODEV;
	}
	if (bpf_xdp_attach((int)ifindex, bpf_program__fd(skel->progs.xkv_dir), flags, NULL)) {
		err = -errno;
		fprintf(stderr, "xkv-dir: attaching to %s: %s%s\n", ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" : "");
		return err;
	}
	err = tc_attach(bpf_program__fd(skel->progs.xkv_dir_fanout), ifindex);
	if (err) {
		fprintf(stderr, "xkv-dir: attaching the copies' tc program to %s: %s\n", ifname,
			strerror(-err));
		bpf_xdp_detach((int)ifindex, flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	}
	return err;
}

/* Takes the program off ifname if it is the one pinned; 0 if nothing of ours is there. */
static int detach_one(const char *ifname, __u32 prog_id)
{
	unsigned ifindex = if_nametoindex(ifname);
	__u32 id = 0;

	if (!ifindex) {
		fprintf(stderr, "xkv-dir: %s: no such interface\n", ifname);
		return -ENODEV;
	}
	tc_detach(ifindex);
	for (__u32 mode = XDP_FLAGS_DRV_MODE; mode; mode = mode == XDP_FLAGS_DRV_MODE
								  ? XDP_FLAGS_SKB_MODE
								  : 0) {
		if (bpf_xdp_query_id((int)ifindex, (int)mode, &id) || id != prog_id)
			continue;
		if (bpf_xdp_detach((int)ifindex, mode, NULL)) {
			int err = -errno;

			fprintf(stderr, "xkv-dir: detaching from %s: %s\n", ifname, strerror(-err));
			return err;
		}
	}
	return 0;
}

int xkv_dirctl_attach(const char *pin, const struct xkv_dirctl_setup *setup,
		      char *const *ifaces, int n)
{
	struct xkv_dir_config cfg = {.port = setup->port ? setup->port : XKV_DEFAULT_PORT,
				     .select = (uint8_t)setup->select,
				     .flags = setup->hold ? XKV_DIR_HOLD : 0,
				     .write_max = setup->write_max,
				     .popular_ppm = setup->popular_ppm};
	char path[PATH_MAX];
	struct dir_bpf *skel;
	struct stat st;
	uint32_t zero = 0;
	int err, i = 0;

	if (!stat(pin, &st)) {
		fprintf(stderr, "xkv-dir: %s exists: a directory is attached (detach it first)\n",
			pin);
		return -EEXIST;
	}
	skel = dir_bpf__open_and_load();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "xkv-dir: loading the program: %s\n", strerror(-err));
		return err;
	}
	err = write_pool(skel, setup, &cfg);
	if (err)
		goto destroy_skel;
	if (bpf_map__update_elem(skel->maps.xkv_dir_config, &zero, sizeof(zero), &cfg,
				 sizeof(cfg), 0)) {
		err = -errno;
		goto destroy_skel;
	}
	if (mkdir(pin, 0700)) {
		err = -errno;
		fprintf(stderr, "xkv-dir: %s: %s (is bpffs mounted?)\n", pin, strerror(-err));
		goto destroy_skel;
	}
	snprintf(path, sizeof(path), "%s/" PROG_PIN, pin);
	err = bpf_object__pin_maps(skel->obj, pin);
	if (!err)
		err = bpf_program__pin(skel->progs.xkv_dir, path);
	if (err) {
		fprintf(stderr, "xkv-dir: pinning under %s: %s\n", pin, strerror(-err));
		goto unpin;
	}
	for (i = 0; i < n; i++) {
		err = attach_one(skel, ifaces[i], setup->skb);
		if (err)
			goto detach;
	}
	dir_bpf__destroy(skel); /* the pins and the attachments hold it */
	return 0;

detach:
	while (i--)
		detach_one(ifaces[i], prog_id(bpf_program__fd(skel->progs.xkv_dir)));
unpin:
	unpin_all(pin);
destroy_skel:
	dir_bpf__destroy(skel);
	return err;
}

int xkv_dirctl_detach(const char *pin, char *const *ifaces, int n)
{
	char path[PATH_MAX];
	int fd, err = 0;
	__u32 id;

	snprintf(path, sizeof(path), "%s/" PROG_PIN, pin);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "xkv-dir: %s: %s (no directory attached there)\n", path,
			strerror(-err));
		return err;
	}
	id = prog_id(fd);
	close(fd);
	if (!id)
		return -EINVAL;
	for (int i = 0; !err && i < n; i++)
		err = detach_one(ifaces[i], id);
	if (!err)
		err = unpin_all(pin);
	return err;
}
