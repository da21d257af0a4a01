/* SPDX-License-Identifier: MIT */
/*
 * Every map of the XDP program, declared once. Key and value types come from
 * include/xkv/maps.h so that userspace reads the same layout; names stay within
 * 15 characters because bpfctl pins each map by name under
 * /sys/fs/bpf/xkv/<iface>/.
 */
#ifndef XKV_MAPS_BPF_H
#define XKV_MAPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xkv/ewt.h"
#include "xkv/latency.h"
#include "xkv/maps.h"
#include "xkv/roles.h"
#include "xkv/stats.h"

/* Port, worker count and policy: written by bpfctl (attach), read per packet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_config);
} xkv_config SEC(".maps");

/* Packets dropped per reason, slot XKV_STAT_PASSED for passed: written by XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XKV_R_END);
	__type(key, __u32);
	__type(value, __u64);
} xkv_stats SEC(".maps");

/* Packets redirected to each worker: written by XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XKV_WORKERS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xkv_steered SEC(".maps");

/* Each CPU's random state for steering's choices: written by XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} xkv_rng SEC(".maps");

/* Outstanding requests per worker: XDP adds on steer, workers (mmapped) subtract. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_WORKERS_MAX);
	__type(key, __u32);
	__type(value, struct xkv_qdepth);
} xkv_qdepth SEC(".maps");

/*
 * Minos's roles (include/xkv/roles.h): written by the server's control loop
 * (mmapped), alternately in each slot; XDP steers by the one with the higher gen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_ROLES_SLOTS);
	__type(key, __u32);
	__type(value, struct xkv_roles);
} xkv_roles SEC(".maps");

/*
 * Keys whose values travel in pieces, by key hash, with their value's length:
 * written by the worker that owns the key when it stores, replaces or deletes
 * one, so that minos steers a GET for a large value straight to a large worker.
 * Full, a key is not recorded and its GETs take the hand-off (docs/DESIGN.md).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XKV_LARGE_KEYS_MAX);
	__type(key, __u64);
	__type(value, __u32);
} xkv_large_keys SEC(".maps");

/*
 * In front of xkv_large_keys: how many recorded keys each cell of the key hash holds
 * (xkv_large_cell), kept with it (userspace/bpfctl/large_keys.h). A GET whose cell
 * holds none is small without a lookup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_LARGE_FILTER_CELLS);
	__type(key, __u32);
	__type(value, __u64); /* an array's values are 8 bytes apart when mmapped */
} xkv_large_filter SEC(".maps");

/*
 * dcrew's Exclusive Writer Table (include/xkv/ewt.h): XDP takes or joins a slot per
 * write it steers, the owning worker (mmapped) releases it; both by CAS.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_EWT_SLOTS);
	__type(key, __u32);
	__type(value, struct xkv_ewt_slot);
} xkv_ewt SEC(".maps");

/* What steering did with dcrew's writes, per CPU: written by XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_ewt_counters);
} xkv_ewt_stats SEC(".maps");

/* Client networks allowed to send requests: written by bpfctl (attach --allow). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XKV_ALLOW_MAX);
	__type(key, struct xkv_allow_key);
	__type(value, __u8);
} xkv_allow SEC(".maps");

/*
 * The generation of the allowlist and the local addresses (xkv_local, xkv_local_l2):
 * bpfctl adds one (mmapped, atomically) after each change to either.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} xkv_addr_gen SEC(".maps");

/* Per CPU, addresses found answerable, by a hash of them (xkv_check_addresses). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XKV_ADDR_CACHE);
	__type(key, __u32);
	__type(value, struct xkv_addr_cached);
} xkv_addr_cache SEC(".maps");

/*
 * The interface's own IP addresses: written by bpfctl (attach, from the interface and
 * --listen). Only requests to them are served.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XKV_LOCAL_MAX);
	__type(key, struct xkv_local_key);
	__type(value, __u8);
} xkv_local SEC(".maps");

/* The interface's MACs and IPv4 broadcast addresses (xkv_local_fast): written by bpfctl. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_local_fast);
} xkv_local_l2 SEC(".maps");

/* AF_XDP socket of each (rx queue, worker): written by the server's workers. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XKV_XSKS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xkv_xsks SEC(".maps");

/*
 * The server's live counters (include/xkv/stats.h): no program touches them; they
 * live here to be pinned beside the others, with BTF, for xkv-loader and bpftool.
 * Each worker publishes into its own slot (mmapped).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_WORKERS_MAX);
	__type(key, __u32);
	__type(value, struct xkv_worker_counters);
} xkv_wstats SEC(".maps");

/* The store and the server as a whole: published by the server's main thread (mmapped). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_server_counters);
} xkv_sstats SEC(".maps");

/*
 * Every request's time in the server (include/xkv/latency.h), like the counters
 * above only the server's: each worker's directory of histograms, and the chunks of
 * buckets they take on first use (about 1 MB and 4 MB).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_WORKERS_MAX);
	__type(key, __u32);
	__type(value, struct xkv_latency_dir);
} xkv_lat_dirs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XKV_LAT_CHUNKS);
	__type(key, __u32);
	__type(value, struct xkv_latency_chunk);
} xkv_lat_chunks SEC(".maps");

#endif /* XKV_MAPS_BPF_H */
