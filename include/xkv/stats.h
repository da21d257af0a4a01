/* SPDX-License-Identifier: MIT */
/*
 * The server's live counters, defined once for the server that writes them, the
 * tools that read them and the BPF maps (bpf/maps.bpf.h) that hold them, whose BTF
 * lets `bpftool map dump` name every field:
 *  - xkv_wstats: one struct xkv_worker_counters per worker;
 *  - xkv_sstats: one struct xkv_server_counters for what the workers share.
 * Each slot has one writer, which publishes a snapshot of its own counters every
 * XKV_PUBLISH_NS under a sequence count (odd while it writes); a reader copies the
 * slot and reads again when the count was odd or moved. Between snapshots the
 * counters stay in the writer's own memory, where counting costs nothing extra.
 */
#ifndef XKV_STATS_H
#define XKV_STATS_H

#include <linux/types.h>
#include "hash.h"
#include "maps.h"
#include "proto.h"

#define XKV_PUBLISH_NS 100000000ULL /* 100 ms between snapshots */
#define XKV_OP_SLOTS   (XKV_OP_DELETE + 1) /* by op: slot 0 unused */

/* A worker's protocol path (userspace/engine): what it was handed and answered. */
struct xkv_request_counters {
	__u64 datagrams;		  /* UDP payloads handed to the worker */
	__u64 requests[XKV_OP_SLOTS];	  /* executed, by op */
	__u64 replies[XKV_S_END];	  /* by status */
	__u64 reply_datagrams;		  /* reply datagrams sent */
	__u64 tx_dropped;		  /* replies lost: the transport had no buffer */
	__u64 dropped[XKV_R_PROTO_END];	  /* malformed, by protocol reason (slot 0 unused) */
	__u64 replies_to_server;	  /* a reply op sent to the server port: dropped */
	__u64 refused_pieces;		  /* pieces reassembly refused (answered) */
	__u64 foreign_writes;		  /* writes for a partition it does not own: refused */
	__u64 reassembly_bytes;		  /* held for values in pieces, now */
	__u64 reassembly_timeouts;	  /* values dropped unfinished */
	__u64 reassembly_evicted;	  /* ... for a source under its fair share */
	__u64 reassembly_late;		  /* pieces of values completed lately: ignored */
	/* by the size class of the value (GET hits, PUTs): Minos's control loop reads these */
	__u64 size_classes[XKV_SIZE_CLASSES];
	__u64 handoffs_sent;	/* minos: requests handed to the worker that must serve them */
	__u64 handoffs_taken;	/* minos: requests taken from other workers' hand-offs */
	__u64 handoffs_refused; /* minos: hand-offs whose queue was full: answered busy */
	__u64 large_on_small;	/* minos: large requests a worker served in a small role */
	__u64 large_keys_full;	/* minos: large values not recorded: xkv_large_keys was full */
	__u64 ewt_released;	/* dcrew: writes whose EWT slot hold it released */
	__u64 ewt_not_owner;	/* dcrew: writes that came without their slot held for it: refused */
	__u64 ewt_joined;	/* xkv: whole PUTs in pieces whose slot the worker claimed itself */
	__u64 ewt_join_busy;	/* xkv: ... whose slot stayed contended or full: answered busy */
	__u64 ewt_heals;	/* dcrew, xkv: slots frozen to give back holds never received */
	__u64 ewt_healed;	/* ... holds given back: their writes the kernel dropped */
	__u64 store_writes;	/* PUTs and DELETEs applied to the store: one per window */
	__u64 dir_applied;	/* writes a coherence directory steered, applied: newer */
	__u64 dir_stale;	/* ... not applied: a newer version was already here */
	__u64 dir_notices;	/* the directory's controller's notices applied (engine/replicas.h) */
	__u64 dir_notices_refused; /* ... refused: malformed, or the set full */
	__u64 dir_reports;	/* reports of the hot keys sent to the controller (engine/hot.h) */
	__u64 dir_forwarded;	/* steered requests for keys not replicated, sent home (Sec. 6.6) */
	__u64 dir_forward_failed; /* ... that could not be sent: dropped */
	__u64 dir_unreplicated;	/* ... at their home: served as unsteered */
	__u64 dir_strays_refused; /* ... with no home to go to: answered BAD_REQUEST */
	__u64 compact_windows;	/* compaction windows opened */
	__u64 compact_writes;	/* PUTs answered from a window: one store write per window */
	__u64 compact_window_max; /* most PUTs one window held */
	__u64 busy_ns;		/* time spent serving: rounds of polling that served something */
	__u64 round_gap_max_ns; /* the longest time between two rounds' starts */
	__u64 queue_depth;	/* steering's count of requests on the worker, now (xkv_qdepth) */
	__u64 mc_dropped;	/* memcached datagrams dropped: a bad frame, a request cut short */
	__u64 mc_errors;	/* memcached requests answered an error (ERROR, CLIENT_ERROR) */
	__u64 mc_amplify_refused; /* memcached GETs whose reply an untrusted source may not get */
	/* latency (include/xkv/latency.h), with the server's --latency on */
	__u64 lat_unstamped;	/* requests answered without an arrival stamp: not timed */
	__u64 lat_lost;		/* timed requests a histogram could not count: no chunk left */
	__u64 handoff_wait_ns;	/* requests' time between another worker handing them and this one taking them */
	__u64 compact_wait_ns;	/* PUTs' time held in compaction windows */
	__u64 ewt_wait_ns;	/* time spent joining contended EWT slots (xkv_ewt_join) */
};

