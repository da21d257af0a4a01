// SPDX-License-Identifier: MIT
/* bpfctl: attaching the program to an interface, updating it in place, detaching it. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"
#include "xkv.skel.h"

int bpfctl_parse_policy(const char *name)
{
	for (int p = 0; p < XKV_POLICY_END; p++)
		if (!strcmp(name, xkv_policy_name(p)))
			return p;
	pr_warn("unknown policy '%s'\n", name);
	return -EINVAL;
}

static __u32 mode_flags(enum bpfctl_mode mode)
{
	return mode == BPFCTL_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

/* The interface's addresses as they are now, and --listen's, into the map. */
static int local_update(const struct bpfctl_attach_opts *opts, int local_fd, int fast_fd,
			int gen_fd)
{
	struct bpfctl_local *local = calloc(1, sizeof(*local));
	int err;

	if (!local)
		return -ENOMEM;
	if (opts->listen)
		*local = *opts->listen;
	err = bpfctl_local_learn(opts->ifname, local);
	if (!err)
		err = bpfctl_local_write(local_fd, fast_fd, gen_fd, local);
	free(local);
	return err;
}

/* Attached already: only the config, the allowlist and the local addresses change. */
static int attach_update(const struct bpfctl_attach_opts *opts, const struct bpfctl_xdp_state *cur)
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
	gen_fd = bpfctl_map_open(opts->ifname, "xkv_addr_gen");
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
		err = local_update(opts, local_fd, fast_fd, gen_fd);
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
/*
 * The program attached, pinned beside its maps: so that without CAP_SYS_ADMIN, which
 * opening a program by its id takes, it is still found to be detached or replaced.
 */
static int prog_pin(const char *ifname, struct bpf_program *prog)
{
	char path[PATH_MAX];
	int err = bpfctl_pin_path(path, ifname, BPFCTL_PROG_NAME);

	if (err)
		return err;
	unlink(path); /* a program this one replaced */
	err = bpf_program__pin(prog, path);
	if (err)
		pr_warn("pin the XDP program at %s: %s\n", path, strerror(-err));
	return err;
}

static int attach_prog(const struct bpfctl_attach_opts *opts, unsigned int ifindex,
		       const struct bpfctl_xdp_state *cur, int prog_fd)
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
		old_fd = bpfctl_xdp_prog_open(ifindex, cur->prog_id);
		if (old_fd < 0) {
			pr_warn("open XDP program id %u: %s\n", cur->prog_id, strerror(-old_fd));
			return old_fd;
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
	struct bpfctl_xdp_state cur;
	struct xkv_bpf *skel;
	unsigned int ifindex;
	int err;

	err = bpfctl_iface_index(opts->ifname, &ifindex);
	if (!err)
		err = bpfctl_iface_check_up(opts->ifname);
	if (!err)
		err = bpfctl_bpffs_ensure();
	if (!err)
		err = bpfctl_xdp_state_get(ifindex, &cur);
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
	if (cur.ours && cur.mode == opts->mode && bpfctl_pins_exist(opts->ifname))
		return attach_update(opts, &cur);
	/* pins without our program are left by a killed process: start afresh */
	if (!cur.ours && bpfctl_pins_exist(opts->ifname)) {
		pr_info("removing stale pins under %s/%s\n", BPFCTL_PIN_ROOT, opts->ifname);
		err = bpfctl_pins_remove(opts->ifname);
		if (err)
			return err;
	}

	err = bpfctl_prog_load_pinned(opts->ifname, &skel);
	if (err)
		return err;
	/* configured before attaching, so no packet meets an empty config */
	err = bpfctl_config_write(bpf_map__fd(skel->maps.xkv_config), &opts->config);
	if (!err)
		err = bpfctl_allow_write(bpf_map__fd(skel->maps.xkv_allow),
					 bpf_map__fd(skel->maps.xkv_addr_gen), opts->allow,
					 opts->n_allow);
	if (!err)
		err = local_update(opts, bpf_map__fd(skel->maps.xkv_local),
				   bpf_map__fd(skel->maps.xkv_local_l2),
				   bpf_map__fd(skel->maps.xkv_addr_gen));
	if (!err)
		err = attach_prog(opts, ifindex, &cur, bpf_program__fd(skel->progs.xkv_xdp));
	if (!err)
		err = prog_pin(opts->ifname, skel->progs.xkv_xdp);
	if (!err)
		pr_info("attached xkv to %s in %s mode, maps pinned under %s/%s\n", opts->ifname,
			bpfctl_mode_name(opts->mode), BPFCTL_PIN_ROOT, opts->ifname);
	else if (!cur.ours)
		bpfctl_pins_remove(opts->ifname); /* ours were made just now, for nothing */
	xkv_bpf__destroy(skel);
	return err;
}

int bpfctl_detach(const char *ifname, bool force)
{
	unsigned int ifindex = if_nametoindex(ifname);
	bool pinned = bpfctl_bpffs_mounted() && bpfctl_pins_exist(ifname);
	struct bpfctl_xdp_state cur = {0};
	int err;

	if (!ifindex && !pinned) {
		pr_warn("no such interface: %s\n", ifname);
		return -ENODEV;
	}
	if (ifindex) {
		err = bpfctl_xdp_state_get(ifindex, &cur);
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
		err = bpfctl_pins_remove(ifname);
		if (err)
			return err;
		pr_info("removed the pins under %s/%s\n", BPFCTL_PIN_ROOT, ifname);
	}
	if (!cur.prog_id && !pinned)
		pr_info("nothing attached to %s\n", ifname);
	return 0;
}
