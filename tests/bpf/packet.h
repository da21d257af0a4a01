/* SPDX-License-Identifier: MIT */
/*
 * Crafted frames for the XDP tests and the benchmark. A spec left zero describes
 * a valid xkv GET of the key "key" from 10.0.0.1 (PKT_MAC_SRC) over IPv4 to PKT_PORT
 * of 10.0.0.2 (PKT_MAC_DST), or fd00::1 to fd00::2 over IPv6; each
 * field changes one thing, so a table row reads as "valid, except ...". With mc set,
 * a valid memcached request to PKT_MC_PORT instead, of the same key: "get key\r\n"
 * in ASCII, a binary GET, each in its UDP frame.
 * Specs hold no pointers: Criterion runs each test in a freshly executed
 * process, where addresses differ.
 */
#ifndef XKV_TEST_PACKET_H
#define XKV_TEST_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xkv/dir.h"
#include "xkv/proto.h"

#define PKT_PORT     7411
#define PKT_MC_PORT  11211
#define PKT_MAC_SRC  "02:00:00:00:00:01"
#define PKT_MAC_DST  "02:00:00:00:00:02"
#define PKT_SIZE_MAX 2048

struct pkt_spec {
	bool ipv6;
	bool vlan;	    /* one 802.1Q tag */
	bool qinq;	    /* an 802.1ad tag, then an 802.1Q tag: more than XDP parses */
	__u8 ip_opts;	    /* IPv4 option bytes (NOPs), a multiple of 4 */
	__u16 ethertype;    /* 0: IPv4 or IPv6 as ipv6 says */
	__u8 n_ext;	    /* IPv6 extension headers, 8 bytes each ... */
	__u8 ext[6];	    /* ... of these types, in order */
	__u16 frag;	    /* IPv4 frag_off, or the IPv6 fragment header's offset|M, host order */
	__u8 l4;	    /* IP protocol; 0: UDP */
	char src[40];	    /* source address; "": 10.0.0.1 or fd00::1 */
	char dst[40];	    /* destination address; "": 10.0.0.2 or fd00::2 */
	char eth_src[18];   /* source MAC; "": PKT_MAC_SRC */
	char eth_dst[18];   /* destination MAC; "": PKT_MAC_DST */
	__u16 dport;	    /* 0: PKT_PORT */
	__u16 sport;	    /* 0: a client's port */
	int ip_len_delta;   /* lie of the IP length field */
	int udp_len_delta;  /* lie of the UDP length field */
	__u16 udp_check;    /* the UDP checksum field, true or not; 0: none */
	__u16 trailer;	    /* link padding after the IP packet */
	char trailer_fill;  /* the padding's bytes; 0: zeros */
	__u16 cut;	    /* keep only this many bytes of the frame (0: all) */
	__u16 payload;	    /* keep this many bytes of UDP payload, lengths agreeing (0: all) */
	bool no_payload;    /* an empty UDP datagram */
	/* the xkv header: 0 means the valid value */
	__u16 magic;
	__u8 version;
	__u8 op; /* 0: XKV_OP_GET */
	__u8 status;
	__u8 flags;
	char key[XKV_KEY_MAX + 1]; /* "": "key" */
	__u16 key_len;		   /* bytes of key; 0: strlen(key) */
	__u16 key_fill;		   /* instead of key, this many bytes of 'k' */
	bool no_key;		   /* a key of 0 bytes */
	int key_len_delta;
	__u32 value_len;
	__u32 frag_offset;
	__u32 frag_len; /* value bytes after the key */
	int frag_len_delta;
	bool dir; /* version 3 with the directory's extension, dir_ext, after the header */
	struct xkv_dir_ext dir_ext; /* network order, as it goes on the wire */
	/* memcached (include/xkv/memcached.h) instead of xkv: 0 means the valid value */
	__u8 mc;	    /* PKT_MC_ASCII or PKT_MC_BINARY; 0: xkv */
	__u16 mc_seq;	    /* the frame's sequence number */
	__u16 mc_total;	    /* the frame's datagram count; 0: 1 */
	__u16 mc_reserved;
	char mc_cmd[8];	    /* ASCII: the command word; "": get, or set for XKV_OP_PUT */
	char mc_tail[300];  /* ASCII: the line after the key; "": set's " 0 0 frag_len" */
	bool mc_bare;	    /* ASCII: the tail is the datagram's end: no "\r\n", no value */
	__u8 mc_opcode;	    /* binary: the opcode (0: GET) */
	bool mc_reply;	    /* binary: the reply's magic */
	int mc_extras_delta; /* binary: extras beside the opcode's (zeros) */
	int mc_body_delta;   /* binary: lie of the body length */
};

/* What mc in a pkt_spec asks for: the value bytes are frag_len 'v's either way. */
enum {
	PKT_MC_ASCII = 1,
	PKT_MC_BINARY = 2,
};

/* Where the parts of a built frame start. */
struct pkt_layout {
	size_t len;	    /* whole frame */
	size_t l4_end;	    /* end of the UDP header (or whatever l4 header stands there) */
};

/* Builds the frame into buf (PKT_SIZE_MAX bytes). */
void pkt_build(const struct pkt_spec *spec, __u8 *buf, struct pkt_layout *layout);

/* The key the spec puts in the packet (up to 250 bytes into key); returns its length. */
size_t pkt_key(const struct pkt_spec *spec, __u8 *key);

#endif /* XKV_TEST_PACKET_H */
