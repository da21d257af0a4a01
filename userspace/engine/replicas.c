// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include "engine/replicas.h"

/* A key of the set, never changed once made: snapshots share it. */
struct replica {
	uint8_t state; /* enum xkv_dir_key_state, not GONE */
	uint8_t key_len;
	uint8_t key[];
};

struct slot {
	uint64_t hash;
	const struct replica *r; /* NULL: empty */
};

/* One version of the set, never changed once published. */
struct snapshot {
	struct rcu_head rcu;
	struct replica *retire; /* the key its successor dropped: freed with it */
	uint8_t self, nservers;
	struct xkv_dir_server servers[XKV_DIR_SERVERS];
	uint32_t count, mask; /* keys held; slots - 1 (a power of two, at least twice count) */
	struct slot slots[];
};

struct xkv_replicas {
	_Atomic(struct snapshot *) now; /* NULL: no notice came yet */
	pthread_mutex_t lock;		/* one notice at a time replaces it */
};

struct xkv_replicas *xkv_replicas_create(void)
{
	struct xkv_replicas *r = calloc(1, sizeof(*r));

	if (r)
		pthread_mutex_init(&r->lock, NULL);
	return r;
}

static void snapshot_free(struct snapshot *s, bool with_keys)
{
	for (uint32_t i = 0; with_keys && i <= s->mask; i++)
		free((void *)s->slots[i].r);
	free(s->retire);
	free(s);
}

void xkv_replicas_destroy(struct xkv_replicas *r)
{
	struct snapshot *s;

	if (!r)
		return;
	s = atomic_load_explicit(&r->now, memory_order_relaxed);
	if (s) /* no reader is left; its keys are its own now */
		snapshot_free(s, true);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static bool same_key(const struct slot *e, uint64_t hash, const void *key, uint16_t key_len)
{
	return e->hash == hash && e->r->key_len == key_len && !memcmp(e->r->key, key, key_len);
}

/* The slot of key in s, or the empty one where it would go. */
static const struct slot *find(const struct snapshot *s, const void *key, uint16_t key_len,
			       uint64_t hash)
{
	for (uint32_t i = (uint32_t)hash & s->mask;; i = (i + 1) & s->mask) {
		const struct slot *e = &s->slots[i];

		if (!e->r || same_key(e, hash, key, key_len))
			return e;
	}
}

static struct snapshot *snapshot_new(uint32_t count)
{
	uint32_t slots = 16;
	struct snapshot *s;

	while (slots < 2 * count)
		slots *= 2;
	s = calloc(1, sizeof(*s) + slots * sizeof(s->slots[0]));
	if (s)
		s->mask = slots - 1;
	return s;
}

static void snapshot_put(struct snapshot *s, uint64_t hash, const struct replica *r)
{
	struct slot *e = (struct slot *)find(s, r->key, r->key_len, hash);

	s->count += !e->r;
	*e = (struct slot){.hash = hash, .r = r};
}

static void snapshot_free_rcu(struct rcu_head *head)
{
	snapshot_free(caa_container_of(head, struct snapshot, rcu), false);
}

static bool notice_valid(const struct xkv_dir_notice *n)
{
	return n->state <= XKV_DIR_KEY_MIGRATING && n->nservers &&
	       n->nservers <= XKV_DIR_SERVERS && n->self < n->nservers && !n->pad;
}

/*
 * old with key set as r says (NULL: dropped), and n's pool; NULL without memory. The
 * key old held, if any, goes to old->retire.
 */
static struct snapshot *snapshot_with(struct snapshot *old, uint64_t hash, const void *key,
				      uint16_t key_len, const struct replica *r,
				      const struct xkv_dir_notice *n)
{
	struct snapshot *s = snapshot_new((old ? old->count : 0) + 1);

	if (!s)
		return NULL;
	s->self = n->self;
	s->nservers = n->nservers;
	memcpy(s->servers, n->servers, sizeof(s->servers));
	for (uint32_t i = 0; old && i <= old->mask; i++) {
		const struct slot *o = &old->slots[i];

		if (!o->r)
			continue;
		if (same_key(o, hash, key, key_len))
			old->retire = (struct replica *)o->r;
		else
			snapshot_put(s, o->hash, o->r);
	}
	if (r)
		snapshot_put(s, hash, r);
	return s;
}

int xkv_replicas_notice(struct xkv_replicas *r, const void *key, uint16_t key_len,
			uint64_t hash, const void *notice, uint32_t notice_len)
{
	struct replica *e = NULL;
	struct xkv_dir_notice n;
	struct snapshot *old, *s;
	int err = 0;

	if (notice_len != sizeof(n) || key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return -EINVAL;
	memcpy(&n, notice, sizeof(n)); /* the value may lie unaligned in its datagram */
	if (!notice_valid(&n))
		return -EINVAL;
	if (n.state != XKV_DIR_KEY_GONE) {
		e = malloc(sizeof(*e) + key_len);
		if (!e)
			return -ENOMEM;
		e->state = n.state;
		e->key_len = (uint8_t)key_len;
		memcpy(e->key, key, key_len);
	}
	pthread_mutex_lock(&r->lock);
	old = atomic_load_explicit(&r->now, memory_order_relaxed);
	if (e && old && old->count >= XKV_REPLICAS_MAX && !find(old, key, key_len, hash)->r) {
		err = -ENOSPC;
		goto unlock;
	}
	s = snapshot_with(old, hash, key, key_len, e, &n);
	if (!s) {
		err = -ENOMEM;
		goto unlock;
	}
	e = NULL; /* the snapshot's */
	atomic_store_explicit(&r->now, s, memory_order_release);
	if (old)
		urcu_qsbr_call_rcu(&old->rcu, snapshot_free_rcu);
unlock:
	pthread_mutex_unlock(&r->lock);
	free(e);
	return err;
}

enum xkv_replica_route xkv_replicas_route(const struct xkv_replicas *r, const void *key,
					  uint16_t key_len, uint64_t hash, bool write,
					  uint8_t target, bool forwarded,
					  struct xkv_dir_server *home)
{
	const struct snapshot *s = atomic_load_explicit(&r->now, memory_order_acquire);
	const struct replica *e;
	uint8_t state;

	if (!s)
		return XKV_REPLICA_SERVE; /* no controller told it anything: as before Sec. 6.6 */
	e = find(s, key, key_len, hash)->r;
	state = e ? e->state : XKV_DIR_KEY_GONE;
	if (state == XKV_DIR_KEY_REPLICATED || (state == XKV_DIR_KEY_MIGRATING && !write))
		return XKV_REPLICA_SERVE;
	if (target == s->self) /* home: a migrating key's writes, or a key not replicated */
		return state == XKV_DIR_KEY_MIGRATING ? XKV_REPLICA_SERVE : XKV_REPLICA_PLAIN;
	if (forwarded || target >= s->nservers)
		return XKV_REPLICA_REFUSE;
	*home = s->servers[target];
	return XKV_REPLICA_FORWARD;
}
