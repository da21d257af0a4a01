// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include "xkv/memcached.h"
#include "xkv/proto.h"
#include "packet.h"

#define UDP_HLEN     8
#define IPV4_HLEN    20
#define IPV6_HLEN    40
#define IPV6_EXT_LEN 8
#define SPORT	     40000

struct writer {
	__u8 *buf;
	size_t pos;
};

static void put(struct writer *w, const void *bytes, size_t len)
{
	memcpy(w->buf + w->pos, bytes, len);
	w->pos += len;
}

static void put8(struct writer *w, __u8 v)
{
	put(w, &v, 1);
}

static void put16(struct writer *w, __u16 v)
{
	__be16 be = htons(v);

	put(w, &be, 2);
}

static void put32(struct writer *w, __u32 v)
{
	__be32 be = htonl(v);

	put(w, &be, 4);
}

size_t pkt_key(const struct pkt_spec *spec, __u8 *key)
{
	const char *text = spec->key[0] || spec->key_len ? spec->key : "key";
	size_t len = spec->key_fill ?: spec->key_len ?: strlen(text);

	if (spec->no_key)
		return 0;
	if (len > XKV_KEY_MAX + 1)
		len = XKV_KEY_MAX + 1;
	if (spec->key_fill)
		memset(key, 'k', len);
	else
		memcpy(key, text, len);
	return len;
}

/* "CMD KEY TAIL\r\n", then a set's value and its "\r\n". */
static void build_mc_ascii(const struct pkt_spec *s, struct writer *w, const __u8 *key,
			   size_t key_len)
{
	bool set = s->op == XKV_OP_PUT;
	const char *cmd = s->mc_cmd[0] ? s->mc_cmd : set ? "set" : "get";
	char tail[sizeof(s->mc_tail)];

	snprintf(tail, sizeof(tail), "%s", s->mc_tail);
	if (!tail[0] && set)
		snprintf(tail, sizeof(tail), " 0 0 %u", s->frag_len);
	put(w, cmd, strlen(cmd));
	put8(w, ' ');
	put(w, key, key_len);
	put(w, tail, strlen(tail));
	if (s->mc_bare)
		return;
	put(w, "\r\n", 2);
	if (set) {
		memset(w->buf + w->pos, 'v', s->frag_len);
		w->pos += s->frag_len;
		put(w, "\r\n", 2);
	}
}

/* The binary header, extras (zeros), key and frag_len value bytes. */
static void build_mc_binary(const struct pkt_spec *s, struct writer *w, const __u8 *key,
			    size_t key_len)
{
	bool set = s->mc_opcode == XKV_MC_BIN_SET || s->mc_opcode == XKV_MC_BIN_SETQ;
	size_t extras = (set ? XKV_MC_SET_EXTRAS : 0) + s->mc_extras_delta;

	put8(w, s->mc_reply ? XKV_MC_BIN_RESPONSE : XKV_MC_BIN_REQUEST);
	put8(w, s->mc_opcode);
	put16(w, key_len + s->key_len_delta);
	put8(w, extras);
	put8(w, 0);  /* data type */
	put16(w, 0); /* vbucket */
	put32(w, extras + key_len + s->frag_len + s->mc_body_delta);
	put32(w, 0x12345678); /* opaque */
	put32(w, 0);	      /* cas */
	put32(w, 0);
	memset(w->buf + w->pos, 0, extras);
	w->pos += extras;
	put(w, key, key_len);
	memset(w->buf + w->pos, 'v', s->frag_len);
	w->pos += s->frag_len;
}

/* memcached's frame and request, in the dialect mc names. */
static void build_mc(const struct pkt_spec *s, struct writer *w, const __u8 *key, size_t key_len)
{
	put16(w, 0x1234); /* request id */
	put16(w, s->mc_seq);
	put16(w, s->mc_total ? s->mc_total : 1);
	put16(w, s->mc_reserved);
	if (s->mc == PKT_MC_ASCII)
		build_mc_ascii(s, w, key, key_len);
	else
		build_mc_binary(s, w, key, key_len);
}

/* xkv's header, key and frag_len value bytes. */
static void build_xkv(const struct pkt_spec *s, struct writer *w, const __u8 *key, size_t key_len)
{
	put16(w, s->magic ? s->magic : XKV_MAGIC);
	put8(w, s->version ? s->version : s->dir ? XKV_DIR_VERSION : XKV_VERSION);
	put8(w, s->op ? s->op : XKV_OP_GET);
	put8(w, s->status);
	put8(w, s->flags ? s->flags : s->dir ? XKV_F_DIR : 0);
	put16(w, key_len + s->key_len_delta);
	put32(w, 0x12345678); /* request id */
	put32(w, s->value_len);
	put32(w, s->frag_offset);
	put32(w, s->frag_len + s->frag_len_delta);
	put32(w, 0); /* timestamp */
	put32(w, 42);
	put32(w, 0); /* token */
	put32(w, 0);
	if (s->dir)
		put(w, &s->dir_ext, sizeof(s->dir_ext));
	put(w, key, key_len);
	memset(w->buf + w->pos, 'v', s->frag_len);
	w->pos += s->frag_len;
}

