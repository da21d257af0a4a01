/* SPDX-License-Identifier: MIT */
/*
 * Attach, detach and inspect the xkv XDP program on one interface: shared by
 * xkv-loader and the server, so both attach the same way. Functions return 0 or
 * -errno and say why through pr_warn (log.h); none exits or prints otherwise.
 *
 * The maps are pinned by name under BPFCTL_PIN_ROOT/<iface>/ and outlive the
 * process, as does the netlink attachment: a later attach finds and reuses or
 * replaces them, and detach removes both.
 */
#ifndef XKV_BPFCTL_H
#define XKV_BPFCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <sys/types.h>
#include <linux/types.h>
#include "xkv/ewt.h"
#include "xkv/maps.h"

#define BPFCTL_BPFFS	 "/sys/fs/bpf"
#define BPFCTL_PIN_ROOT	 BPFCTL_BPFFS "/xkv"
#define BPFCTL_LOCK_DIR	 "/run/xkv" /* <iface>.lock: held by the server serving it */
#define BPFCTL_PROG_NAME "xkv_xdp" /* how status recognises our program */
#define BPFCTL_MAPS_MAX	 24	   /* maps of the program, with room to grow */
#define BPFCTL_NAME_MAX	 16	   /* BPF object names, NUL included */

enum bpfctl_mode {
	BPFCTL_MODE_NONE,   /* nothing attached */
	BPFCTL_MODE_NATIVE, /* in the driver */
	BPFCTL_MODE_SKB,    /* generic, after the skb is built */
	BPFCTL_MODE_OTHER,  /* offloaded or several programs: not ours to handle */
};

/* Addresses requests may be sent to (the xkv_local map): the key and use of each. */
struct bpfctl_local {
	struct xkv_local_key keys[XKV_LOCAL_MAX];
	__u8 use[XKV_LOCAL_MAX]; /* enum xkv_local_use */
	size_t n;
};

struct bpfctl_attach_opts {
	const char *ifname;
	enum bpfctl_mode mode; /* NATIVE or SKB */
	struct xkv_config config;
	const struct xkv_allow_key *allow; /* the whole allowlist; empty drops all xkv traffic */
	size_t n_allow;
	/* served besides the interface's own addresses, which attach reads each time; or NULL */
	const struct bpfctl_local *listen;
	bool force; /* replace another XDP program */
};

struct bpfctl_status {
	char ifname[IF_NAMESIZE];
	unsigned int ifindex; /* 0: the interface is gone (stale pins) */
	__u32 prog_id;	      /* 0: no XDP program */
	char prog_name[BPFCTL_NAME_MAX];
	bool ours; /* the attached program is xkv's */
	enum bpfctl_mode mode;
	bool has_config; /* config read from the pinned map */
	struct xkv_config config;
	unsigned int n_pins;
	char pins[BPFCTL_MAPS_MAX][BPFCTL_NAME_MAX]; /* pinned map names */
};

struct bpfctl_stats {
	__u64 slots[XKV_R_END];		   /* drops per reason; XKV_STAT_PASSED: passed */
	__u64 steered[XKV_WORKERS_MAX]; /* packets redirected to each worker */
};

/* dcrew's Exclusive Writer Table (include/xkv/ewt.h) as XDP and the workers leave it. */
struct bpfctl_ewt {
	struct xkv_ewt_counters counters; /* xkv_ewt_stats, summed over CPUs */
	__u32 active;			  /* slots with writes outstanding now */
};

/* Loads, pins, configures and attaches; if xkv is already attached, updates its config. */
int bpfctl_attach(const struct bpfctl_attach_opts *opts);

/* Detaches xkv (another program only with force) and removes the pins; 0 if nothing was there. */
int bpfctl_detach(const char *ifname, bool force);

int bpfctl_status(const char *ifname, struct bpfctl_status *st);

/* Status of every interface of this network namespace with xkv attached or pinned. */
int bpfctl_status_all(struct bpfctl_status *st, size_t max, size_t *n);

