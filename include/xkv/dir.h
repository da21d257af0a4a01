/* SPDX-License-Identifier: MIT */
/*
 * The coherence directory (Pegasus, OSDI'20; docs/DIRECTORY.md), defined once for its
 * XDP program (bpf/dir.bpf.c), its controller and the tests: the directory's maps and
 * its rules. The protocol's version 3 extension, which carries versions and load, is
 * the protocol's (struct xkv_dir_ext, include/xkv/proto.h).
 *
 * A request for a replicated key is steered by the directory: a READ to one server of
 * the key's replica set, a WRITE, stamped with the key's next version, to a server the
 * selection policy picks. A reply's version updates the replica set: higher than the
 * current one, the set becomes its sender alone; equal, the sender joins it.
 */
#ifndef XKV_DIR_H
#define XKV_DIR_H

#include <linux/bpf.h>
#include <linux/types.h>

#include "proto.h"

#define XKV_DIR_SERVERS	  32   /* servers behind one directory: a set is a 32-bit word */
#define XKV_DIR_KEYS	  4096 /* replicated keys at most: O(n log n) of 32 is some 160 */
#define XKV_DIR_POOL_MAX  4096 /* bytes of the server list xkv_dir_pool keeps */

/* A server: where the directory sends what it steers there (xkv_dir_servers[id]). */
struct xkv_dir_server {
	__be32 addr; /* IPv4 */
	__be16 port; /* its xkv port */
	__u16 pad;
};

/*
 * What the controller tells every server of a key (Pegasus Sec. 6.5), as the value
 * of a version 3 PUT of that key with XKV_DIR_NOTICE set: that it is replicated, that
 * it is being removed (writes that reach a server other than its home go home), or
 * that it is gone. With it, the pool and the id the receiving server has in it, so
 * that a server sends a stray request home (Sec. 6.6) without other configuration.
 */
enum xkv_dir_key_state {
	XKV_DIR_KEY_GONE,	/* not replicated (REMOVE-COMPLETE) */
	XKV_DIR_KEY_REPLICATED, /* in the directory */
	XKV_DIR_KEY_MIGRATING,	/* being removed (REMOVE-REQ) */
};

struct xkv_dir_notice {
	__u8 state;    /* enum xkv_dir_key_state */
	__u8 self;     /* the receiving server's id */
	__u8 nservers; /* servers[0 .. nservers - 1] */
	__u8 pad;      /* 0 */
	struct xkv_dir_server servers[XKV_DIR_SERVERS];
};

/*
 * A server's report of its hot keys (Pegasus Sec. 7.3), the value of its reply to a
 * version 3 GET marked XKV_DIR_REPORT: this header, then n keys, highest count first,
 * each a struct xkv_dir_report_key and its len bytes, back to back.
 */
struct xkv_dir_report {
	__be64 requests; /* requests counted in the epoch, over the workers */
	__be32 epoch_ms; /* the epoch's length */
	__be16 n;	 /* keys after it */
	__u16 pad;	 /* 0 */
};

struct xkv_dir_report_key {
	__be64 count; /* its requests in the epoch (an estimate, never under) */
	__be16 len;   /* the key's bytes, which follow */
} __attribute__((packed));

/* xkv_dir_addrs's key: a server's address, to find its id (who a client addressed). */
struct xkv_dir_addr {
	__be32 addr;
	__be16 port;
	__u16 pad; /* 0 */
};

/* xkv_dir_keys[key hash]: a replicated key (Pegasus Fig. 4, one entry a key). */
struct xkv_dir_entry {
	struct bpf_spin_lock lock; /* ver_curr and rset change together (Algorithm 2) */
	__u32 rset;		   /* servers holding ver_curr, a bit each */
	__u64 ver_curr;		   /* the newest version a server acknowledged */
	__u64 ver_next;		   /* the last version given to a WRITE; atomic */
	__u32 home;		   /* the key's home server (ketama's) */
	__u32 pad;		   /* 0 (being removed: xkv_dir_migrating) */
	__u64 reads;		   /* steered, for the controller (Sec. 7.3); atomic */
	__u64 writes;
};

/*
 * xkv_dir_pool[0]: the server list as the clients have it ("HOST:PORT[:WEIGHT][ NAME],..."),
 * id i its i-th server, which ketama's homes follow. The controller's: the program
 * never reads it.
 */
