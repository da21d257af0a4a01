/* SPDX-License-Identifier: MIT */
/*
 * The xkv wire protocol, defined once for the XDP program, the server, the client
 * library and the tools. docs/PROTOCOL.md describes it byte by byte.
 *
 * Every datagram, request or reply, starts with struct xkv_hdr in network byte
 * order. A request carries its key right after the header in every datagram, so
 * that the XDP program can hash it and steer all datagrams of one request to the
 * same worker without trusting a client-supplied hash. A value travels in one or
 * more datagrams, each saying where its bytes go (frag_offset) and how many there
 * are (frag_len).
 */
#ifndef XKV_PROTO_H
#define XKV_PROTO_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define XKV_MAGIC	 0x584b /* "XK" */
#define XKV_VERSION	 2 /* 2: the validation token (docs/PROTOCOL.md, "Amplification") */
/*
 * 3: version 2 with the coherence directory's extension (include/xkv/dir.h,
 * docs/PROTOCOL.md "Version 3"): flags is XKV_F_DIR, and XKV_DIR_EXT_LEN bytes of
 * struct xkv_dir_ext lie between the header and the key.
 */
#define XKV_DIR_VERSION	 3
#define XKV_F_DIR	 0x01
#define XKV_DIR_EXT_LEN	 32
#define XKV_DEFAULT_PORT 7411

#define XKV_KEY_MIN   1
#define XKV_KEY_MAX   250	      /* as memcached */
#define XKV_VALUE_MAX (1u << 20)      /* 1 MiB */
#define XKV_DGRAM_MAX 1472u	      /* UDP payload of a 1500-byte MTU over IPv4: a datagram */

enum xkv_op {
	XKV_OP_GET = 1,
	XKV_OP_PUT = 2,
	XKV_OP_DELETE = 3,
	XKV_OP_REPLY = 0x80, /* or-ed into the request's op in its reply */
};

/* Reply statuses, numbered from 0 in this order. X(enum suffix, name shown by the tools). */
#define XKV_STATUSES(X)                                                                            \
	X(OK, "ok")                                                                                \
	X(NOT_FOUND, "not_found")                                                                  \
	X(TOO_LARGE, "too_large")                                                                  \
	X(NO_MEMORY, "no_memory")                                                                  \
	X(BAD_REQUEST, "bad_request")                                                              \
	X(BUSY, "busy")                                                                            \
	X(VALIDATE, "validate")

#define XKV_STATUS_ENUM(name, str) XKV_S_##name,
enum xkv_status {
	XKV_STATUSES(XKV_STATUS_ENUM)
};
#undef XKV_STATUS_ENUM

/* How many there are, apart from the enum so that a switch over statuses stays whole. */
#define XKV_STATUS_ONE(name, str) +1
enum { XKV_S_END = 0 XKV_STATUSES(XKV_STATUS_ONE) };
#undef XKV_STATUS_ONE
#define XKV_S_MAX (XKV_S_END - 1)

struct xkv_hdr {
	__be16 magic;	    /* XKV_MAGIC */
	__u8 version;	    /* XKV_VERSION, or XKV_DIR_VERSION */
	__u8 op;	    /* enum xkv_op, | XKV_OP_REPLY in replies */
	__u8 status;	    /* enum xkv_status in replies, 0 in requests */
	__u8 flags;	    /* 0; XKV_F_DIR in version 3 */
	__be16 key_len;	    /* key bytes after the header: 1..250 in requests, 0 in replies */
	__be32 request_id;  /* chosen by the client, echoed in every reply datagram */
	__be32 value_len;   /* bytes of the whole value, 0..XKV_VALUE_MAX */
	__be32 frag_offset; /* where this datagram's value bytes start within the value */
	__be32 frag_len;    /* value bytes in this datagram, after the key */
	__be64 timestamp;   /* client clock, opaque to the server, echoed in the reply */
	__be64 token;	    /* proof the sender receives at its address; 0: none */
};