int bpfctl_stats(const char *ifname, struct bpfctl_stats *stats);

/* Sums the per-CPU counters of the two stats maps. */
int bpfctl_stats_read(int stats_fd, int steered_fd, struct bpfctl_stats *stats);

int bpfctl_ewt(const char *ifname, struct bpfctl_ewt *ewt);

/* Scans the table's slots and sums its per-CPU counters. */
int bpfctl_ewt_read(int ewt_fd, int ewt_stats_fd, struct bpfctl_ewt *ewt);

/*
 * Writes the config map, checking the values first. A frame_max of 0 keeps the map's:
 * xkv-loader, which knows no socket, then leaves a running server's limit in place.
 */
int bpfctl_config_write(int config_fd, const struct xkv_config *cfg);

/*
 * Makes the allowlist map hold exactly these networks, then moves the addresses'
 * generation in gen_fd (xkv_addr_gen; -1: none, SK_REUSEPORT's), so that XDP forgets
 * the addresses it remembered as answerable.
 */
int bpfctl_allow_write(int allow_fd, int gen_fd, const struct xkv_allow_key *keys, size_t n);

/*
 * Makes the local addresses maps hold exactly these addresses: the IPs in xkv_local
 * (local_fd), the MACs and broadcast addresses in xkv_local_l2 (fast_fd); then moves the
 * addresses' generation in gen_fd (xkv_addr_gen), as bpfctl_allow_write does.
 */
int bpfctl_local_write(int local_fd, int fast_fd, int gen_fd, const struct bpfctl_local *local);

/*
 * Adds an address to local unless there: a MAC (len 6), an IPv4 (4) or IPv6 (16) address.
 * 0, or -E2BIG when it is full.
 */
int bpfctl_local_add(struct bpfctl_local *local, enum xkv_local_kind kind, const void *addr,
		     size_t len, enum xkv_local_use use);

/* Adds a unicast IPv4 or IPv6 address, "10.1.2.3" or "fd00::1", to local; or -EINVAL. */
int bpfctl_parse_local(const char *text, struct bpfctl_local *local);

/* Adds the interface's MAC, IPv4 and IPv6 addresses and IPv4 broadcast addresses to local. */
int bpfctl_local_learn(const char *ifname, struct bpfctl_local *local);

/* "10.0.0.0/8", "fd00::/8" or a plain address; IPv4 becomes IPv4-mapped. */
int bpfctl_parse_cidr(const char *text, struct xkv_allow_key *key);

/* The network of key as parse_cidr reads it, e.g. "10.0.0.0/8", into buf. 0 or -errno. */
int bpfctl_format_cidr(const struct xkv_allow_key *key, char *buf, size_t len);

/* The enum xkv_policy value of a name, or -EINVAL. */
int bpfctl_parse_policy(const char *name);

const char *bpfctl_mode_name(enum bpfctl_mode mode);

/*
 * A running server holds BPFCTL_LOCK_DIR/<iface>.lock (flock, its pid written in it)
 * for its whole life. The kernel lets go when the process ends, SIGKILL included:
 * pins and an attachment whose lock nobody holds are a dead server's; a pid alone
 * could have been reused. Takes the lock: an fd to keep open while serving, or
 * -EBUSY with *holder the running server's pid (0 if it has not written it yet),
 * or -errno.
 */
int bpfctl_server_lock(const char *ifname, pid_t *holder);

/* 0 if no server holds ifname's lock; -EBUSY with *holder if one does; or -errno. */
int bpfctl_server_running(const char *ifname, pid_t *holder);

/* Opens a pinned map of the interface by name: an fd, or -errno. */
int bpfctl_map_open(const char *ifname, const char *map_name);

/*
 * The interface's receive queues as ethtool's channels count them (rx plus combined),
 * in this network namespace (sysfs may show another's); 0 when ethtool does not say.
 */
__u32 bpfctl_rx_queues(const char *ifname);

#endif /* XKV_BPFCTL_H */
