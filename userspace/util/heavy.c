// SPDX-License-Identifier: MIT
/* Heavy hitters: a count-min sketch with conservative update and its top keys (heavy.h). */
#include <stdlib.h>
#include <string.h>

#include "util/heavy.h"

#define CELL_BITS 12 /* log2(XKV_HEAVY_WIDTH) */
_Static_assert(XKV_HEAVY_WIDTH == 1u << CELL_BITS, "a row's width is 2^CELL_BITS");
_Static_assert(XKV_HEAVY_DEPTH * CELL_BITS <= 48, "the rows take the hash's bits 0-47");

/*
 * Row row's counter for hash: 12 bits of the hash of its own, so that rows are as
 * independent as the hash's bits, bits 0-47: a worker's keys share their partition
 * (bits 56-63, include/xkv/hash.h), which would crowd a row that read them.
 */
static inline uint32_t cell_of(uint64_t hash, uint32_t row)
{
	return (uint32_t)(hash >> (row * CELL_BITS)) & (XKV_HEAVY_WIDTH - 1);
}

void xkv_heavy_reset(struct xkv_heavy *h)
{
	memset(h, 0, sizeof(*h));
}

uint64_t xkv_heavy_estimate(const struct xkv_heavy *h, uint64_t hash)
{
	uint32_t least = UINT32_MAX;

	for (uint32_t row = 0; row < XKV_HEAVY_DEPTH; row++) {
		uint32_t c = h->cell[row][cell_of(hash, row)];

		if (c < least)
			least = c;
	}
	return least;
}

/* The entry of the top with the lowest count. */
static uint32_t least_of(const struct xkv_heavy *h)
{
	uint32_t least = 0;

	for (uint32_t i = 1; i < h->ntop; i++)
		if (h->top[i].count < h->top[least].count)
			least = i;
	return least;
}

/* The top's entry for hash, or -1. */
static int find(const struct xkv_heavy *h, uint64_t hash)
{
	for (uint32_t i = 0; i < h->ntop; i++)
		if (h->top[i].hash == hash)
			return (int)i;
	return -1;
}

void xkv_heavy_count(struct xkv_heavy *h, const void *key, uint32_t len, uint64_t hash)
{
	uint32_t idx[XKV_HEAVY_DEPTH], est = UINT32_MAX;
	struct xkv_heavy_key *e;
	int i;

	for (uint32_t row = 0; row < XKV_HEAVY_DEPTH; row++) {
		idx[row] = cell_of(hash, row);
		if (h->cell[row][idx[row]] < est)
			est = h->cell[row][idx[row]];
	}
	if (est == UINT32_MAX) /* saturated: an epoch of 4 billion requests for one key */
		return;
	est++;
	/* conservative update: no counter grows past the key's new estimate */
	for (uint32_t row = 0; row < XKV_HEAVY_DEPTH; row++)
		if (h->cell[row][idx[row]] < est)
			h->cell[row][idx[row]] = est;
	h->total++;
	/* too cold to report: most requests of a stream leave here, and cost 4 counters */
	if (est < h->total >> XKV_HEAVY_SHARE_SHIFT)
		return;
	/* a key in the top had an estimate at least the least's, and estimates only grow */
	if (h->ntop == XKV_HEAVY_TOP && est <= h->top[h->least].count)
		return;
	i = find(h, hash);
	if (i >= 0) {
		h->top[i].count = est;
		if ((uint32_t)i == h->least)
			h->least = least_of(h);
		return;
	}
	if (len == 0 || len > XKV_KEY_MAX)
		return;
	e = h->ntop < XKV_HEAVY_TOP ? &h->top[h->ntop++] : &h->top[h->least];
	e->hash = hash;
	e->count = est;
	e->len = (uint16_t)len;
	memcpy(e->key, key, len);
	h->least = least_of(h);
}

static int by_count_down(const void *a, const void *b)
{
	const struct xkv_heavy_key *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void xkv_heavy_sort(struct xkv_heavy_key *keys, size_t n)
{
	qsort(keys, n, sizeof(*keys), by_count_down);
}

size_t xkv_heavy_top(const struct xkv_heavy *h, struct xkv_heavy_key *out, size_t cap)
{
	struct xkv_heavy_key all[XKV_HEAVY_TOP];
	size_t n = h->ntop < cap ? h->ntop : cap;

	memcpy(all, h->top, h->ntop * sizeof(*all));
	/* a key's count stopped following it while it was too cold: its estimate now */
	for (uint32_t i = 0; i < h->ntop; i++)
		all[i].count = xkv_heavy_estimate(h, all[i].hash);
	xkv_heavy_sort(all, h->ntop);
	memcpy(out, all, n * sizeof(*out));
	return n;
}
