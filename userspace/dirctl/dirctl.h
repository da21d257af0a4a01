/* SPDX-License-Identifier: MIT */
/*
 * The coherence directory's controller (docs/DIRECTORY.md), under xkv-dir: loading its
 * XDP program (bpf/dir.bpf.c) onto the directory host's interfaces, with its maps
 * pinned so that each command, and the program, find them again; the server pool;
 * adding a key with its home alone in its replica set, and removing one through
 * Pegasus's migration (Sec. 6.5); what the maps hold.
 *
 * Functions return 0 or a negative errno, and say on stderr what failed and why.
 */
#ifndef XKV_DIRCTL_H
#define XKV_DIRCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xkv/dir.h>

#include "client/client.h"

#define XKV_DIRCTL_PIN	 "/sys/fs/bpf/xkv-dir" /* where the program and its maps are pinned */
#define XKV_DIRCTL_STATE "/var/lib/xkv-dir/keys" /* the keys replicated, outliving the maps */

/* The pinned maps of one directory, open, and the file of the keys it replicates. */
struct xkv_dirctl {
	int keys, migrating, servers, addrs, load, config, pool, stats, choices;
	const char *state;
};

/* What attach sets up. */
struct xkv_dirctl_setup {
	const char *servers; /* the pool, as the clients have it (client/servers.h) */
	uint16_t port;	     /* xkv's port on every server; 0: XKV_DEFAULT_PORT */
	enum xkv_dir_select select;
	uint32_t popular_ppm; /* popularity's threshold (xkv_dir_config.popular_ppm) */
	bool skb;	     /* generic XDP (skb mode), for a driver without it */
	bool hold;	     /* drop every request (XKV_DIR_HOLD) until xkv_dirctl_recover */
	uint8_t write_max;   /* servers a WRITE goes to at most (xkv_dir_config.write_max) */
};

/*
 * Loads the program, pins it and its maps under pin, writes the configuration and the
 * pool (every server live), and attaches it to each of the n interfaces.
 */
int xkv_dirctl_attach(const char *pin, const struct xkv_dirctl_setup *setup,
		      char *const *ifaces, int n);

/*
 * Detaches the program from each interface, and removes pin and what it holds. The
 * keys it replicated stay in the state file: the next attach recovers them.
 */
int xkv_dirctl_detach(const char *pin, char *const *ifaces, int n);

/* Opens the maps pinned under pin; state: the file of its keys. */
int xkv_dirctl_open(struct xkv_dirctl *d, const char *pin, const char *state);
void xkv_dirctl_close(struct xkv_dirctl *d);

/* The configuration, and the pool's server list. */
int xkv_dirctl_config(const struct xkv_dirctl *d, struct xkv_dir_config *cfg);
int xkv_dirctl_pool(const struct xkv_dirctl *d, struct xkv_dir_pool *pool);

/* A client that reaches each server of the pool by its id (xkv_client_steered). */
struct xkv_client *xkv_dirctl_client(const struct xkv_dirctl *d, int timeout_ms);

/*
 * Adds key: its home (ketama's, over the pool) alone in its replica set, its versions
 * one past the newest any live server holds, so that no version given later is one a
 * server already has. -EEXIST: held already; -ENOSPC: the directory is full;
 * -EHOSTUNREACH: a live server did not answer (its version unknown); -EBUSY: the
 * directory is recovering (add and remove wait for xkv_dirctl_recover). *hash: the key's.
 */
int xkv_dirctl_add(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		   size_t key_len, uint64_t *hash);

/*
 * Removes key (Sec. 6.5): its writes go home only; once every version given is
 * acknowledged (or wait_ms passed), the newest value goes from its replica set to its
 * home, with its version, and the key leaves the directory. -ENOENT: not held.
 */
int xkv_dirctl_remove(const struct xkv_dirctl *d, struct xkv_client *pool, const void *key,
		      size_t key_len, int wait_ms);

/*
 * Recovery after the maps were lost (Sec. 6.7), with the directory holding requests:
 * each key the state file lists gets the newest value any live server holds at its
 * home, with its version; then the file empties and requests pass again. *keys: keys
 * recovered; *moved: of those, values written home. Fails, holding still, if a live
 * server does not answer; -EALREADY if the directory is not holding (its file lists
 * the keys it replicates now).
 */
int xkv_dirctl_recover(const struct xkv_dirctl *d, struct xkv_client *pool, uint32_t *keys,
		       uint32_t *moved);

/* How many keys the state file lists, or -errno. */
int xkv_dirctl_state_count(const char *path);

