/* SPDX-License-Identifier: MIT */
/*
 * xkv-server's parts: the options, the worker threads, and the two backends
 * (transport plus steering) a server runs on. main.c owns the store, the threads
 * and the signals; a backend owns sockets, rings and BPF objects.
 */
#ifndef XKV_SERVER_H
#define XKV_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <xkv/maps.h>

#include "bpfctl/bpfctl.h"
#include "engine/worker.h"
#include "net/tls.h"

#define XKV_DROPS_CHECK_NS 100000000ULL /* how often a worker looks for the kernel's drops */

/*
 * xkv-server's exit status when the interface changed under it (its rx queue count,
 * or it was removed or recreated): what it bound at start no longer covers it, so it
 * stopped, having said why, for a supervisor to start it again. 1 is any other error,
 * 2 a bad command line.
 */
#define XKV_SERVER_EXIT_RESTART 3

struct server_opts {
	const char *iface;
	uint32_t workers;
	uint16_t port;
	uint16_t memcached_port;	/* memcached's TCP listener (and XDP's UDP steering); 0: off */
	uint32_t max_conns;		/* memcached's TCP connections at once, over the workers */
	bool memcached_port_given;	/* --memcached-port: a port taken is an error */
	size_t memory;
	enum xkv_store_mode mode;
	enum xkv_policy policy;
	bool policy_given;		/* --policy; else xkv (XDP) or crew (io_uring) */
	double minos_percentile;	/* minos: the threshold's percentile of request sizes */
	uint32_t minos_epoch_ms;	/* minos: the control loop's period */
	uint32_t hot_epoch_ms;		/* hot keys counted this long a report; 0: off */
	const struct backend *backend;
	bool skb_mode;			/* XDP backend: generic instead of driver mode */
	bool echo;			/* answer without the store (the measuring ceiling) */
	bool compaction;		/* write compaction on the workers */
	bool compaction_given;		/* --compaction; else on under xkv only */
	uint32_t compact_slo;		/* compaction: the SLO in mean service times */
	bool latency;			/* every request timed (include/xkv/latency.h) */
	const char *local_order;	/* the workers' (engine/order.h); NULL: the default */
	struct xkv_allow_key allow[XKV_ALLOW_MAX]; /* as xkv-loader attach takes */
	size_t n_allow;
	struct bpfctl_local listen; /* XDP backend: served besides the interface's addresses */
	struct xkv_validate validate;	/* the token key, random at start, and --trust */
	struct xkv_tls_opts tls;	/* memcached over TCP in TLS, with tls.cert */
	bool tls_verify_given;		/* --tls-verify; else require with --tls-ca */
};

struct server_worker {
	pthread_t thread;
	uint32_t id;
	struct xkv_worker proto;
	struct server *srv;
	uint64_t next_publish; /* when its counters are next published (counters.c) */
	struct xkv_latency lat; /* its histograms, with --latency on */
};

/* The live counter maps (include/xkv/stats.h), mmapped. */
struct server_counters {
	struct xkv_worker_counters *workers; /* xkv_wstats: slot w is worker w's alone */
	struct xkv_server_counters *server;  /* xkv_sstats: the main thread's */
	struct xkv_latency_dir *lat_dirs;     /* xkv_lat_dirs: slot w is worker w's */
	struct xkv_latency_chunk *lat_chunks; /* xkv_lat_chunks: the workers' pool */
	size_t workers_len, server_len, lat_dirs_len, lat_chunks_len;
};

struct server {
	struct server_opts o;
	struct xkv_store *store;
	struct xkv_replicas *replicas; /* what the directory's controller told of */
	struct xkv_hot *hot;	       /* the hot keys the workers count (engine/hot.h) */
	struct server_worker *workers;
	atomic_bool stopping;
	struct server_counters counters;
	struct server_minos *minos; /* minos's roles: --policy minos and xkv (control_loop.c) */
	struct server_mc *mc;	    /* memcached over TCP, unless --memcached-port 0 */
	struct xkv_ewt_slot *ewt;   /* --policy dcrew only: the backend's */
	struct xkv_holds_shared *holds; /* with ewt, where a grace period can be had */
	uint64_t holds_failed;		/* fences membarrier refused */
	uint32_t ewt_active_max;    /* dcrew: most slots held at once, as main sampled them */
	void *net; /* the backend's state */
};

