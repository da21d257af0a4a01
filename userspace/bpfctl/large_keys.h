/* SPDX-License-Identifier: MIT */
/*
 * Minos's large keys as XDP reads them: xkv_large_keys, the keys whose values go in
 * pieces with their lengths, and in front of it xkv_large_filter, a count of recorded
 * keys per cell of the key hash (xkv_large_cell). A GET whose cell counts none is
 * small without a hash lookup, which most GETs are (most keys are never large).
 *
 * The writer of a key (its partition's, docs/DESIGN.md invariant 1) keeps both: the
 * cell counts a key before the key is in the map, and after it is gone, so XDP may
 * look a key up in vain, never miss one it could find.
 */
#ifndef XKV_BPFCTL_LARGE_KEYS_H
#define XKV_BPFCTL_LARGE_KEYS_H

#include <stdatomic.h>
#include <linux/types.h>

struct bpfctl_large_keys {
	int keys_fd;		/* xkv_large_keys */
	_Atomic __u64 *filter;	/* xkv_large_filter, mmapped: XKV_LARGE_FILTER_CELLS */
	size_t filter_len;	/* for munmap */
};

/* Opens both from their fds (the caller keeps keys_fd). Returns 0 or -errno. */
int bpfctl_large_keys_open(struct bpfctl_large_keys *k, int keys_fd, int filter_fd);
void bpfctl_large_keys_close(struct bpfctl_large_keys *k);

/* Records hash's value length, new or changed. 0, -E2BIG when the map is full, -errno. */
int bpfctl_large_key_record(struct bpfctl_large_keys *k, __u64 hash, __u32 value_len);

/* Forgets hash, if recorded. */
void bpfctl_large_key_forget(struct bpfctl_large_keys *k, __u64 hash);

/* Forgets every key: what a previous server recorded names values no longer held. */
void bpfctl_large_keys_clear(struct bpfctl_large_keys *k);

#endif /* XKV_BPFCTL_LARGE_KEYS_H */
