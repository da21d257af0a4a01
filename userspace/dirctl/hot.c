// SPDX-License-Identifier: MIT
/*
 * The hot keys the servers report (Pegasus Sec. 7.3; struct xkv_dir_report): each
 * live server asked, its report checked, the keys merged over the servers by their
 * bytes, hottest first.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <xkv/hash.h>

#include "dirctl/internal.h"

#define REPORT_KEY "xkv-dir:report" /* any key: the report is not a key's */

/* keys[0 .. *n) gets the key, or its count added to the entry of the same bytes. */
static void merge(struct xkv_dirctl_hot *keys, size_t cap, size_t *n, const uint8_t *key,
		  uint16_t len, uint64_t count)
{
	uint64_t hash = xkv_hash(key, len);

	for (size_t i = 0; i < *n; i++) {
		if (keys[i].hash == hash && keys[i].len == len && !memcmp(keys[i].key, key, len)) {
			keys[i].count += count;
			keys[i].servers++;
			return;
		}
	}
	if (*n == cap)
		return;
	keys[*n] = (struct xkv_dirctl_hot){.hash = hash, .count = count, .len = len, .servers = 1};
	memcpy(keys[*n].key, key, len);
	(*n)++;
}

/* Server id's report, value[0 .. len), merged into keys: 0, or -EPROTO if it does not parse. */
static int take_report(uint32_t id, const uint8_t *value, uint32_t len,
		       struct xkv_dirctl_hot *keys, size_t cap, size_t *n, uint64_t *requests)
{
	struct xkv_dir_report head;
	size_t at = sizeof(head);

	if (len < sizeof(head))
		goto malformed;
	memcpy(&head, value, sizeof(head));
	for (uint16_t i = 0; i < ntohs(head.n); i++) {
		struct xkv_dir_report_key k;

		if (at + sizeof(k) > len)
			goto malformed;
		memcpy(&k, value + at, sizeof(k));
		at += sizeof(k);
		if (!ntohs(k.len) || ntohs(k.len) > XKV_KEY_MAX || at + ntohs(k.len) > len)
			goto malformed;
		merge(keys, cap, n, value + at, ntohs(k.len), be64toh(k.count));
		at += ntohs(k.len);
	}
	if (at != len)
		goto malformed;
	*requests += be64toh(head.requests);
	return 0;
malformed:
	fprintf(stderr, "xkv-dir: server %u's report of its hot keys does not parse\n", id);
	return -EPROTO;
}

static int by_count_down(const void *a, const void *b)
{
	const struct xkv_dirctl_hot *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

int xkv_dirctl_hot(const struct xkv_dirctl *d, struct xkv_client *pool,
		   struct xkv_dirctl_hot *keys, size_t cap, size_t *n, uint64_t *requests)
{
	struct xkv_dir_config cfg;
	int err = xkv_dirctl_config(d, &cfg);

	*n = 0;
	*requests = 0;
	for (uint32_t id = 0; !err && id < cfg.nservers; id++) {
		struct xkv_client_steer s = {.server = id, .ext = {.dflags = XKV_DIR_REPORT}};
		void *value = NULL;
		uint32_t len = 0;

		if (!(cfg.live >> id & 1))
			continue;
		err = xkv_client_steered(pool, XKV_OP_GET, REPORT_KEY, strlen(REPORT_KEY), NULL, 0,
					 &s, &value, &len);
		if (err)
			fprintf(stderr, "xkv-dir: asking server %u for its hot keys: %s\n", id,
				strerror(-err));
		else
			err = take_report(id, value, len, keys, cap, n, requests);
		free(value);
	}
	qsort(keys, *n, sizeof(*keys), by_count_down);
	return err;
}
