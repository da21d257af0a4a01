// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/hash.h>

#include "table.h"

#define BUCKETS_MIN 64

int trace_table_init(struct trace_table *t)
{
	*t = (struct trace_table){.nbuckets = BUCKETS_MIN};
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

void trace_table_free(struct trace_table *t, void (*free_val)(void *val))
{
	for (size_t i = 0; t->buckets && i < t->nbuckets; i++) {
		struct trace_node *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			if (free_val)
				free_val(n->val);
			free(n);
		}
	}
	free(t->buckets);
	*t = (struct trace_table){0};
}

/* The link that points at key's node, or at the NULL ending its chain. */
static struct trace_node **link_of(const struct trace_table *t, uint64_t hash, const void *key,
				   uint16_t key_len)
{
	struct trace_node **link = &t->buckets[hash & (t->nbuckets - 1)];

	for (; *link; link = &(*link)->next)
		if ((*link)->hash == hash && (*link)->key_len == key_len &&
		    !memcmp((*link)->key, key, key_len))
			break;
	return link;
}

void **trace_table_find(const struct trace_table *t, const void *key, uint16_t key_len)
{
	struct trace_node *n = *link_of(t, xkv_hash(key, key_len), key, key_len);

	return n ? &n->val : NULL;
}

/* Doubles the buckets when chains would average more than one node. */
static int grow(struct trace_table *t)
{
	size_t nbuckets = t->nbuckets * 2;
	struct trace_node **buckets;

	if (t->count < t->nbuckets)
		return 0;
	buckets = calloc(nbuckets, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct trace_node *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = buckets[n->hash & (nbuckets - 1)];
			buckets[n->hash & (nbuckets - 1)] = n;
		}
	}
	free(t->buckets);
	t->buckets = buckets;
	t->nbuckets = nbuckets;
	return 0;
}

int trace_table_insert(struct trace_table *t, const void *key, uint16_t key_len, void ***slot)
{
	uint64_t hash = xkv_hash(key, key_len);
	struct trace_node **link, *n;
	int err;

	/* xkv_hash() reads at most XKV_KEY_MAX bytes: longer keys would share hashes */
	if (key_len > XKV_KEY_MAX)
		return -EINVAL;
	link = link_of(t, hash, key, key_len);
	if (*link) {
		*slot = &(*link)->val;
		return 0;
	}
	err = grow(t);
	if (err)
		return err;
	n = malloc(sizeof(*n) + key_len);
	if (!n)
		return -ENOMEM;
	*n = (struct trace_node){.hash = hash, .key_len = key_len};
	memcpy(n->key, key, key_len);
	/* grow() may have moved the chains: insert at the head of the new one */
	link = &t->buckets[hash & (t->nbuckets - 1)];
	n->next = *link;
	*link = n;
	t->count++;
	*slot = &n->val;
	return 1;
}

int trace_table_remove(struct trace_table *t, const void *key, uint16_t key_len, void **val)
{
	struct trace_node **link = link_of(t, xkv_hash(key, key_len), key, key_len), *n = *link;

	if (!n)
		return -ENOENT;
	*link = n->next;
	*val = n->val;
	free(n);
	t->count--;
	return 0;
}
