/* SPDX-License-Identifier: MIT */
/*
 * A hash map from byte strings (at most XKV_KEY_MAX bytes) to pointers, for the
 * trace tools: the check's clients (address -> number) and request index
 * ((client, request id) -> the request). Chained, so removal is plain unlinking.
 */
#ifndef XKV_TRACE_TABLE_H
#define XKV_TRACE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct trace_node {
	struct trace_node *next;
	uint64_t hash; /* xkv_hash() of the key */
	void *val;     /* owned by the caller */
	uint16_t key_len;
	uint8_t key[];
};

struct trace_table {
	struct trace_node **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
};

int trace_table_init(struct trace_table *t);
/* Frees the nodes; free_val (may be NULL) is called on every value first. */
void trace_table_free(struct trace_table *t, void (*free_val)(void *val));

/* The value slot of key, or NULL when the key is absent. */
void **trace_table_find(const struct trace_table *t, const void *key, uint16_t key_len);

/*
 * The value slot of key, made (holding NULL) if absent. Returns 0 when the key was
 * there, 1 when it was added, -ENOMEM, or -EINVAL for a key over XKV_KEY_MAX bytes.
 */
int trace_table_insert(struct trace_table *t, const void *key, uint16_t key_len, void ***slot);

/* Unlinks key; *val gets its value. Returns 0, or -ENOENT when the key is absent. */
int trace_table_remove(struct trace_table *t, const void *key, uint16_t key_len, void **val);

#endif /* XKV_TRACE_TABLE_H */
