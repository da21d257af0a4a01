/* SPDX-License-Identifier: MIT */
/*
 * Popularity-Aware (Hector, ICPP'23, Sec. 3.2; bpf/dir_select.h): a popular key's
 * requests turn over its servers, any other's always go to the same one (its home if
 * it may, else the set's first), where its item stays in cache. Its oracle is Hector's:
 * a count of the requests for each key, by its hash, and of every request the
 * directory forwards, replicated or not, both from when this strategy was chosen; a
 * key is popular when its share is at least popular_ppm per million. Only the keys the
 * directory steers are counted, in a map of their number that forgets the least
 * recently counted.
 */
#ifndef XKV_BPF_DIR_SELECT_POPULARITY_H
#define XKV_BPF_DIR_SELECT_POPULARITY_H

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XKV_DIR_KEYS);
	__type(key, __u64);   /* the key's hash */
	__type(value, __u64); /* its requests */
} xkv_dir_popularity SEC(".maps");

static __always_inline __u32 dir_select_popularity(struct dir_choice *c, __u32 set)
{
	__u64 *count = bpf_map_lookup_elem(&xkv_dir_popularity, &c->hash);
	__u64 requests = *(volatile __u64 *)&c->load->requests;

	if (count && *count * 1000000 >= (__u64)c->cfg->popular_ppm * requests)
		return dir_select_round_robin(c, set);
	return set >> c->home & 1 ? c->home : dir_nth_of(set, 0);
}

static __always_inline __u32 dir_sent_popularity(struct dir_choice *c,
						 __u32 id __attribute__((unused)))
{
	__u64 one = 1, *count = bpf_map_lookup_elem(&xkv_dir_popularity, &c->hash);

	if (count)
		__sync_fetch_and_add(count, 1);
	else /* two CPUs may each insert it first: one count is lost */
		bpf_map_update_elem(&xkv_dir_popularity, &c->hash, &one, BPF_NOEXIST);
	return 0;
}

static __always_inline void dir_seen_popularity(void)
{
	__u32 zero = 0;
	struct xkv_dir_load *load = bpf_map_lookup_elem(&xkv_dir_load, &zero);

	if (load)
		__sync_fetch_and_add(&load->requests, 1);
}

#endif
