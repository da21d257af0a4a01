// SPDX-License-Identifier: MIT
/*
 * The controller asks the servers as the directory would steer it: version 3 with
 * XKV_DIR_STEERED set, so that a server vouches for the version it holds and applies
 * a write by its version.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "dirctl/internal.h"

/* The extension of a request the directory would steer to server id for hash. */
static struct xkv_client_steer steer_to(uint32_t id, uint64_t hash, uint64_t ver)
{
	return (struct xkv_client_steer){
		.server = id,
		.ext = {.key_hash = xkv_be64(hash), .ver = xkv_be64(ver), .target = (uint8_t)id,
			.dflags = XKV_DIR_STEERED},
	};
}

int dirctl_read(struct xkv_client *pool, uint32_t id, const void *key, size_t key_len,
		uint64_t hash, uint64_t *ver, void **value, uint32_t *value_len)
{
	struct xkv_client_steer s = steer_to(id, hash, 0);
	int err = xkv_client_steered(pool, XKV_OP_GET, key, key_len, NULL, 0, &s, value,
				     value_len);

	if (err && err != -ENOENT) {
		fprintf(stderr, "xkv-dir: server %u: %s\n", id, strerror(-err));
		return err;
	}
	if (!(s.reply.dflags & XKV_DIR_STEERED) || (s.reply.dflags & XKV_DIR_NO_VERSION)) {
		fprintf(stderr, "xkv-dir: server %u vouches for no version: does it speak "
				"version 3?\n", id);
		if (!err && value)
			free(*value);
		return -EPROTO;
	}
	*ver = xkv_be64(s.reply.ver);
	return err;
}

int dirctl_write_home(struct xkv_client *pool, uint32_t home, const void *key, size_t key_len,
		      uint64_t hash, uint64_t ver, const void *value, uint32_t value_len,
		      bool absent)
{
	struct xkv_client_steer s = steer_to(home, hash, ver);
	int err = xkv_client_steered(pool, absent ? XKV_OP_DELETE : XKV_OP_PUT, key, key_len,
				     value, value_len, &s, NULL, NULL);

	if (err == -ENOENT) /* a DELETE that found nothing: home holds nothing either */
		err = 0;
	if (err)
		fprintf(stderr, "xkv-dir: writing the newest value home to server %u: %s\n", home,
			strerror(-err));
	return err;
}

int dirctl_notify(const struct xkv_dirctl *d, struct xkv_client *pool,
		  const struct xkv_dir_config *cfg, const void *key, size_t key_len,
		  enum xkv_dir_key_state state)
{
	struct xkv_dir_notice n = {.state = (uint8_t)state, .nservers = cfg->nservers};
	int err = 0;

	for (uint32_t id = 0; id < cfg->nservers; id++) {
		if (bpf_map_lookup_elem(d->servers, &id, &n.servers[id]))
			return -errno;
	}
	for (uint32_t id = 0; id < cfg->nservers; id++) {
		struct xkv_client_steer s = {.server = id, .ext = {.dflags = XKV_DIR_NOTICE}};
		int sent;

		if (!(cfg->live >> id & 1))
			continue;
		n.self = (uint8_t)id;
		sent = xkv_client_steered(pool, XKV_OP_PUT, key, key_len, &n, sizeof(n), &s, NULL,
					  NULL);
		if (sent) {
			fprintf(stderr, "xkv-dir: telling server %u of a key: %s\n", id,
				strerror(-sent));
			err = err ? err : sent;
		}
	}
	return err;
}
