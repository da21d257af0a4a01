// SPDX-License-Identifier: MIT
/* A server's hot keys: each worker's sketch, its published top, the report (hot.h). */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xkv/dir.h>

#include "engine/hot.h"
#include "util/seqcount.h"
#include "util/heavy.h"

/* A worker's last epoch, as published: seqcount.h's layout, seq and stamp first. */
struct hot_epoch {
	uint64_t seq, stamp;
	uint64_t requests;
	uint64_t n;
	struct xkv_heavy_key keys[XKV_HEAVY_TOP];
};

struct hot_worker {
	struct xkv_heavy *sketch; /* its worker's alone */
	uint64_t epoch_end;	  /* 0: not started */
	struct hot_epoch published __attribute__((aligned(64)));
};

struct xkv_hot {
	uint32_t nworkers;
	uint64_t epoch_ns;
	struct hot_worker worker[];
};

struct xkv_hot *xkv_hot_create(uint32_t nworkers, uint64_t epoch_ns)
{
	struct xkv_hot *hot = calloc(1, sizeof(*hot) + nworkers * sizeof(hot->worker[0]));

	if (!hot)
		return NULL;
	hot->nworkers = nworkers;
	hot->epoch_ns = epoch_ns;
	for (uint32_t i = 0; i < nworkers; i++) {
		hot->worker[i].sketch = malloc(sizeof(struct xkv_heavy));
		if (!hot->worker[i].sketch) {
			xkv_hot_destroy(hot);
			errno = ENOMEM;
			return NULL;
		}
		xkv_heavy_reset(hot->worker[i].sketch);
	}
	return hot;
}

void xkv_hot_destroy(struct xkv_hot *hot)
{
	if (!hot)
		return;
	for (uint32_t i = 0; i < hot->nworkers; i++)
		free(hot->worker[i].sketch);
	free(hot);
}

void xkv_hot_count(struct xkv_hot *hot, uint32_t worker, const void *key, uint32_t len,
		   uint64_t hash)
{
	xkv_heavy_count(hot->worker[worker].sketch, key, len, hash);
}

void xkv_hot_tick(struct xkv_hot *hot, uint32_t worker, uint64_t now_ns)
{
	struct hot_worker *w = &hot->worker[worker];
	struct hot_epoch e = {0};

	if (!w->epoch_end)
		w->epoch_end = now_ns + hot->epoch_ns;
	if (now_ns < w->epoch_end)
		return;
	e.requests = w->sketch->total;
	e.n = xkv_heavy_top(w->sketch, e.keys, XKV_HEAVY_TOP);
	xkv_counters_publish(&w->published, &e, sizeof(e), now_ns);
	xkv_heavy_reset(w->sketch);
	w->epoch_end = now_ns + hot->epoch_ns;
}

/* keys[0 .. *n) gets k, or k's count added to the entry of its hash. */
static void merge(struct xkv_heavy_key *keys, size_t *n, const struct xkv_heavy_key *k)
{
	for (size_t i = 0; i < *n; i++) {
		if (keys[i].hash == k->hash) {
			keys[i].count += k->count;
			return;
		}
	}
	keys[(*n)++] = *k;
}

size_t xkv_hot_report(const struct xkv_hot *hot, void *buf, size_t cap)
{
	struct xkv_heavy_key *keys = malloc(hot->nworkers * XKV_HEAVY_TOP * sizeof(*keys));
	struct xkv_dir_report head = {.epoch_ms = htonl((uint32_t)(hot->epoch_ns / 1000000))};
	uint64_t requests = 0;
	size_t n = 0, at = sizeof(head), kept = 0;
	uint8_t *out = buf;

	if (!keys || cap < sizeof(head)) {
		free(keys);
		return 0;
	}
	for (uint32_t i = 0; i < hot->nworkers; i++) {
		struct hot_epoch e;

		/* a worker publishing at this very moment: its epoch before, or none */
		if (xkv_counters_read(&e, &hot->worker[i].published, sizeof(e)))
			continue;
		requests += e.requests;
		for (uint64_t k = 0; k < e.n && k < XKV_HEAVY_TOP; k++)
			merge(keys, &n, &e.keys[k]);
	}
	xkv_heavy_sort(keys, n);
	for (size_t i = 0; i < n && kept < UINT16_MAX; i++) {
		struct xkv_dir_report_key k = {.count = htobe64(keys[i].count),
					       .len = htons(keys[i].len)};

		if (at + sizeof(k) + keys[i].len > cap)
			break;
		memcpy(out + at, &k, sizeof(k));
		memcpy(out + at + sizeof(k), keys[i].key, keys[i].len);
		at += sizeof(k) + keys[i].len;
		kept++;
	}
	head.requests = htobe64(requests);
	head.n = htons((uint16_t)kept);
	memcpy(out, &head, sizeof(head));
	free(keys);
	return at;
}
