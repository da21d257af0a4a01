/* SPDX-License-Identifier: MIT */
/*
 * The coherence directory's program (bpf/dir.bpf.c) loaded for BPF_PROG_RUN, as the
 * tests and bench-xdp use it: DIR_SERVERS servers, id i at 10.0.1.(i + 1), port
 * PKT_PORT, all live; packet.h's client, 10.0.0.1, sends to server 0.
 */
#ifndef XKV_TEST_DIR_FIXTURE_H
#define XKV_TEST_DIR_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xkv/dir.h"
#include "dir.skel.h"

#define DIR_SERVERS 4
#define DIR_CLIENT  "10.0.0.1"

/* The program loaded and its servers set: NULL (errno set) if it would not load. */
struct dir_bpf *dir_fixture_open(void);

/* The policy and the live servers: 0 or -errno. */
int dir_fixture_config(struct dir_bpf *skel, enum xkv_dir_select select, __u32 live);

/* Server id's address, "10.0.1.(id + 1)". */
void dir_fixture_server(__u32 id, char *text, size_t cap);

/* key in the directory with this entry (its lock zeroed): 0 or -errno. */
int dir_fixture_replicate(struct dir_bpf *skel, const char *key,
			  const struct xkv_dir_entry *entry);

#endif /* XKV_TEST_DIR_FIXTURE_H */
