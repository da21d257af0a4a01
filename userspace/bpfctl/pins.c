// SPDX-License-Identifier: MIT
/* bpfctl: the pins under bpffs: where they are, whether they exist, removing them, opening a map, loading the program they hold. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"
#include "xkv.skel.h"

int bpfctl_pin_path(char *buf, const char *ifname, const char *map_name)
{
	int n = snprintf(buf, PATH_MAX, BPFCTL_PIN_ROOT "/%s%s%s", ifname, map_name ? "/" : "",
			 map_name ? map_name : "");

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

bool bpfctl_bpffs_mounted(void)
{
	struct statfs fs;

	return !statfs(BPFCTL_BPFFS, &fs) && fs.f_type == BPF_FS_MAGIC;
}

int bpfctl_bpffs_ensure(void)
{
	int err;

	if (bpfctl_bpffs_mounted())
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

bool bpfctl_pins_exist(const char *ifname)
{
	char dir[PATH_MAX];

	return !bpfctl_pin_path(dir, ifname, NULL) && !access(dir, F_OK);
}

int bpfctl_pins_remove(const char *ifname)
{
	char dir[PATH_MAX];
	struct dirent *ent;
	int err = 0;
	DIR *d;

	err = bpfctl_pin_path(dir, ifname, NULL);
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

	fd = bpfctl_pin_path(path, ifname, map_name);
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
int bpfctl_prog_load_pinned(const char *ifname, struct xkv_bpf **skel_out)
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
		err = bpfctl_pin_path(path, ifname, bpf_map__name(map));
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
