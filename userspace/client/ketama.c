// SPDX-License-Identifier: MIT
/* twemproxy's ketama (src/hashkit/nc_ketama.c), rebuilt from its rules. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <md5.h>

#include "client/ketama.h"

#define POINTS_PER_SERVER 160 /* at weight 1 of equal weights */
#define POINTS_PER_HASH	  4   /* an md5 is 4 little-endian words: 4 points */
#define NAME_MAX_LEN	  86  /* twemproxy's KETAMA_MAX_HOSTLEN, NUL included */
_Static_assert(XKV_KETAMA_NAME_MAX + sizeof("-159") <= NAME_MAX_LEN, "NAME-i always fits");

struct xkv_ketama_point {
	uint32_t value;
	uint32_t server;
};

/* Word `which` (0..3) of the md5 of data, little-endian: twemproxy's ketama_hash. */
static uint32_t md5_word(const void *data, size_t len, unsigned which)
{
	uint8_t d[MD5_DIGEST_LENGTH];
	MD5_CTX ctx;

	MD5Init(&ctx);
	MD5Update(&ctx, data, len);
	MD5Final(d, &ctx);
	return (uint32_t)d[3 + which * 4] << 24 | (uint32_t)d[2 + which * 4] << 16 |
	       (uint32_t)d[1 + which * 4] << 8 | d[which * 4];
}

static int point_cmp(const void *a, const void *b)
{
	const struct xkv_ketama_point *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* A server's points as twemproxy counts them, float arithmetic and all. */
static uint32_t points_of(uint32_t weight, uint32_t total_weight, uint32_t n)
{
	float pct = (float)weight / (float)total_weight;

	return (uint32_t)(floorf((float)(pct * POINTS_PER_SERVER / 4 * (float)n + 0.0000000001)) *
			  4);
}

int xkv_ketama_init(struct xkv_ketama *k, const struct xkv_ketama_server *servers, uint32_t n)
{
	uint32_t total = 0, npoints = 0;

	*k = (struct xkv_ketama){0};
	if (n == 0 || n > XKV_KETAMA_SERVERS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (!servers[i].weight || !servers[i].name || !servers[i].name[0] ||
		    strlen(servers[i].name) > XKV_KETAMA_NAME_MAX)
			return -EINVAL;
		total += servers[i].weight;
	}
	for (uint32_t i = 0; i < n; i++)
		npoints += points_of(servers[i].weight, total, n);
	k->points = calloc(npoints ? npoints : 1, sizeof(*k->points));
	if (!k->points)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t hashes = points_of(servers[i].weight, total, n) / POINTS_PER_HASH;

		for (uint32_t h = 0; h < hashes; h++) {
			char name[NAME_MAX_LEN];
			int len = snprintf(name, sizeof(name), "%s-%u", servers[i].name, h);

			for (unsigned w = 0; w < POINTS_PER_HASH; w++)
				k->points[k->npoints++] = (struct xkv_ketama_point){
					.value = md5_word(name, (size_t)len, w), .server = i};
		}
	}
	qsort(k->points, k->npoints, sizeof(*k->points), point_cmp);
	return 0;
}

void xkv_ketama_fini(struct xkv_ketama *k)
{
	free(k->points);
	*k = (struct xkv_ketama){0};
}

uint32_t xkv_ketama_place(const struct xkv_ketama *k, const void *key, size_t key_len)
{
	uint32_t hash = md5_word(key, key_len, 0), left = 0, right = k->npoints;

	if (!k->npoints)
		return 0;
	while (left < right) {
		uint32_t middle = left + (right - left) / 2;

		if (k->points[middle].value < hash)
			left = middle + 1;
		else
			right = middle;
	}
	return k->points[right == k->npoints ? 0 : right].server;
}
