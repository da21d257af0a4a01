/* SPDX-License-Identifier: MIT */
/*
 * A server's hot keys, for a directory's controller (Pegasus Sec. 7.3; docs/DIRECTORY.md,
 * "Hot keys"): each worker counts the keys of the requests it serves in a sketch of its
 * own (util/heavy.h); at each epoch's end it publishes its top and starts afresh. A
 * report merges the workers' last published tops (a key several workers served counts
 * their sum) into the value a version 3 GET marked XKV_DIR_REPORT is answered with.
 */
#ifndef XKV_ENGINE_HOT_H
#define XKV_ENGINE_HOT_H

#include <stddef.h>
#include <stdint.h>

struct xkv_hot;

/* For nworkers workers, epochs of epoch_ns; NULL (errno set) when out of memory. */
struct xkv_hot *xkv_hot_create(uint32_t nworkers, uint64_t epoch_ns);
void xkv_hot_destroy(struct xkv_hot *hot);

/* Worker worker served a request for key (len bytes), whose xkv_hash is hash. */
void xkv_hot_count(struct xkv_hot *hot, uint32_t worker, const void *key, uint32_t len,
		   uint64_t hash);

/* Worker worker's clock: at its epoch's end, its top is published and its counts start over. */
void xkv_hot_tick(struct xkv_hot *hot, uint32_t worker, uint64_t now_ns);

/*
 * The report (struct xkv_dir_report and its keys, include/xkv/dir.h) of the epochs the
 * workers published last, into buf: its bytes, at most cap (keys that do not fit are
 * left out, the coldest first).
 */
size_t xkv_hot_report(const struct xkv_hot *hot, void *buf, size_t cap);

#endif /* XKV_ENGINE_HOT_H */
