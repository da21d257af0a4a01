/* SPDX-License-Identifier: MIT */
/*
 * What memcached clients keep beside a value, and the version a coherence directory
 * gave it: the store keeps it with each item
 * (userspace/store/store.h), the protocols read and write it (the text session, the
 * memcached executor, memcached over UDP). Defined once, below all of them.
 */
#ifndef XKV_ITEM_H
#define XKV_ITEM_H

#include <stdbool.h>
#include <stdint.h>

struct xkv_item_meta {
	uint32_t flags;	  /* the client's, opaque to the store */
	uint32_t exptime; /* absolute time (xkv_store_now seconds) it expires at; 0: never */
	uint64_t cas;	  /* unique per stored version of an item, never 0; set by the store */
	/*
	 * The coherence directory's version of a replicated key (docs/DIRECTORY.md), 0
	 * when its last write was not the directory's: read and written with the value.
	 */
	uint64_t ver;
	/* what a read reports besides (the store ignores them in a write's meta): */
	uint32_t footprint; /* the item's bytes: header, key, value capacity (store.h) */
	bool fetched;	    /* read before this read: memcached's fetched bit */
};

#endif /* XKV_ITEM_H */
