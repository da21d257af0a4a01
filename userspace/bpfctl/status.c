// SPDX-License-Identifier: MIT
/* bpfctl: what is attached where, from the pins and the kernel. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"

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

	if (!bpfctl_bpffs_mounted() || bpfctl_pin_path(dir, st->ifname, NULL))
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
	struct bpfctl_xdp_state cur = {0};
	int err;

	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	st->ifindex = if_nametoindex(ifname);
	if (st->ifindex) {
		err = bpfctl_xdp_state_get(st->ifindex, &cur);
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
	d = bpfctl_bpffs_mounted() ? opendir(BPFCTL_PIN_ROOT) : NULL;
	while (d && !err && (ent = readdir(d)))
		if (ent->d_name[0] != '.')
			err = status_add(st, max, n, ent->d_name);
	if (d)
		closedir(d);
	return err;
}