/* The UDP payload, xkv's or memcached's. Returns its length. */
static size_t build_payload(const struct pkt_spec *s, __u8 *buf)
{
	struct writer w = {.buf = buf};
	__u8 key[XKV_KEY_MAX + 1];
	size_t key_len = pkt_key(s, key);

	if (s->mc)
		build_mc(s, &w, key, key_len);
	else
		build_xkv(s, &w, key, key_len);
	if (s->no_payload)
		return 0;
	return s->payload && s->payload < w.pos ? s->payload : w.pos;
}

/* The address text says, or v4 or v6 by the spec's family when it is "". */
static void build_addr(const struct pkt_spec *s, __u8 *addr, const char *text, const char *v4,
		       const char *v6)
{
	inet_pton(s->ipv6 ? AF_INET6 : AF_INET, text[0] ? text : s->ipv6 ? v6 : v4, addr);
}

static void put_mac(struct writer *w, const char *text, const char *otherwise)
{
	__u8 *m = w->buf + w->pos;

	sscanf(text[0] ? text : otherwise, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2],
	       &m[3], &m[4], &m[5]);
	w->pos += 6;
}

static __u16 ipv4_checksum(const __u8 *hdr, size_t len)
{
	__u32 sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += hdr[i] << 8 | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static void build_ipv4(const struct pkt_spec *s, struct writer *w, size_t l4_len)
{
	size_t start = w->pos, hdr_len = IPV4_HLEN + s->ip_opts;
	__u8 src[4], dst[4];

	build_addr(s, src, s->src, "10.0.0.1", NULL);
	build_addr(s, dst, s->dst, "10.0.0.2", NULL);
	put8(w, 0x40 | hdr_len / 4);
	put8(w, 0);
	put16(w, hdr_len + l4_len + s->ip_len_delta);
	put16(w, 1); /* id */
	put16(w, s->frag);
	put8(w, 64);
	put8(w, s->l4 ? s->l4 : IPPROTO_UDP);
	put16(w, 0);
	put(w, src, 4);
	put(w, dst, 4);
	memset(w->buf + w->pos, 1 /* NOP */, s->ip_opts);
	w->pos += s->ip_opts;
	put16(&(struct writer){.buf = w->buf, .pos = start + 10},
	      ipv4_checksum(w->buf + start, hdr_len));
}

static void build_ipv6(const struct pkt_spec *s, struct writer *w, size_t l4_len)
{
	size_t ext_len = s->n_ext * IPV6_EXT_LEN;
	__u8 src[16], dst[16], next = s->l4 ? s->l4 : IPPROTO_UDP;

	build_addr(s, src, s->src, NULL, "fd00::1");
	build_addr(s, dst, s->dst, NULL, "fd00::2");
	put32(w, 6u << 28);
	put16(w, ext_len + l4_len + s->ip_len_delta);
	put8(w, s->n_ext ? s->ext[0] : next);
	put8(w, 64);
	put(w, src, 16);
	put(w, dst, 16);
	for (int i = 0; i < s->n_ext; i++) {
		put8(w, i + 1 < s->n_ext ? s->ext[i + 1] : next);
		if (s->ext[i] == IPPROTO_FRAGMENT) {
			put8(w, 0);
			put16(w, s->frag);
			put32(w, 7); /* identification */
		} else {
			put8(w, 0); /* 8 bytes long */
			put8(w, 1); /* PadN option over the remaining 4 bytes */
			put8(w, 4);
			put32(w, 0);
		}
	}
}

void pkt_build(const struct pkt_spec *s, __u8 *buf, struct pkt_layout *layout)
{
	__u8 payload[PKT_SIZE_MAX];
	size_t payload_len = build_payload(s, payload);
	struct writer w = {.buf = buf};
	__u16 ethertype = s->ethertype ?: (s->ipv6 ? ETH_P_IPV6 : ETH_P_IP);

	put_mac(&w, s->eth_dst, PKT_MAC_DST);
	put_mac(&w, s->eth_src, PKT_MAC_SRC);
	if (s->qinq) {
		put16(&w, ETH_P_8021AD);
		put16(&w, 100);
	}
	if (s->vlan || s->qinq) {
		put16(&w, ETH_P_8021Q);
		put16(&w, 200);
	}
	put16(&w, ethertype);
	if (s->ipv6)
		build_ipv6(s, &w, UDP_HLEN + payload_len);
	else
		build_ipv4(s, &w, UDP_HLEN + payload_len);
	put16(&w, s->sport ? s->sport : SPORT);
	put16(&w, s->dport ? s->dport : s->mc ? PKT_MC_PORT : PKT_PORT);
	put16(&w, UDP_HLEN + payload_len + s->udp_len_delta);
	put16(&w, s->udp_check); /* none by default: XDP must not look at it */
	layout->l4_end = w.pos;
	put(&w, payload, payload_len);
	memset(buf + w.pos, s->trailer_fill, s->trailer);
	w.pos += s->trailer;
	layout->len = s->cut && s->cut < w.pos ? s->cut : w.pos;
}
