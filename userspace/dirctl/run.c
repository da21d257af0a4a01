// SPDX-License-Identifier: MIT
/*
 * The controller's loop (Pegasus Sec. 7.3): every epoch, the hot keys the servers
 * report, and the directory's own counts of the keys it holds; the hottest replicated,
 * those no longer among them removed home through the migration (Sec. 6.5). Of two keys
 * whose hashes collide, one alone (Sec. 6.6).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xkv/hash.h>

#include "dirctl/internal.h"
#include "util/clock.h"

uint32_t xkv_dirctl_keys_for(uint32_t nservers)
{
	double k = ceil(nservers * log(nservers));

	if (k < 1)
		return 1;
	return k > XKV_DIR_KEYS ? XKV_DIR_KEYS : (uint32_t)k;
}

void xkv_dirctl_merge_held(struct xkv_dirctl_hot *hot, size_t *n, size_t cap,
			   const struct xkv_dirctl_hot *held, size_t nheld)
{
	for (size_t h = 0; h < nheld; h++) {
		size_t i = 0;

		/* the key itself: a reported key that shares the hash is another one */
		while (i < *n && (hot[i].len != held[h].len ||
				  memcmp(hot[i].key, held[h].key, held[h].len)))
			i++;
		if (i < *n) {
			if (held[h].count > hot[i].count)
				hot[i].count = held[h].count;
		} else if (*n < cap) {
			hot[(*n)++] = held[h];
		}
	}
}

/* A key of the report, ranked: its count, doubled while held. */
static uint64_t rank_of(const struct xkv_dirctl_hot *k, const uint64_t *held, size_t nheld)
{
	for (size_t i = 0; i < nheld; i++)
		if (held[i] == k->hash)
			return 2 * k->count;
	return k->count;
}

struct ranked {
	uint64_t rank;
	size_t i;
};

static int by_rank_down(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->rank < y->rank ? 1 : x->rank > y->rank ? -1 : x->i > y->i ? 1 : -1;
}

size_t xkv_dirctl_choose(const struct xkv_dirctl_hot *hot, size_t n, const uint64_t *held,
			 size_t nheld, uint32_t max, size_t *chosen)
{
	struct ranked *r = calloc(n ? n : 1, sizeof(*r));
	size_t nchosen = 0;

	if (!r)
		return 0;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){.rank = rank_of(&hot[i], held, nheld), .i = i};
	qsort(r, n, sizeof(*r), by_rank_down);
	for (size_t j = 0; j < n && nchosen < max && r[j].rank; j++) {
		const struct xkv_dirctl_hot *k = &hot[r[j].i];
		bool collides = false;

		/* the directory holds a key by its hash: a colder key under the same one waits */
		for (size_t c = 0; c < nchosen; c++)
			collides |= hot[chosen[c]].hash == k->hash;
		if (collides) {
			fprintf(stderr, "xkv-dir: %.*s shares its hash with a hotter key: not "
					"replicated\n", k->len, (const char *)k->key);
			continue;
		}
		chosen[nchosen++] = r[j].i;
	}
	free(r);
	return nchosen;
}

/* The state file's keys, in the loop's hands. */
struct held {
	struct xkv_dirctl_hot key[XKV_DIR_KEYS];
	uint64_t hash[XKV_DIR_KEYS];
	size_t n;
};

static int take_held(void *ctx, const uint8_t *key, size_t len)
{
	struct held *h = ctx;

	if (h->n == XKV_DIR_KEYS)
		return -ENOSPC;
	h->key[h->n] = (struct xkv_dirctl_hot){.hash = xkv_hash(key, (uint32_t)len),
					       .len = (uint16_t)len};
	memcpy(h->key[h->n].key, key, len);
	h->hash[h->n] = h->key[h->n].hash;
	h->n++;
	return 0;
}

/* The reads and writes the directory steered for each key it holds, so far, at ns. */
struct dir_counts {
	uint64_t hash[XKV_DIR_KEYS], total[XKV_DIR_KEYS];
	size_t n;
	uint64_t ns;
};

static int take_count(void *ctx, const struct xkv_dirctl_key *k)
{
	struct dir_counts *c = ctx;

	if (c->n == XKV_DIR_KEYS)
		return -ENOSPC;
	c->hash[c->n] = k->hash;
	c->total[c->n++] = k->entry.reads + k->entry.writes;
	return 0;
}

/* hash's total in c, or 0: a key just added started its counts from 0. */
static uint64_t total_of(const struct dir_counts *c, uint64_t hash)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->hash[i] == hash)
			return c->total[i];
	return 0;
}

/* Every held key's count so far, and when. */
static int snapshot(const struct xkv_dirctl *d, struct dir_counts *c)
{
	c->n = 0;
	c->ns = xkv_now_ns();
	return xkv_dirctl_keys(d, take_count, c);
}

/*
 * Each held key's count: what the directory steered for it between the snapshots
 * last and now, scaled to one epoch, the span the servers' counts cover (an epoch's
 * removes may wait for migrations, and a failed epoch leaves two between snapshots).
 */