struct xkv_dir_pool {
	char servers[XKV_DIR_POOL_MAX]; /* NUL-terminated */
};

/*
 * How a READ's server is chosen from the replica set, a WRITE's from all live servers:
 * the strategies, one file each in bpf/dir_select/ behind one interface (bpf/dir_select.h),
 * registered here. X(enum suffix, file and function name, the name xkv-dir takes).
 */
#define XKV_DIR_SELECTS(X)                                                                         \
	X(ROUND_ROBIN, round_robin, "round-robin")    /* Pegasus's random, a turn per CPU */      \
	X(LEAST_LOADED, least_loaded, "least-loaded") /* the lowest load replies reported */      \
	X(PREDICT, predict, "predict")		      /* Pegasus's load prediction */             \
	X(C3, c3, "c3")				      /* C3's cubic score (NSDI'15, in Hector) */ \
	X(POPULARITY, popularity, "popularity")	      /* Hector's Popularity-Aware */

#define XKV_DIR_SELECT_ENUM(NAME, name, str) XKV_DIR_SELECT_##NAME,
enum xkv_dir_select {
	XKV_DIR_SELECTS(XKV_DIR_SELECT_ENUM) XKV_DIR_SELECT_MAX
};
#undef XKV_DIR_SELECT_ENUM

/*
 * What the directory knows of one server's load, for the strategies: what its replies
 * reported and what the directory saw. A cache line each: replies from different
 * servers, on different CPUs, do not write the same line.
 */
struct xkv_dir_telemetry {
	__u32 load;	   /* the queue it last reported (reverse telemetry, Pegasus 6.4) */
	__u32 service_ns;  /* the time per request it last reported; 0: none yet */
	__u64 queue_avg;   /* C3's q: a moving mean of load, 1/8 a reply, in 1/16ths */
	__u64 service_avg; /* C3's 1/mu: a moving mean of service_ns */
	__u64 response_avg; /* C3's R: a moving mean of request out to reply back, ns */
	__u64 outstanding;  /* C3's c: steered there and not answered, since ... */
	__u64 outstanding_since; /* ... this (ns): a lost reply counts for a second at most */
	__u64 backlog_until; /* Pegasus's prediction: when its queue drains, as sent (ns) */
	__u64 pad;
} __attribute__((aligned(64)));

/* xkv_dir_load[0]: every server's, and what Popularity-Aware counts. */
struct xkv_dir_load {
	struct xkv_dir_telemetry server[XKV_DIR_SERVERS];
	/* popularity's: every request the directory forwarded while it chose */
	__u64 requests __attribute__((aligned(64)));
};

/* A server whose time per request is not known yet counts as this (prediction, C3). */
#define XKV_DIR_SERVICE_DEFAULT_NS 1000
/* A reply later than this after its request is not timed; C3 forgets its count of ... */
#define XKV_DIR_RESPONSE_MAX_NS 1000000000ull /* ... requests unanswered this often */

/*
 * xkv_dir_choices[select * XKV_DIR_SERVERS + id], per CPU: the requests strategy select
 * sent to server id.
 */
#define XKV_DIR_CHOICES (XKV_DIR_SELECT_MAX * XKV_DIR_SERVERS)

struct xkv_dir_config {
	__u16 port;    /* xkv's UDP port on every server */
	__u8 select;   /* enum xkv_dir_select */
	__u8 nservers; /* ids 0 .. nservers - 1 in xkv_dir_servers */
	__u32 live;    /* the servers that may be chosen, a bit each */
	__u32 flags;   /* XKV_DIR_HOLD */
	/*
	 * Servers a WRITE goes to at most (Pegasus Sec. 6.4): as many as the key has had
	 * reads per write, up to this many; 0 or 1: one. More than one: the XDP program
	 * passes the write to the same interface's tc program, which sends a copy to each.
	 */
	__u8 write_max;
	__u8 pad[3];
	/*
	 * Popularity-aware: a key whose share of the requests is at least this (per
	 * million) is popular, its requests spread over its servers; any other's go to one.
	 */
	__u32 popular_ppm;
};

/*
 * Before a write passed for copies (xkv_dir_config.write_max), in the frame's metadata:
 * what the tc program (xkv_dir_fanout) needs. Written by the XDP program alone.
 */