struct backend {
	const char *name;
	/* Sockets and steering for every worker. Returns 0 or -errno, having said why. */
	int (*open)(struct server *s);
	/* The reply path and the queue-depth counter of worker id. */
	struct xkv_tx *(*worker_tx)(struct server *s, uint32_t id);
	_Atomic uint64_t *(*worker_depth)(struct server *s, uint32_t id);
	/* dcrew's Exclusive Writer Table, mmapped and cleared by open; NULL: none. */
	struct xkv_ewt_slot *(*ewt)(struct server *s);
	/*
	 * For holds that heal (engine/holds.h), with ewt: main, after a grace period,
	 * marks how far every RX ring is filled; a worker's rings_read(w) says whether it
	 * read its own up to the marks.
	 */
	void (*mark_rings)(struct server *s);
	bool (*rings_read)(void *w);
	/* The worker's loop, until s->stopping. */
	void (*run)(struct server *s, struct server_worker *w);
	/* Stops steering requests to the workers, before they stop: none is lost uncounted. */
	void (*unsteer)(struct server *s);
	/* A new fd for one of the maps shared with steering, e.g. "xkv_wstats", or -errno. */
	int (*map_open)(struct server *s, const char *name);
	/* Sets c->nqueues and c->queue[]: worker id's socket on each rx queue. */
	void (*worker_sockets)(struct server *s, uint32_t id, struct xkv_worker_counters *c);
	/*
	 * Called by main about once a second (or NULL): true when the interface changed so
	 * that what open bound no longer covers it, having said so on stderr; main then
	 * stops and exits XKV_SERVER_EXIT_RESTART.
	 */
	bool (*changed)(struct server *s);
	/* What only the backend has, one "name: value" per line, at shutdown. */
	void (*print_stats)(struct server *s);
	void (*close)(struct server *s);
};

extern const struct backend xkv_backend_uring;
extern const struct backend xkv_backend_xdp;

/*
 * The live counters (counters.c). open maps the backend's counter maps and zeroes
 * them (0 or -errno, said why); a worker calls tick once per batch and publishes
 * when XKV_PUBLISH_NS have passed; final, once the workers have stopped, publishes
 * every slot a last time and prints what it published, "worker W name: N" per line.
 */
int server_counters_open(struct server *s);
void server_counters_tick(struct server *s, struct server_worker *w, uint64_t now_ns);
/* With --latency on, w's requests are timed into its histograms (xkv_lat_dirs). */
void server_counters_latency(struct server *s, struct server_worker *w);
void server_counters_publish_server(struct server *s, uint64_t now_ns);
void server_counters_final(struct server *s, uint32_t workers);
void server_counters_close(struct server *s);

/*
 * Minos's control loop (control_loop.c): open maps the roles and large-keys maps,
 * writes the first roles and makes the hand-off rings (0 or -errno, said why); worker
 * puts a worker under them before it starts; start runs the control loop; close, once
 * s->stopping is set, stops it and frees everything (any time after open, also a
 * failed one).
 */
struct server_minos;
int server_minos_open(struct server *s);
void server_minos_worker(struct server *s, struct server_worker *w);
int server_minos_start(struct server *s);
void server_minos_close(struct server *s);

/*
 * memcached over TCP (memcached.c): open makes each worker's listener and, unless
 * minos made them, the hand-off rings writes travel on (0 or -errno, said why);
 * worker wires a worker to them before it starts; a worker's loop calls poll every
 * round (the completions handled: 0 when off) and sleeps on fd too (-1 when off);
 * close, once the workers have stopped, closes every connection and frees it all
 * (any time after open, also a failed one). counters adds worker w's own counters
 * to c; stats appends memcached's `STAT name value` lines for a session on worker w.
 * tick, from the main thread's loop, runs a `flush_all N` once its time has come.
 */
struct server_mc;
int server_mc_open(struct server *s);
void server_mc_worker(struct server *s, struct server_worker *w);
unsigned server_mc_poll(struct server *s, struct server_worker *w);
int server_mc_fd(const struct server *s, const struct server_worker *w);
void server_mc_counters(const struct server *s, uint32_t w, struct xkv_mc_counters *c);
void server_mc_tick(struct server *s);
void server_mc_close(struct server *s);

#endif /* XKV_SERVER_H */