static void count_held(struct held *held, const struct dir_counts *now,
		       const struct dir_counts *last, uint32_t epoch_ms)
{
	uint64_t span = now->ns > last->ns ? now->ns - last->ns : 1;

	for (size_t i = 0; i < held->n; i++) {
		uint64_t total = total_of(now, held->hash[i]), before = total_of(last, held->hash[i]);
		uint64_t delta = total > before ? total - before : 0;

		held->key[i].count = (uint64_t)((double)delta * epoch_ms * 1e6 / (double)span);
	}
}

/* Sleeps ms, or less if stop is raised. */
static void nap(uint32_t ms, volatile sig_atomic_t *stop)
{
	for (uint32_t slept = 0; slept < ms && !*stop; slept += 10) {
		struct timespec t = {0, 10 * 1000000L};

		nanosleep(&t, NULL);
	}
}

/* One epoch: the servers' hot keys, then removes and adds. */
static int epoch(const struct xkv_dirctl *d, struct xkv_client *pool, const struct xkv_dirctl_run *o,
		 uint32_t max, uint32_t number, struct xkv_dirctl_hot *hot, size_t cap,
		 struct held *held, struct dir_counts *counts, size_t *chosen)
{
	uint64_t requests;
	size_t n, nchosen;
	uint32_t added = 0, removed = 0;
	/* counts[1]: the last snapshot, taken at the start or by the epoch before */
	int snapped = snapshot(d, &counts[0]), err = snapped;

	if (!err)
		err = xkv_dirctl_hot(d, pool, hot, cap - XKV_DIR_KEYS, &n, &requests);
	held->n = 0;
	if (!err)
		err = dirctl_state_each(d->state, take_held, held);
	if (!err)
		count_held(held, &counts[0], &counts[1], o->epoch_ms);
	if (!snapped)
		counts[1] = counts[0];
	if (err)
		return err;
	/* room for every held key past the servers' report */
	xkv_dirctl_merge_held(hot, &n, cap, held->key, held->n);
	nchosen = xkv_dirctl_choose(hot, n, held->hash, held->n, max, chosen);
	for (size_t i = 0; i < held->n; i++) {
		bool keep = false;

		for (size_t c = 0; c < nchosen; c++)
			keep |= hot[chosen[c]].hash == held->hash[i];
		if (keep)
			continue;
		err = xkv_dirctl_remove(d, pool, held->key[i].key, held->key[i].len, o->wait_ms);
		printf("epoch %u: %s %.*s\n", number, err ? "could not remove" : "removed",
		       held->key[i].len, (const char *)held->key[i].key);
		removed += !err;
	}
	for (size_t c = 0; c < nchosen; c++) {
		const struct xkv_dirctl_hot *k = &hot[chosen[c]];
		uint64_t hash;

		err = xkv_dirctl_add(d, pool, k->key, k->len, &hash);
		if (err == -EEXIST)
			continue;
		printf("epoch %u: %s %.*s (%llu requests of %llu)\n", number,
		       err ? "could not add" : "added", k->len, (const char *)k->key,
		       (unsigned long long)k->count, (unsigned long long)requests);
		added += !err;
	}
	printf("epoch %u: %llu requests counted, %u added, %u removed, %zu hot keys chosen\n",
	       number, (unsigned long long)requests, added, removed, nchosen);
	fflush(stdout);
	return 0;
}

int xkv_dirctl_run(const struct xkv_dirctl *d, struct xkv_client *pool,
		   const struct xkv_dirctl_run *o)
{
	/* every server's top, and the held keys none reported */
	const size_t cap = XKV_DIR_SERVERS * 32 + XKV_DIR_KEYS;
	struct xkv_dirctl_hot *hot = calloc(cap, sizeof(*hot));
	struct held *held = calloc(1, sizeof(*held));
	size_t *chosen = calloc(XKV_DIR_KEYS, sizeof(*chosen));
	struct dir_counts *counts = calloc(2, sizeof(*counts)); /* this epoch's, the last */
	struct xkv_dir_config cfg;
	uint32_t max, live;
	int err = hot && held && chosen && counts ? xkv_dirctl_config(d, &cfg) : -ENOMEM;

	if (err)
		goto out_free;
	err = snapshot(d, &counts[1]); /* the first epoch's counts start here */
	if (err)
		goto out_free;
	live = (uint32_t)__builtin_popcount(cfg.live);
	max = o->keys ? o->keys : xkv_dirctl_keys_for(live);
	printf("replicating the %u hottest keys (%s), every %u ms\n", max,
	       o->keys ? "--keys" : "n log n of the live servers", o->epoch_ms);
	fflush(stdout);
	for (uint32_t number = 1; !*o->stop; number++) {
		nap(o->epoch_ms, o->stop);
		if (*o->stop)
			break;
		err = epoch(d, pool, o, max, number, hot, cap, held, counts, chosen);
		if (err) /* a server down, a report that did not parse: the next epoch may do */
			fprintf(stderr, "xkv-dir: epoch %u: %s\n", number, strerror(-err));
	}
	err = 0;
out_free:
	free(counts);
	free(chosen);
	free(held);
	free(hot);
	return err;
}
