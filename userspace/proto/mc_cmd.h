/* SPDX-License-Identifier: MIT */
/*
 * A memcached write's command, as a session (TCP) or a datagram (UDP) hands it to the
 * partition's writer in an xkv_msg, and its result (docs/MEMCACHED.md). It lives here,
 * below both, so that the sessions build writes without knowing who runs them, and the
 * engine (engine/mc_exec.h) runs them without knowing the protocol's text.
 */
#ifndef XKV_MC_CMD_H
#define XKV_MC_CMD_H

#include <stdint.h>

#include <xkv/item.h>

enum xkv_mc_op {
	XKV_MC_SET,
	XKV_MC_ADD,	/* only if absent */
	XKV_MC_REPLACE, /* only if present */
	XKV_MC_APPEND,	/* keeps the item's flags and exptime */
	XKV_MC_PREPEND,
	XKV_MC_CAS, /* a set only if the item's CAS is w->cas */
	XKV_MC_DELETE,
	XKV_MC_INCR, /* a decimal value, wrapping at 2^64 */
	XKV_MC_DECR, /* stops at 0 */
	XKV_MC_TOUCH,
};

enum xkv_mc_status {
	XKV_MC_STORED,
	XKV_MC_NOT_STORED,
	XKV_MC_EXISTS, /* the CAS did not match */
	XKV_MC_NOT_FOUND,
	XKV_MC_DELETED,
	XKV_MC_TOUCHED,
	XKV_MC_NUMBER,	    /* incr, decr: r->number is the new value */
	XKV_MC_NON_NUMERIC, /* incr, decr of a value that is no decimal number */
	XKV_MC_NO_MEMORY,
	XKV_MC_TOO_LARGE, /* append or prepend past XKV_VALUE_MAX */
};

/* xkv_mc_cmd.opts */
#define XKV_MC_VIVIFY 1u /* ma N: create a missing counter (below) */
#define XKV_MC_NEW_TTL 2u /* ma T: a hit also takes exptime */

/*
 * A memcached write's command and arguments, beside its key and value: in the request's
 * xkv_msg (mc.cmd), whichever transport brought it. Times are as the client sent them:
 * the writer reads them on the store's clock (engine/mc_exec.h) when it applies them.
 */
struct xkv_mc_cmd {
	enum xkv_mc_op op;	/* over UDP, SET or DELETE */
	uint32_t flags;		/* stored beside the value */
	int64_t exptime;	/* memcached's rule: xkv_mc_exptime_at */
	uint64_t cas;		/* to match: XKV_MC_CAS always, any other op when not 0 (meta C) */
	uint64_t delta;		/* incr, decr */
	uint32_t opts;		/* XKV_MC_VIVIFY, XKV_MC_NEW_TTL */
	uint64_t initial;	/* ma J: a vivified counter's value */
	int64_t vivify_exptime; /* ma N: a vivified counter's exptime */
};

/* What a write did; flags and exptime are the item's after it, for meta replies. */
struct xkv_mc_result {
	enum xkv_mc_status status;
	uint64_t cas; /* the item's CAS after the write (0 when it failed) */
	uint64_t number;
	uint32_t flags;
	uint32_t exptime;
};

#define XKV_MC_RELATIVE_MAX (60 * 60 * 24 * 30) /* 30 days: larger is a Unix time */

/*
 * memcached's exptime rule at the store time now: 0 never; up to 30 days, relative;
 * more, a Unix time (expired already if it has passed); negative, expired already.
 */
static inline uint32_t xkv_mc_exptime_at(uint32_t now, int64_t exptime)
{
	if (exptime == 0)
		return 0;
	if (exptime < 0)
		return 1; /* the store's clock is past 1970: expired */
	if (exptime > XKV_MC_RELATIVE_MAX)
		return exptime > UINT32_MAX ? UINT32_MAX : (uint32_t)exptime;
	return now + (uint32_t)exptime;
}

#endif /* XKV_MC_CMD_H */