/* A key the directory holds, as its entry says. */
struct xkv_dirctl_key {
	uint64_t hash;
	struct xkv_dir_entry entry;
	bool migrating;
};

/*
 * Calls fn for every key held (in the map's order), until fn returns non-zero, which
 * it returns.
 */
int xkv_dirctl_keys(const struct xkv_dirctl *d,
		    int (*fn)(void *ctx, const struct xkv_dirctl_key *k), void *ctx);

/* Whether the directory holds the key of this hash. */
bool xkv_dirctl_held(const struct xkv_dirctl *d, uint64_t hash);

/* The counters (XKV_DIR_STATS), summed over the CPUs, XKV_DIR_STAT_MAX of them. */
int xkv_dirctl_stats(const struct xkv_dirctl *d, uint64_t *counts);

/* Server id's address and port. */
int xkv_dirctl_server(const struct xkv_dirctl *d, uint32_t id, struct xkv_dir_server *srv);

/* A hot key the servers reported, over all of them. */
struct xkv_dirctl_hot {
	uint64_t hash;	  /* xkv_hash of the key */
	uint64_t count;	  /* its requests in the servers' last epochs, summed */
	uint32_t servers; /* how many reported it */
	uint16_t len;
	uint8_t key[XKV_KEY_MAX];
};

/*
 * Asks every live server for the hot keys of its last epoch (XKV_DIR_REPORT) and
 * merges them: up to cap into keys, hottest first, *n of them; *requests: the requests
 * the servers counted. A server that does not answer, or whose report does not parse,
 * fails it.
 */
int xkv_dirctl_hot(const struct xkv_dirctl *d, struct xkv_client *pool,
		   struct xkv_dirctl_hot *keys, size_t cap, size_t *n, uint64_t *requests);

/*
 * Adds to hot[0 .. *n) what the directory itself counted of the keys it holds, held[0 ..
 * nheld) with their reads and writes steered in the epoch (Pegasus Sec. 7.3): a key the
 * servers reported takes the larger of the two counts; one they did not joins, up to
 * cap. A held key's requests are spread over its servers, so that it may fall below
 * every server's own top, and the servers' report alone would let it go.
 */
void xkv_dirctl_merge_held(struct xkv_dirctl_hot *hot, size_t *n, size_t cap,
			   const struct xkv_dirctl_hot *held, size_t nheld);

/*
 * Of the keys hot[0 .. n), the indexes of the up to max to replicate, into chosen:
 * by their count, a key held (its hash among held[0 .. nheld)) counting double so that
 * a key on the edge is not added and removed in turn; of keys whose hashes collide,
 * the hottest alone (the directory knows a key by its hash: Pegasus Sec. 6.6). How many.
 */
size_t xkv_dirctl_choose(const struct xkv_dirctl_hot *hot, size_t n, const uint64_t *held,
			 size_t nheld, uint32_t max, size_t *chosen);

/* How many keys a pool of n live servers replicates: n ln n (Pegasus's O(n log n)), 1 at least. */
uint32_t xkv_dirctl_keys_for(uint32_t nservers);

/* What the loop of xkv_dirctl_run does, and until when. */
struct xkv_dirctl_run {
	uint32_t epoch_ms;	     /* how often it asks the servers */
	uint32_t keys;		     /* keys replicated at most; 0: xkv_dirctl_keys_for */
	int wait_ms;		     /* a removal's wait for writes in flight */
	volatile sig_atomic_t *stop; /* raised: the loop ends */
};

/*
 * Every epoch, the servers' hot keys (xkv_dirctl_hot): those xkv_dirctl_choose picks
 * added, the keys held that it did not pick removed (Sec. 6.5), each said on stdout,
 * until *stop. A failed epoch is said and the next one tried.
 */
int xkv_dirctl_run(const struct xkv_dirctl *d, struct xkv_client *pool,
		   const struct xkv_dirctl_run *o);

/* What the directory knows of each server's load (xkv_dir_telemetry). */
int xkv_dirctl_load(const struct xkv_dirctl *d, struct xkv_dir_load *load);

/*
 * The requests each strategy sent to each server, summed over the CPUs:
 * counts[select * XKV_DIR_SERVERS + id], XKV_DIR_CHOICES of them.
 */
int xkv_dirctl_choices(const struct xkv_dirctl *d, uint64_t *counts);

/* The strategy that chooses servers from now on, and popularity's threshold. */
int xkv_dirctl_select(const struct xkv_dirctl *d, enum xkv_dir_select select,
		      uint32_t popular_ppm);

#endif /* XKV_DIRCTL_H */
