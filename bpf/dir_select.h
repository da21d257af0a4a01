/* SPDX-License-Identifier: MIT */
/*
 * Choosing the server a steered request goes to (docs/DIRECTORY.md, "Choosing a
 * server"): the strategies, one file each in dir_select/, behind one interface and
 * chosen at run time by xkv_dir_config.select. A strategy NAME defines
 *
 *   __u32 dir_select_NAME(struct dir_choice *c, __u32 set)
 *	one server of set (live servers, never empty): a READ's replica set, a WRITE's
 *	candidates;
 *   __u32 dir_sent_NAME(struct dir_choice *c, __u32 id)
 *	the request goes to server id: what the strategy keeps of it; returns the stamp
 *	for the request's extension (xkv_dir_ext.sent), 0 for none;
 *
 * and is registered in XKV_DIR_SELECTS (include/xkv/dir.h) and included below. One
 * that counts every request the directory forwards, steered or not, also defines
 *
 *   void dir_seen_NAME(void)
 *
 * and is listed in DIR_SEEN_BY: no other strategy's request pays for it. What every
 * steered reply tells of its server (xkv_dir_telemetry) is recorded for all of them
 * alike (dir_telemetry_reply), so that a strategy chosen later starts informed.
 *
 * Included by bpf/dir.bpf.c after its maps, which the strategies read. The entry
 * points, dir_choose and dir_seen, are global functions: the verifier checks each
 * once, on its own, rather than the strategies' loops again on every path of the
 * program that reaches them (the program would exceed its limit).
 */
#ifndef XKV_BPF_DIR_SELECT_H
#define XKV_BPF_DIR_SELECT_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xkv/dir.h"

/* A request being steered, as the strategies see it. */
struct dir_choice {
	const struct xkv_dir_config *cfg;
	struct xkv_dir_load *load; /* every server's telemetry */
	__u64 hash;		   /* its key's */
	__u32 home;		   /* its key's home */
	bool write;
	__u64 now; /* bpf_ktime_get_ns(), once a strategy asked (dir_now); 0 before */
};

/* The time of this choice: one clock read however often a strategy asks. */
static __always_inline __u64 dir_now(struct dir_choice *c)
{
	if (!c->now)
		c->now = bpf_ktime_get_ns();
	return c->now;
}

/* Each CPU's turn, for rotations: no shared line written per packet. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xkv_dir_turn SEC(".maps");

/* This CPU's next turn. */
static __always_inline __u32 dir_turn(void)
{
	__u32 zero = 0, *turn = bpf_map_lookup_elem(&xkv_dir_turn, &zero);

	return turn ? (*turn)++ : 0;
}

/* The n-th (from 0) server of set, which has more than n. */
static __always_inline __u32 dir_nth_of(__u32 set, __u32 n)
{
	for (__u32 id = 0; id < XKV_DIR_SERVERS; id++) {
		if (!(set >> id & 1))
			continue;
		if (!n--)
			return id;
	}
	return 0;
}

/*
 * The server id of set whose score (an expression of id) is least, ties taken in turn:
 * servers that look alike share the requests rather than the lowest id taking them.
 */
#define DIR_LEAST(set, id, score)                                                                  \
	({                                                                                         \
		__u32 start_ = dir_turn(), best_ = dir_nth_of(set, 0);                             \
		__u64 best_score_ = ~0ull;                                                         \
		for (__u32 i_ = 0; i_ < XKV_DIR_SERVERS; i_++) {                                   \
			__u32 id = (start_ + i_) & (XKV_DIR_SERVERS - 1);                          \
			__u64 score_;                                                              \
			if (!((set) >> id & 1))                                                    \
				continue;                                                          \
			score_ = (score);                                                          \
			if (score_ < best_score_) {                                                \
				best_ = id;                                                        \
				best_score_ = score_;                                              \
			}                                                                          \
		}                                                                                  \
		best_;                                                                             \
	})

/* A server's time per request, as it reported it or the default before it did. */
static __always_inline __u64 dir_service_ns(const struct xkv_dir_telemetry *t)
{
	return t->service_ns ? t->service_ns : XKV_DIR_SERVICE_DEFAULT_NS;
}

#include "dir_select/round_robin.h"
#include "dir_select/least_loaded.h"
#include "dir_select/predict.h"
#include "dir_select/c3.h"
#include "dir_select/popularity.h"