/*
 * A worker's socket on one rx queue (userspace/net), or its sockets summed. The
 * AF_XDP figures are 0 on the io_uring backend and the io_uring ones on XDP.
 */
struct xkv_socket_counters {
	__u64 sockets;		    /* AF_XDP sockets open: one a worker on each queue */
	__u64 rx_packets;	    /* AF_XDP frames received */
	__u64 rx_unparsable;	    /* frames that were not a well-formed UDP datagram */
	__u64 tx_packets;	    /* frames put on the TX ring */
	__u64 tx_ring_full;	    /* replies dropped: the TX ring stayed full */
	__u64 tx_to_group;	    /* replies not sent: to or from a multicast/broadcast address */
	__u64 kicks;		    /* sendto() calls that woke the kernel's TX */
	__u64 tx_waits;		    /* 50 us sleeps of a reply waiting for a frame or TX slot */
	__u64 kernel_rx_dropped;    /* the kernel's XDP_STATISTICS: dropped before RX */
	__u64 kernel_rx_ring_full;  /* ... the RX ring was full */
	__u64 kernel_fill_empty;    /* ... the fill ring had no frame */
	__u64 kernel_tx_invalid;    /* ... TX descriptors the kernel refused */
	__u64 uring_rx_truncated;   /* io_uring: datagrams larger than a receive buffer */
	__u64 uring_tx_errors;	    /* io_uring: sends the kernel failed */
	__u64 uring_rx_dropped;	    /* io_uring: datagrams the kernel dropped, the buffer full */
};

/* memcached over TCP (userspace/server/memcached.c): what its `stats` reports, per worker. */
struct xkv_mc_counters {
	__u64 curr_connections;	   /* open now */
	__u64 total_connections;   /* served since start */
	__u64 refused_connections; /* closed at accept: outside --allow, or too many */
	__u64 idle_kicks;	   /* idle connections closed for a new one at the limit */
	__u64 ssl_handshake_errors; /* TLS: connections closed by a failed handshake */
	__u64 cmd_get;		   /* keys asked for by retrieval commands */
	__u64 get_hits;
	__u64 get_misses;
	__u64 cmd_set;		   /* storage commands: set, add, replace, append, prepend, cas */
	__u64 cmd_touch;
	__u64 cmd_flush;
	__u64 touch_hits;
	__u64 touch_misses;
	__u64 delete_hits;
	__u64 delete_misses;
	__u64 incr_hits;
	__u64 incr_misses;
	__u64 decr_hits;
	__u64 decr_misses;
	__u64 cas_hits;
	__u64 cas_misses;
	__u64 cas_badval;
};

struct xkv_worker_counters {
	__u64 seq;	    /* snapshots published, times two; odd while one is written */
	__u64 published_ns; /* CLOCK_MONOTONIC of this snapshot; 0: never published */
	struct xkv_request_counters req;
	struct xkv_socket_counters sock;  /* over every rx queue */
	__u32 nqueues;			  /* rx queues served: entries of queue[] in use */
	__u32 pad;
	struct xkv_socket_counters queue[XKV_QUEUES_MAX]; /* on each rx queue */
	struct xkv_mc_counters mc;			  /* memcached over TCP */
} __attribute__((aligned(64))); /* a cache line of its own: workers don't false-share */

/* What the workers share: published by the server's main thread. */
struct xkv_server_counters {
	__u64 seq;	    /* as in struct xkv_worker_counters */
	__u64 published_ns;
	__u64 started_ns;   /* CLOCK_MONOTONIC when the server started serving */
	__u32 workers;	    /* worker slots in use in xkv_wstats */
	__u32 pid;	    /* the server publishing here */
	char backend[8];    /* "xdp" or "uring": which socket counters apply */
	__u64 store_items;
	__u64 store_bytes_used;
	__u64 store_bytes_limit;
	__u64 store_evictions;
	__u64 store_overflow_used; /* spare buckets linked into chains */
	__u64 ewt_active_max;	   /* dcrew: most EWT slots held at once, sampled every ms */
};

/* published and read as whole 8-byte words (userspace/util/counters.c) */
_Static_assert(sizeof(struct xkv_worker_counters) % 8 == 0, "worker counters are words");
_Static_assert(sizeof(struct xkv_server_counters) % 8 == 0, "server counters are words");

#endif /* XKV_STATS_H */
