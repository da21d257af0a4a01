/* SPDX-License-Identifier: MIT */
/*
 * Round-robin (bpf/dir_select.h): Pegasus's random choice, as a turn per CPU over the
 * set. Nothing learnt, nothing shared written: the cheapest, and as good as any when
 * the servers are alike and equally busy (Pegasus Sec. 8.5).
 */
#ifndef XKV_BPF_DIR_SELECT_ROUND_ROBIN_H
#define XKV_BPF_DIR_SELECT_ROUND_ROBIN_H

static __always_inline __u32 dir_select_round_robin(struct dir_choice *c __attribute__((unused)),
						    __u32 set)
{
	return dir_nth_of(set, dir_turn() % (__u32)__builtin_popcount(set));
}

static __always_inline __u32 dir_sent_round_robin(struct dir_choice *c __attribute__((unused)),
						  __u32 id __attribute__((unused)))
{
	return 0;
}

#endif