/* The request being steered, from the maps: false if one is missing. */
static __always_inline bool dir_choice_init(struct dir_choice *c, __u64 hash, __u32 home,
					    __u32 write)
{
	__u32 zero = 0;

	c->cfg = bpf_map_lookup_elem(&xkv_dir_config, &zero);
	c->load = bpf_map_lookup_elem(&xkv_dir_load, &zero);
	c->hash = hash;
	c->home = home & (XKV_DIR_SERVERS - 1);
	c->write = write;
	c->now = 0;
	return c->cfg && c->load;
}

/* The strategies that count every request (their dir_seen_NAME). X(ENUM SUFFIX, name) */
#define DIR_SEEN_BY(X) X(POPULARITY, popularity)

#define DIR_SEEN_BIT(NAME, name) | 1u << XKV_DIR_SELECT_##NAME
#define DIR_SEEING (0 DIR_SEEN_BY(DIR_SEEN_BIT))

/*
 * The server of set (not empty) for a request of the key of this hash and home, by
 * the configured strategy (an unknown one turns), with the strategy's record of it and
 * its count (xkv_dir_choices): the server's id, and the stamp for the request's
 * extension (0: none) in the upper 32 bits.
 */
__noinline __u64 dir_choose(__u32 set, __u64 hash, __u32 home, __u32 write)
{
	struct dir_choice c;
	__u32 id, stamp = 0, slot;
	__u64 *count;

	if (!dir_choice_init(&c, hash, home, write))
		return dir_nth_of(set, 0);
	switch (c.cfg->select) {
#define DIR_SELECT_CASE(NAME, name, str)                                                           \
	case XKV_DIR_SELECT_##NAME:                                                                \
		id = dir_select_##name(&c, set);                                                   \
		break;
		XKV_DIR_SELECTS(DIR_SELECT_CASE)
#undef DIR_SELECT_CASE
	default:
		id = dir_select_round_robin(&c, set);
	}
	id &= XKV_DIR_SERVERS - 1;
	slot = (__u32)c.cfg->select * XKV_DIR_SERVERS + id;
	count = bpf_map_lookup_elem(&xkv_dir_choices, &slot);
	if (count)
		*count += 1; /* per-CPU slot: no other writer */
	switch (c.cfg->select) {
#define DIR_SENT_CASE(NAME, name, str)                                                             \
	case XKV_DIR_SELECT_##NAME:                                                                \
		stamp = dir_sent_##name(&c, id);                                                   \
		break;
		XKV_DIR_SELECTS(DIR_SENT_CASE)
#undef DIR_SENT_CASE
	}
	return (__u64)stamp << 32 | id;
}

/* A request the directory forwards, steered or not, for the strategy that counts it. */
__noinline int dir_seen(__u32 select)
{
	switch (select) {
#define DIR_SEEN_CASE(NAME, name)                                                                  \
	case XKV_DIR_SELECT_##NAME:                                                                \
		dir_seen_##name();                                                                 \
		break;
		DIR_SEEN_BY(DIR_SEEN_CASE)
#undef DIR_SEEN_CASE
	}
	return 0;
}

/* A moving mean, 1/8 a sample; the first sample (or one after a mean of 0) starts it. */
static __always_inline void dir_ewma(__u64 *avg, __u64 sample)
{
	*avg = *avg ? *avg - (*avg >> 3) + (sample >> 3) : sample;
}

/*
 * What a steered reply from server t tells: its queue and time per request (reverse
 * telemetry), and, when its request was stamped, how long it took there and back.
 * Plain stores: two replies racing lose a sample, which a mean does not miss.
 */
static __always_inline void dir_telemetry_reply(struct xkv_dir_telemetry *t,
						const struct xkv_dir_ext *ext)
{
	__u32 sent = bpf_ntohl(ext->sent), service = bpf_ntohs(ext->service);

	t->load = bpf_ntohl(ext->load);
	dir_ewma(&t->queue_avg, (__u64)t->load << 4);
	if (service) {
		t->service_ns = service * XKV_DIR_SERVICE_UNIT;
		dir_ewma(&t->service_avg, t->service_ns);
	}
	if (sent) {
		__u32 took = (__u32)bpf_ktime_get_ns() - sent; /* both mod 2^32 */

		if (took < XKV_DIR_RESPONSE_MAX_NS)
			dir_ewma(&t->response_avg, took);
	}
	if (t->outstanding)
		__sync_fetch_and_sub(&t->outstanding, 1);
}

#endif /* XKV_BPF_DIR_SELECT_H */
