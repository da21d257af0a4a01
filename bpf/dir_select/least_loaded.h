/* SPDX-License-Identifier: MIT */
/*
 * Least-loaded (bpf/dir_select.h): the server of the set whose replies last reported
 * the shortest queue, Pegasus's reverse in-network telemetry. It sees the load as it
 * was a round trip ago, so a burst may all go to one server (Pegasus Sec. 6.4). Equal
 * loads are taken in turn.
 */
#ifndef XKV_BPF_DIR_SELECT_LEAST_LOADED_H
#define XKV_BPF_DIR_SELECT_LEAST_LOADED_H

static __always_inline __u32 dir_select_least_loaded(struct dir_choice *c, __u32 set)
{
	return DIR_LEAST(set, id, c->load->server[id].load);
}

static __always_inline __u32 dir_sent_least_loaded(struct dir_choice *c __attribute__((unused)),
						  __u32 id __attribute__((unused)))
{
	return 0;
}

#endif