struct xkv_dir_fanout {
	__u32 write_set; /* the servers that each get a copy */
	__u16 ip_off;	 /* where the IPv4 header starts in the frame */
	__u16 udp_off;	 /* and the UDP header */
	__u32 magic;	 /* XKV_DIR_FANOUT_MAGIC */
};

#define XKV_DIR_FANOUT_MAGIC 0x78646972 /* "xdir" */

/*
 * xkv_dir_config.flags: recovering from lost maps (Sec. 6.7), requests are dropped
 * until every key replicated before is back home with its newest value.
 */
#define XKV_DIR_HOLD 0x01

/* xkv_dir_stats: what the program did with each packet, one slot each, per CPU. */
#define XKV_DIR_STATS(X)                                                                           \
	X(PASSED, "passed")		    /* not xkv: the kernel forwards it */                  \
	X(UNREPLICATED, "unreplicated")	    /* xkv, key not in the directory: unchanged */         \
	X(READ, "read")			    /* a READ steered to its replica set */                \
	X(WRITE, "write")		    /* a WRITE stamped and steered */                      \
	X(REPLY_NEWER, "reply_newer")	    /* a reply's version reset the replica set */          \
	X(REPLY_SAME, "reply_same")	    /* its sender joined the replica set */                \
	X(REPLY_OLDER, "reply_older")	    /* an older version: the set unchanged */              \
	X(REPLY_UNKNOWN, "reply_unknown")   /* a steered reply of a key no longer held */          \
	X(REPLY_UNISSUED, "reply_unissued") /* a version never given: the set unchanged */         \
	X(MALFORMED, "malformed")	    /* an xkv header that is not one: dropped */           \
	X(NO_EXTENSION, "no_extension")	    /* a replicated key's request without it: dropped */   \
	X(UNKNOWN_TARGET, "unknown_target") /* replicated, addressed to no server of ours */       \
	X(BAD_SERVER, "bad_server")	    /* a server id or set out of range: dropped */         \
	X(NO_SERVER, "no_server")	    /* no live server to choose: dropped */                \
	X(SPLIT_WRITE, "split_write")	    /* a replicated key's WRITE in pieces: dropped */      \
	X(REPLY_NO_VERSION, "reply_no_version") /* it vouches for none (busy): set unchanged */ \
	X(HELD, "held")			    /* a request while the directory recovers: dropped */ \
	X(FANOUT, "fanout")		    /* a WRITE passed to tc, for copies to its servers */  \
	X(FANOUT_NO_ROOM, "fanout_no_room") /* ... no room for its metadata: dropped */         \
	X(FANOUT_COPY, "fanout_copy")	    /* tc: one copy of it sent to one server */            \
	X(FANOUT_NO_ROUTE, "fanout_no_route") /* tc: a server of it with no next hop: skipped */ \
	X(FORWARDED, "forwarded")	    /* a stray a server sent home: on unchanged */         \
	X(FORGED, "forged")		    /* ... from where its client is: a client's, dropped */

#define XKV_DIR_STAT_ENUM(name, str) XKV_DIR_STAT_##name,
enum xkv_dir_stat {
	XKV_DIR_STATS(XKV_DIR_STAT_ENUM) XKV_DIR_STAT_MAX
};
#undef XKV_DIR_STAT_ENUM

#ifndef __bpf__
/* A strategy's name, as xkv-dir takes and shows it; NULL past the last. */
static inline const char *xkv_dir_select_name(__u32 select)
{
#define XKV_DIR_SELECT_NAME(NAME, name, str) [XKV_DIR_SELECT_##NAME] = str,
	static const char *const names[XKV_DIR_SELECT_MAX] = {XKV_DIR_SELECTS(XKV_DIR_SELECT_NAME)};
#undef XKV_DIR_SELECT_NAME
	return select < XKV_DIR_SELECT_MAX ? names[select] : NULL;
}

/* The name tools show for a stats slot. */
static inline const char *xkv_dir_stat_name(__u32 slot)
{
#define XKV_DIR_STAT_NAME(name, str) [XKV_DIR_STAT_##name] = str,
	static const char *const names[XKV_DIR_STAT_MAX] = {XKV_DIR_STATS(XKV_DIR_STAT_NAME)};
#undef XKV_DIR_STAT_NAME
	return slot < XKV_DIR_STAT_MAX ? names[slot] : "unknown";
}
#endif

#endif /* XKV_DIR_H */