_Static_assert(sizeof(struct xkv_hdr) == 40, "the wire header is 40 bytes");

/* xkv_dir_ext.dflags */
#define XKV_DIR_STEERED	   0x01 /* set by the directory: the key is replicated, ver is its */
#define XKV_DIR_NO_VERSION 0x02 /* set by a server: its reply vouches for no version */
#define XKV_DIR_NOTICE	   0x04 /* set by the controller: a PUT whose value is a notice */
#define XKV_DIR_FORWARDED  0x08 /* set by a server: a stray request it sent home (Sec. 6.6) */
#define XKV_DIR_REPORT	   0x10 /* set by the controller: a GET of the server's hot keys */

/*
 * After the header and before the key, in requests and replies alike, in version 3
 * (docs/PROTOCOL.md, "Version 3"; the directory: include/xkv/dir.h). A client sends
 * it zeroed; the directory fills a request's fields for a replicated key; a server
 * echoes them in its reply, ver and load its own.
 */
struct xkv_dir_ext {
	__be64 key_hash;  /* xkv_hash of the key: the directory's, echoed in the reply */
	__be64 ver;	  /* a steered WRITE's version; a reply's: what the server holds */
	__be32 load;	  /* replies: the server's load (requests it has queued) */
	__be32 write_set; /* a steered WRITE: the servers it goes to, a bit each */
	__u8 target;	  /* the server the client addressed, whose address the reply takes */
	__u8 dflags;	  /* XKV_DIR_STEERED, _NO_VERSION, _NOTICE, _FORWARDED, _REPORT */
	__be16 service;	  /* replies: the server's time per request, XKV_DIR_SERVICE_UNIT ns */
	__be32 sent;	  /* a steered request: the directory's clock (ns, mod 2^32), echoed */
};

/*
 * xkv_dir_ext.service's unit: a server's time per request (its workers' mean service
 * time over their number), saturating at some 1 ms; what Pegasus's load prediction and
 * C3 take a server's rate from (docs/DIRECTORY.md, "Choosing a server").
 */
#define XKV_DIR_SERVICE_UNIT 16

_Static_assert(sizeof(struct xkv_dir_ext) == XKV_DIR_EXT_LEN, "the extension is 32 bytes");

/* Whether version a is newer than b, in serial-number arithmetic: versions may wrap. */
static __always_inline int xkv_dir_newer(__u64 a, __u64 b)
{
	return (__s64)(a - b) > 0;
}

/*
 * The most reply bytes (UDP payload) a request of n bytes may draw from a source
 * that has not shown a token: QUIC's anti-amplification factor.
 */
#define XKV_AMPLIFY_MAX 3

/*
 * Why a datagram is rejected. The same list names the XDP program's protocol drop
 * counters and the userspace decoder's errors, so both say the same thing about
 * the same bytes. X(enum suffix, name shown by the tools).
 */
#define XKV_PROTO_REASONS(X)                                                                       \
	X(TRUNCATED, "truncated")                                                                  \
	X(BAD_MAGIC, "bad_magic")                                                                  \
	X(BAD_VERSION, "bad_version")                                                              \
	X(BAD_FLAGS, "bad_flags")                                                                  \
	X(BAD_OP, "bad_op")                                                                        \
	X(BAD_STATUS, "bad_status")                                                                \
	X(BAD_KEY_LEN, "bad_key_len")                                                              \
	X(TOO_LARGE, "too_large")                                                                  \
	X(BAD_LENGTH, "bad_length")                                                                \
	X(BAD_FRAGMENT, "bad_fragment")

#define XKV_REASON_ENUM(name, str) XKV_R_##name,
enum xkv_reason {
	XKV_R_OK = 0,
	XKV_PROTO_REASONS(XKV_REASON_ENUM) XKV_R_PROTO_END, /* first reason free for others */
};
#undef XKV_REASON_ENUM

static __always_inline __u16 xkv_be16(__be16 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16(v);
#else
	return v;
#endif
}

