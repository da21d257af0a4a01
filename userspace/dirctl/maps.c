// SPDX-License-Identifier: MIT
/* The directory's pinned maps: opened by name, read for status, stats and the pool. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dirctl/internal.h"

static int open_map(const char *pin, const char *name, int *fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", pin, name);
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		int err = -errno;

		fprintf(stderr, "xkv-dir: %s: %s%s\n", path, strerror(-err),
			err == -ENOENT ? " (no directory attached: xkv-dir attach)" : "");
		return err;
	}
	return 0;
}

int xkv_dirctl_open(struct xkv_dirctl *d, const char *pin, const char *state)
{
	int err;

	*d = (struct xkv_dirctl){-1, -1, -1, -1, -1, -1, -1, -1, -1, state};
	if ((err = open_map(pin, "xkv_dir_keys", &d->keys)) ||
	    (err = open_map(pin, "xkv_dir_migrating", &d->migrating)) ||
	    (err = open_map(pin, "xkv_dir_servers", &d->servers)) ||
	    (err = open_map(pin, "xkv_dir_addrs", &d->addrs)) ||
	    (err = open_map(pin, "xkv_dir_load", &d->load)) ||
	    (err = open_map(pin, "xkv_dir_config", &d->config)) ||
	    (err = open_map(pin, "xkv_dir_pool", &d->pool)) ||
	    (err = open_map(pin, "xkv_dir_stats", &d->stats)) ||
	    (err = open_map(pin, "xkv_dir_choices", &d->choices)))
		xkv_dirctl_close(d);
	return err;
}

void xkv_dirctl_close(struct xkv_dirctl *d)
{
	int *fds[] = {&d->keys,	  &d->migrating, &d->servers, &d->addrs,  &d->load,
		      &d->config, &d->pool,	 &d->stats,   &d->choices};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* The one value of an array map of one entry. */
static int lookup_zero(int fd, void *value)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(fd, &zero, value) ? -errno : 0;
}

int xkv_dirctl_config(const struct xkv_dirctl *d, struct xkv_dir_config *cfg)
{
	return lookup_zero(d->config, cfg);
}

int dirctl_config_set(const struct xkv_dirctl *d, const struct xkv_dir_config *cfg)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(d->config, &zero, cfg, 0) ? -errno : 0;
}

int xkv_dirctl_select(const struct xkv_dirctl *d, enum xkv_dir_select select,
		      uint32_t popular_ppm)
{
	struct xkv_dir_config cfg;
	int err = xkv_dirctl_config(d, &cfg);

	if (err)
		return err;
	if (select >= XKV_DIR_SELECT_MAX)
		return -EINVAL;
	cfg.select = (uint8_t)select;
	cfg.popular_ppm = popular_ppm;
	return dirctl_config_set(d, &cfg);
}

int xkv_dirctl_pool(const struct xkv_dirctl *d, struct xkv_dir_pool *pool)
{
	int err = lookup_zero(d->pool, pool);

	pool->servers[sizeof(pool->servers) - 1] = '\0';
	return err;
}

int xkv_dirctl_server(const struct xkv_dirctl *d, uint32_t id, struct xkv_dir_server *srv)
{
	return bpf_map_lookup_elem(d->servers, &id, srv) ? -errno : 0;
}

int xkv_dirctl_load(const struct xkv_dirctl *d, struct xkv_dir_load *load)
{
	return lookup_zero(d->load, load);
}

struct xkv_client *xkv_dirctl_client(const struct xkv_dirctl *d, int timeout_ms)
{
	struct xkv_client_opts opts = {.timeout_ms = timeout_ms};
	struct xkv_dir_pool pool;
	struct xkv_client *c;
	int err = xkv_dirctl_pool(d, &pool);

	if (err) {
		errno = -err;
		return NULL;
	}
	c = xkv_client_open(pool.servers, &opts);
	if (!c)
		fprintf(stderr, "xkv-dir: reaching the pool %s: %s\n", pool.servers,
			strerror(errno));
	return c;
}

bool xkv_dirctl_held(const struct xkv_dirctl *d, uint64_t hash)
{
	struct xkv_dir_entry e;

	return !bpf_map_lookup_elem(d->keys, &hash, &e);
}

int xkv_dirctl_keys(const struct xkv_dirctl *d,
		    int (*fn)(void *ctx, const struct xkv_dirctl_key *k), void *ctx)
{
	struct xkv_dirctl_key k;
	uint64_t *prev = NULL;
	uint32_t mark;
	int ret;

	while (!bpf_map_get_next_key(d->keys, prev, &k.hash)) {
		prev = &k.hash;
		/* gone since: the next key still follows from it */
		if (bpf_map_lookup_elem_flags(d->keys, &k.hash, &k.entry, BPF_F_LOCK))
			continue;
		k.migrating = !bpf_map_lookup_elem(d->migrating, &k.hash, &mark);
		ret = fn(ctx, &k);
		if (ret)
			return ret;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* counts[0 .. n - 1]: slots 0 .. n - 1 of the per-CPU array fd, summed over the CPUs. */
static int sum_per_cpu(int fd, uint32_t n, uint64_t *counts)
{
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus < 0)
		return ncpus;
	uint64_t per_cpu[ncpus];

	for (uint32_t slot = 0; slot < n; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, per_cpu))
			return -errno;
		counts[slot] = 0;
		for (int c = 0; c < ncpus; c++)
			counts[slot] += per_cpu[c];
	}
	return 0;
}

int xkv_dirctl_stats(const struct xkv_dirctl *d, uint64_t *counts)
{
	return sum_per_cpu(d->stats, XKV_DIR_STAT_MAX, counts);
}

int xkv_dirctl_choices(const struct xkv_dirctl *d, uint64_t *counts)
{
	return sum_per_cpu(d->choices, XKV_DIR_CHOICES, counts);
}
