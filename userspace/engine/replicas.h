/* SPDX-License-Identifier: MIT */
/*
 * The replicated keys as a server knows them (Pegasus Sec. 6.5-6.6; docs/DIRECTORY.md,
 * "The servers"): what the directory's controller told it in its notices (struct
 * xkv_dir_notice), shared by every worker. A steered request for a key in it is
 * served as the directory steered it; for any other key it is a stray (a late packet
 * of a key since removed, or a key whose hash collides with a replicated one's) and
 * goes to the key's home, the server its client addressed.
 *
 * Readers take no lock: the set is an immutable snapshot behind one pointer, replaced
 * whole by a notice and freed after a grace period of the store's RCU (liburcu QSBR,
 * whose readers the workers are). Notices come rarely, from one controller.
 */
#ifndef XKV_ENGINE_REPLICAS_H
#define XKV_ENGINE_REPLICAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xkv/dir.h>

/*
 * Keys a server holds in its set at most: a directory's, and as many again for keys
 * being added (told of before the directory takes them) and ones a lost notice left.
 */
#define XKV_REPLICAS_MAX (2 * XKV_DIR_KEYS)

struct xkv_replicas;

/* What a server does with a steered request (xkv_replicas_route). */
enum xkv_replica_route {
	XKV_REPLICA_SERVE,   /* as steered: the key is replicated, or no notice came yet */
	XKV_REPLICA_PLAIN,   /* not replicated, and this server is its home: served unsteered */
	XKV_REPLICA_FORWARD, /* not replicated here and not home: sent home, to *home */
	XKV_REPLICA_REFUSE,  /* ... and no home to send it to, or sent here already: refused */
};

/* An empty set, which no notice has reached yet; NULL without memory. */
struct xkv_replicas *xkv_replicas_create(void);
void xkv_replicas_destroy(struct xkv_replicas *r);

/*
 * Applies a notice about key (hash its xkv_hash): 0; -EINVAL for a notice that is not
 * one (its length, its state, a server id or count out of range); -ENOSPC when the set
 * holds XKV_REPLICAS_MAX keys already; -ENOMEM. The caller is an RCU reader (a worker).
 */
int xkv_replicas_notice(struct xkv_replicas *r, const void *key, uint16_t key_len,
			uint64_t hash, const void *notice, uint32_t notice_len);

/*
 * Where a steered request for key goes: write says whether it is a PUT or a DELETE,
 * target is the server its client addressed (its extension's), forwarded whether a
 * server sent it here already (it is never sent on twice). FORWARD fills *home with
 * the target's address; a stray whose target names no server, or that a server sent
 * here although this one is not its home either, is refused. A key being removed is still replicated for reads; its
 * writes go home (Sec. 6.5).
 */
enum xkv_replica_route xkv_replicas_route(const struct xkv_replicas *r, const void *key,
					  uint16_t key_len, uint64_t hash, bool write,
					  uint8_t target, bool forwarded,
					  struct xkv_dir_server *home);

#endif /* XKV_ENGINE_REPLICAS_H */