static __always_inline __u32 xkv_be32(__be32 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

static __always_inline __u64 xkv_be64(__be64 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/* The bytes between a header and its key: the directory's extension in version 3. */
static __always_inline __u32 xkv_ext_len(const struct xkv_hdr *h)
{
	return h->version == XKV_DIR_VERSION ? XKV_DIR_EXT_LEN : 0;
}

/*
 * Checks a header against the datagram it came in: payload_len is the UDP payload
 * length, header and extension included. The caller has made sure that at least
 * sizeof(struct xkv_hdr) bytes are readable when payload_len says so (the
 * extension it reads itself, if it does). Returns XKV_R_OK or the reason to reject.
 * Pure arithmetic, so the verifier and the decoder run the same rules.
 */
static __always_inline enum xkv_reason xkv_hdr_check(const struct xkv_hdr *h, __u32 payload_len)
{
	__u32 key_len, value_len, frag_offset, frag_len, ext_len = xkv_ext_len(h);
	__u8 op, reply;

	if (payload_len < sizeof(*h))
		return XKV_R_TRUNCATED;
	if (xkv_be16(h->magic) != XKV_MAGIC)
		return XKV_R_BAD_MAGIC;
	if (h->version != XKV_VERSION && h->version != XKV_DIR_VERSION)
		return XKV_R_BAD_VERSION;
	if (h->flags != (ext_len ? XKV_F_DIR : 0))
		return XKV_R_BAD_FLAGS;
	if (payload_len < sizeof(*h) + ext_len)
		return XKV_R_TRUNCATED;

	reply = h->op & XKV_OP_REPLY;
	op = h->op & ~XKV_OP_REPLY;
	if (op < XKV_OP_GET || op > XKV_OP_DELETE)
		return XKV_R_BAD_OP;
	if (reply ? h->status > XKV_S_MAX : h->status != 0)
		return XKV_R_BAD_STATUS;

	key_len = xkv_be16(h->key_len);
	if (reply ? key_len != 0 : key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return XKV_R_BAD_KEY_LEN;

	value_len = xkv_be32(h->value_len);
	frag_offset = xkv_be32(h->frag_offset);
	frag_len = xkv_be32(h->frag_len);
	if (value_len > XKV_VALUE_MAX)
		return XKV_R_TOO_LARGE;
	/* 64-bit sum: frag_len is the client's word and may be near 2^32 */
	if ((__u64)sizeof(*h) + ext_len + key_len + frag_len != payload_len)
		return XKV_R_BAD_LENGTH;
	if (frag_offset > value_len || frag_len > value_len - frag_offset)
		return XKV_R_BAD_FRAGMENT;
	/* an empty piece of a non-empty value makes reassembly wait for nothing */
	if (frag_len == 0 && value_len != 0)
		return XKV_R_BAD_FRAGMENT;
	/* only PUT requests and GET replies carry a value */
	if (value_len != 0 && (reply ? op != XKV_OP_GET : op != XKV_OP_PUT))
		return XKV_R_BAD_FRAGMENT;
	return XKV_R_OK;
}

#ifndef __bpf__
static inline const char *xkv_status_name(__u32 status)
{
#define XKV_STATUS_NAME(name, str) [XKV_S_##name] = str,
	static const char *const names[XKV_S_END] = {XKV_STATUSES(XKV_STATUS_NAME)};
#undef XKV_STATUS_NAME
	return status < XKV_S_END ? names[status] : "unknown";
}

/* The name of a request op (GET, PUT, DELETE), as the tools print it. */
static inline const char *xkv_op_name(__u32 op)
{
	static const char *const names[] = {
		[XKV_OP_GET] = "get", [XKV_OP_PUT] = "put", [XKV_OP_DELETE] = "delete"};

	return op >= XKV_OP_GET && op <= XKV_OP_DELETE ? names[op] : "unknown";
}
#endif /* !__bpf__ */

#endif /* XKV_PROTO_H */
