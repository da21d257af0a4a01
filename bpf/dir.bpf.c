// SPDX-License-Identifier: MIT
/*
 * The coherence directory's XDP program (include/xkv/dir.h, docs/DIRECTORY.md), on the
 * interfaces of the host that routes between clients and servers. A request to the
 * xkv port for a key in xkv_dir_keys is steered, Pegasus's Algorithm 1: a READ to a
 * server of the key's replica set, a WRITE stamped with the key's next version to a
 * server the policy picks. A steered reply updates the replica set, Algorithm 2, and
 * leaves with the address the client sent to. xkv's other datagrams are forwarded as
 * they are, by the FIB and a redirect like the steered ones; everything else passes to
 * the kernel, which routes it (and answers ARP, ICMP, fragments). IPv4; an IPv6
 * datagram passes, unsteered.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "xkv/dir.h"
#include "xkv/hash.h"
#include "parse.h"

#define AF_INET 2

/*
 * Not preallocated: an entry removed is freed after the programs that found it, never
 * handed at once to a key added meanwhile while a reply for the old one updates it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XKV_DIR_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64); /* the key's hash */
	__type(value, struct xkv_dir_entry);
} xkv_dir_keys SEC(".maps");

/*
 * Keys being removed (Sec. 6.5): their WRITEs go home only. Apart from the entries, so
 * that the controller never writes an entry the program changes under it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XKV_DIR_KEYS);
	__type(key, __u64); /* the key's hash */
	__type(value, __u32); /* 1 */
} xkv_dir_migrating SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XKV_DIR_SERVERS);
	__type(key, __u32);
	__type(value, struct xkv_dir_server);
} xkv_dir_servers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XKV_DIR_SERVERS);
	__type(key, struct xkv_dir_addr);
	__type(value, __u32); /* the server's id */
} xkv_dir_addrs SEC(".maps");

/* Every server's telemetry (include/xkv/dir.h), one lookup a choice. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_dir_load);
} xkv_dir_load SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_dir_config);
} xkv_dir_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xkv_dir_pool);
} xkv_dir_pool SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XKV_DIR_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xkv_dir_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XKV_DIR_CHOICES);
	__type(key, __u32);
	__type(value, __u64);
} xkv_dir_choices SEC(".maps");

/* the strategies that choose a steered request's server, which read the maps above */
#include "dir_select.h"

/* A datagram to or from the xkv port, as far as the directory reads it. */
struct dir_packet {
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	struct xkv_hdr *hdr;
	struct xkv_dir_ext *ext; /* NULL: a version 2 datagram, which has none */
	__u64 key_off;		 /* from the frame's start */
};

static __always_inline int dir_count(__u32 slot, int verdict)
{
	__u64 *count = bpf_map_lookup_elem(&xkv_dir_stats, &slot);

	if (count)
		*count += 1; /* per-CPU slot: no other writer */
	return verdict;
}

/* RFC 1624: the checksum *sum once a 32-bit word it covers went from old to new. */
static __always_inline void csum_replace4(__sum16 *sum, __be32 old, __be32 new)
{
	__u32 s = (__u16)~*sum;

	s += (__u16)~old + (__u16)~(old >> 16) + (__u16)new + (__u16)(new >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	*sum = (__sum16)~s;
}

/*
 * The frame's Ethernet (one VLAN tag at most: xkv_parse_l2), IPv4 (options allowed, no
 * fragment) and UDP headers; false for what is not a UDP datagram the directory reads.
 */
static __always_inline bool dir_parse(struct xdp_md *ctx, struct dir_packet *p)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__be16 proto;
	void *pos = xkv_parse_l2(data, end, &proto);

	if (!pos)
		return false;
	p->eth = eth;
	p->ip = pos;
	if (proto != bpf_htons(ETH_P_IP) || (void *)(p->ip + 1) > end || p->ip->ihl < 5 ||
	    p->ip->protocol != IPPROTO_UDP ||
	    (bpf_ntohs(p->ip->frag_off) & (XKV_IP_MF | XKV_IP_OFFSET)))
		return false;
	p->udp = pos + p->ip->ihl * 4;
	if ((void *)(p->udp + 1) > end)
		return false;
	p->hdr = (void *)(p->udp + 1);
	p->ext = NULL;
	return true;
}

/* The xkv header of p, and the extension after it in version 3: 0, or XKV_DIR_STAT_MALFORMED. */
static __always_inline __u32 dir_parse_xkv(struct xdp_md *ctx, struct dir_packet *p)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 payload = bpf_ntohs(p->udp->len), ext_len;

	if ((void *)(p->hdr + 1) > end || payload < sizeof(struct udphdr) + sizeof(*p->hdr) ||
	    (void *)p->udp + payload > end)
		return XKV_DIR_STAT_MALFORMED;
	if (xkv_hdr_check(p->hdr, payload - sizeof(struct udphdr)) != XKV_R_OK)
		return XKV_DIR_STAT_MALFORMED;
	ext_len = xkv_ext_len(p->hdr);
	if (ext_len) {
		p->ext = (void *)(p->hdr + 1);
		if ((void *)(p->ext + 1) > end)
			return XKV_DIR_STAT_MALFORMED;
	}
	p->key_off = (void *)p->hdr + sizeof(*p->hdr) + ext_len - data;
	return 0;
}

/* Sends the datagram on its way: its next hop by the FIB, else the kernel's. */
static __always_inline int dir_forward(struct xdp_md *ctx, struct dir_packet *p)
{
	struct bpf_fib_lookup fib = {
		.family = AF_INET,
		.tos = p->ip->tos,
		.l4_protocol = IPPROTO_UDP,
		.tot_len = bpf_ntohs(p->ip->tot_len),
		.ipv4_src = p->ip->saddr,
		.ipv4_dst = p->ip->daddr,
		.ifindex = ctx->ingress_ifindex,
	};
	__u32 check;

	/* no route or no neighbour yet, a TTL to expire: the kernel's forwarding knows how */
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS ||
	    p->ip->ttl <= 1)
		return XDP_PASS;
	/* the TTL one less: its checksum word, ttl << 8 | protocol, 0x0100 less */
	check = (__u32)p->ip->check + bpf_htons(0x0100);
	p->ip->check = (__sum16)(check + (check >= 0xffff));
	p->ip->ttl--;
	__builtin_memcpy(p->eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(p->eth->h_source, fib.smac, ETH_ALEN);
	/*
	 * A veth hands over a partial UDP checksum, for the receiver's stack to trust; a
	 * redirected frame reaches that stack without the mark and would be dropped. 0,
	 * no checksum, IPv4 allows.
	 */
	p->udp->check = 0;
	return bpf_redirect(fib.ifindex, 0);
}

/* The datagram now goes to (or comes from, when source) server srv. */
static __always_inline void dir_readdress(struct dir_packet *p, const struct xkv_dir_server *srv,
					  bool source)
{
	__be32 *addr = source ? &p->ip->saddr : &p->ip->daddr;

	csum_replace4(&p->ip->check, *addr, srv->addr);
	*addr = srv->addr;
	if (source)
		p->udp->source = srv->port;
	else
		p->udp->dest = srv->port;
	p->udp->check = 0; /* IPv4 allows none: the bytes changed, and veth's may be partial */
}

/*
 * How many servers a WRITE goes to (Sec. 6.4): as many as the key has had reads per
 * write, a cap that keeps the copies cheap when writes are frequent, up to write_max
 * and the live servers.
 */
static __always_inline __u32 dir_write_count(const struct xkv_dir_config *cfg,
					     const struct xkv_dir_entry *e, __u32 live)
{
	__u64 per_write = e->reads / (e->writes + 1);
	__u32 n = cfg->write_max > 1 ? cfg->write_max : 1, nlive = (__u32)__builtin_popcount(live);

	if (n > nlive)
		n = nlive;
	if (per_write < n)
		n = per_write ? (__u32)per_write : 1;
	return n;
}

/* n of the live servers, from first on in id order, wrapping: a WRITE's set. */
static __always_inline __u32 dir_write_set(__u32 live, __u32 first, __u32 n)
{
	__u32 set = 0;

	for (__u32 i = 0; i < XKV_DIR_SERVERS && n; i++) {
		__u32 id = (first + i) & (XKV_DIR_SERVERS - 1);

		if (live >> id & 1) {
			set |= 1u << id;
			n--;
		}
	}
	return set;
}

/*
 * A WRITE for several servers, its extension written: XDP cannot copy a frame, so it
 * passes to the kernel with the set in its metadata, for the interface's tc program
 * (xkv_dir_fanout) to send a copy to each. A driver without room for metadata drops it.
 */
static __always_inline int dir_fanout(struct xdp_md *ctx, struct dir_packet *p, __u32 set)
{
	void *data = (void *)(long)ctx->data;
	struct xkv_dir_fanout *f;
	__u16 ip_off = (__u16)((void *)p->ip - data), udp_off = (__u16)((void *)p->udp - data);

	p->udp->check = 0; /* each copy's addresses change: none, as IPv4 allows */
	/* the frame's pointers are stale after this, whatever it returns */
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*f)))
		return dir_count(XKV_DIR_STAT_FANOUT_NO_ROOM, XDP_DROP);
	f = (void *)(long)ctx->data_meta;
	if ((void *)(f + 1) > (void *)(long)ctx->data)
		return dir_count(XKV_DIR_STAT_MALFORMED, XDP_DROP);
	f->write_set = set;
	f->ip_off = ip_off;
	f->udp_off = udp_off;
	f->magic = XKV_DIR_FANOUT_MAGIC;
	return dir_count(XKV_DIR_STAT_FANOUT, XDP_PASS);
}

/* Algorithm 1: a request for a key the directory holds, whose server id target is. */
static __always_inline int dir_request(struct xdp_md *ctx, struct dir_packet *p,
				       const struct xkv_dir_config *cfg, struct xkv_dir_entry *e,
				       __u64 hash, __u32 target)
{
	bool write = p->hdr->op != XKV_OP_GET;
	/* while it is removed, writes go home only, where its newest value ends (Sec. 6.5) */
	__u32 from = !write ? e->rset
		   : bpf_map_lookup_elem(&xkv_dir_migrating, &hash) ? 1u << (e->home & 31)
								       : 0xffffffff;
	const struct xkv_dir_server *srv;
	__u32 to, set = 0, n = 1;
	__u64 ver = 0, chosen;

	if (!(from & cfg->live))
		return dir_count(XKV_DIR_STAT_NO_SERVER, XDP_DROP);
	chosen = dir_choose(from & cfg->live, hash, e->home, write);
	to = (__u32)chosen & (XKV_DIR_SERVERS - 1);
	p->ext->sent = bpf_htonl((__u32)(chosen >> 32)); /* a strategy timing replies stamps it */
	srv = bpf_map_lookup_elem(&xkv_dir_servers, &to);
	if (!srv)
		return dir_count(XKV_DIR_STAT_BAD_SERVER, XDP_DROP);
	if (write) {
		if (from == 0xffffffff)
			n = dir_write_count(cfg, e, cfg->live);
		set = dir_write_set(cfg->live, to, n);
		ver = __sync_fetch_and_add(&e->ver_next, 1) + 1;
		__sync_fetch_and_add(&e->writes, 1);
	} else {
		__sync_fetch_and_add(&e->reads, 1);
	}
	p->ext->key_hash = bpf_cpu_to_be64(hash);
	p->ext->ver = bpf_cpu_to_be64(ver);
	p->ext->load = 0;
	p->ext->write_set = bpf_htonl(set);
	p->ext->target = (__u8)target;
	p->ext->dflags = XKV_DIR_STEERED;
	p->ext->service = 0;
	dir_count(write ? XKV_DIR_STAT_WRITE : XKV_DIR_STAT_READ, 0);
	if (n > 1)
		return dir_fanout(ctx, p, set);
	dir_readdress(p, srv, false);
	return dir_forward(ctx, p);
}

/* Whether id names a configured server. */
static __always_inline bool dir_server_ok(const struct xkv_dir_config *cfg, __u32 id)
{
	return id < cfg->nservers && id < XKV_DIR_SERVERS;
}

/*
 * A request the directory does not steer: the extension's fields are the directory's
 * to fill, so whatever a client put there goes, lest a server echo it in a reply and
 * the reply pass for a steered one (Algorithm 2 would believe it).
 */
static __always_inline void dir_unsteered(struct dir_packet *p)
{
	if (p->ext)
		__builtin_memset(p->ext, 0, sizeof(*p->ext));
}

/*
 * A stray request a server sent home (Sec. 6.6, XKV_DIR_FORWARDED) as from its client:
 * steered already, it goes on as it is, to the home the server addressed. Only a
 * server may send one: a datagram that arrives by the interface its source is routed
 * through came from the client's side, whatever it says, and would bypass steering.
 */
static __always_inline int dir_on_forwarded(struct xdp_md *ctx, struct dir_packet *p)
{
	struct bpf_fib_lookup fib = {
		.family = AF_INET,
		.ipv4_dst = p->ip->saddr,
		.ifindex = ctx->ingress_ifindex,
	};
	long found = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);

	/*
	 * A route with no neighbour yet still names its interface; a host that does not
	 * forward (FWD_DISABLED) would not send it on either.
	 */
	if ((found != BPF_FIB_LKUP_RET_SUCCESS && found != BPF_FIB_LKUP_RET_NO_NEIGH) ||
	    fib.ifindex == ctx->ingress_ifindex)
		return dir_count(XKV_DIR_STAT_FORGED, XDP_DROP);
	return dir_count(XKV_DIR_STAT_FORWARDED, dir_forward(ctx, p));
}

/* A request to the xkv port: steered if its key is replicated, else on unchanged. */
static __always_inline int dir_on_request(struct xdp_md *ctx, struct dir_packet *p,
					  const struct xkv_dir_config *cfg)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct xkv_dir_addr addr = {.addr = p->ip->daddr, .port = p->udp->dest};
	__u64 key_off = p->key_off, hash;
	__u32 key_len = bpf_ntohs(p->hdr->key_len), *target;
	struct xkv_dir_entry *e;

	if (p->ext && (p->ext->dflags & XKV_DIR_FORWARDED))
		return dir_on_forwarded(ctx, p);
	barrier_var(key_len);
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return dir_count(XKV_DIR_STAT_MALFORMED, XDP_PASS);
	xkv_opaque_to_verifier(key_off, ctx->rx_queue_index);
	if (key_off > XKV_KEY_OFF_MAX ||
	    xkv_hash_within((const __u8 *)data + key_off, key_len, end, &hash))
		return dir_count(XKV_DIR_STAT_MALFORMED, XDP_PASS);
	e = bpf_map_lookup_elem(&xkv_dir_keys, &hash);
	if (!e) {
		dir_unsteered(p);
		return dir_count(XKV_DIR_STAT_UNREPLICATED, dir_forward(ctx, p));
	}
	/* an old client's request would reach a home that may not hold the newest value */
	if (!p->ext)
		return dir_count(XKV_DIR_STAT_NO_EXTENSION, XDP_DROP);
	/* each piece would take a version of its own, and maybe a server of its own */
	if (p->hdr->frag_len != p->hdr->value_len)
		return dir_count(XKV_DIR_STAT_SPLIT_WRITE, XDP_DROP);
	target = bpf_map_lookup_elem(&xkv_dir_addrs, &addr);
	if (!target) {
		dir_unsteered(p);
		return dir_count(XKV_DIR_STAT_UNKNOWN_TARGET, dir_forward(ctx, p));
	}
	if (!dir_server_ok(cfg, *target))
		return dir_count(XKV_DIR_STAT_BAD_SERVER, XDP_DROP);
	return dir_request(ctx, p, cfg, e, hash, *target);
}

/*
 * Algorithm 2: a steered reply from server id `from`; its stats slot. A version the
 * directory never gave (past ver_next) changes nothing: no server acknowledged it.
 */
static __always_inline __u32 dir_reply_update(struct xkv_dir_entry *e, __u64 ver, __u32 from)
{
	__u32 slot = XKV_DIR_STAT_REPLY_OLDER;

	if (xkv_dir_newer(ver, *(volatile __u64 *)&e->ver_next)) /* clang 14: no atomic load */
		return XKV_DIR_STAT_REPLY_UNISSUED;
	bpf_spin_lock(&e->lock);
	if (xkv_dir_newer(ver, e->ver_curr)) {
		e->ver_curr = ver;
		e->rset = 1u << from;
		slot = XKV_DIR_STAT_REPLY_NEWER;
	} else if (ver == e->ver_curr) {
		e->rset |= 1u << from;
		slot = XKV_DIR_STAT_REPLY_SAME;
	}
	bpf_spin_unlock(&e->lock);
	return slot;
}

/* A reply from the xkv port: a steered one updates its key, then takes the client's address. */
static __always_inline int dir_on_reply(struct xdp_md *ctx, struct dir_packet *p,
					const struct xkv_dir_config *cfg)
{
	struct xkv_dir_addr addr = {.addr = p->ip->saddr, .port = p->udp->source};
	const struct xkv_dir_server *addressed;
	struct xkv_dir_load *load;
	struct xkv_dir_entry *e;
	__u32 *from, target, zero = 0, slot;
	__u64 hash;

	if (!p->ext || !(p->ext->dflags & XKV_DIR_STEERED))
		return dir_count(XKV_DIR_STAT_UNREPLICATED, dir_forward(ctx, p));
	from = bpf_map_lookup_elem(&xkv_dir_addrs, &addr);
	target = p->ext->target;
	if (!from || !dir_server_ok(cfg, *from) || !dir_server_ok(cfg, target))
		return dir_count(XKV_DIR_STAT_BAD_SERVER, XDP_DROP);
	load = bpf_map_lookup_elem(&xkv_dir_load, &zero);
	if (load)
		dir_telemetry_reply(&load->server[*from & (XKV_DIR_SERVERS - 1)], p->ext);
	hash = bpf_be64_to_cpu(p->ext->key_hash);
	e = bpf_map_lookup_elem(&xkv_dir_keys, &hash);
	if (!e)
		slot = XKV_DIR_STAT_REPLY_UNKNOWN;
	else if (p->ext->dflags & XKV_DIR_NO_VERSION) /* a busy server holds nothing new */
		slot = XKV_DIR_STAT_REPLY_NO_VERSION;
	else
		slot = dir_reply_update(e, bpf_be64_to_cpu(p->ext->ver), *from);
	addressed = bpf_map_lookup_elem(&xkv_dir_servers, &target);
	if (!addressed)
		return dir_count(XKV_DIR_STAT_BAD_SERVER, XDP_DROP);
	dir_readdress(p, addressed, true);
	dir_count(slot, 0);
	return dir_forward(ctx, p);
}

SEC("xdp")
int xkv_dir(struct xdp_md *ctx)
{
	const struct xkv_dir_config *cfg;
	struct dir_packet p;
	__u32 zero = 0, why;
	bool to_port, from_port;
	int verdict;

	cfg = bpf_map_lookup_elem(&xkv_dir_config, &zero);
	if (!cfg || !cfg->port || !dir_parse(ctx, &p))
		return dir_count(XKV_DIR_STAT_PASSED, XDP_PASS);
	to_port = p.udp->dest == bpf_htons(cfg->port);
	from_port = p.udp->source == bpf_htons(cfg->port);
	if (!to_port && !from_port)
		return dir_count(XKV_DIR_STAT_PASSED, XDP_PASS);
	why = dir_parse_xkv(ctx, &p);
	if (why)
		return dir_count(why, XDP_PASS);
	/* by the reply bit: a client may send from the port too, to a server's */
	if (p.hdr->op & XKV_OP_REPLY)
		return from_port ? dir_on_reply(ctx, &p, cfg) : dir_count(XKV_DIR_STAT_MALFORMED, XDP_PASS);
	if (!to_port)
		return dir_count(XKV_DIR_STAT_MALFORMED, XDP_PASS);
	/* a home may not hold a key's newest value yet: no request may reach one (Sec. 6.7) */
	if (cfg->flags & XKV_DIR_HOLD)
		return dir_count(XKV_DIR_STAT_HELD, XDP_DROP);
	verdict = dir_on_request(ctx, &p, cfg);
	/* last: a branch here doubles no path the verifier walks after it */
	if (DIR_SEEING >> (cfg->select & 31) & 1)
		dir_seen(cfg->select);
	return verdict;
}

/*
 * The copies of a WRITE for several servers (dir_fanout), on the ingress of the
 * interface it came in on: one to each server of its set, readdressed, its TTL one
 * less, by the FIB's next hop; then the frame itself goes. Whatever the XDP program
 * did not pass for copies is the kernel's, untouched.
 */
SEC("tc")
int xkv_dir_fanout(struct __sk_buff *skb)
{
	struct xkv_dir_fanout *meta = (void *)(long)skb->data_meta, f;
	struct bpf_fib_lookup fib;
	__be32 saddr, daddr;
	__u8 ttl, new_ttl;

	if ((void *)(meta + 1) > (void *)(long)skb->data || meta->magic != XKV_DIR_FANOUT_MAGIC)
		return TC_ACT_OK;
	f = *meta;
	/* one VLAN tag at most before it, IP options at most 40 bytes: the XDP program's */
	if (f.ip_off > 18 || f.udp_off > f.ip_off + 60 ||
	    bpf_skb_load_bytes(skb, f.ip_off + offsetof(struct iphdr, ttl), &ttl, 1) ||
	    bpf_skb_load_bytes(skb, f.ip_off + offsetof(struct iphdr, saddr), &saddr, 4))
		return dir_count(XKV_DIR_STAT_MALFORMED, TC_ACT_SHOT);
	if (ttl <= 1) /* the kernel answers what a router must */
		return TC_ACT_OK;
	new_ttl = ttl - 1;
	bpf_l3_csum_replace(skb, f.ip_off + offsetof(struct iphdr, check), bpf_htons(ttl << 8),
			    bpf_htons(new_ttl << 8), 2);
	bpf_skb_store_bytes(skb, f.ip_off + offsetof(struct iphdr, ttl), &new_ttl, 1, 0);
	for (__u32 id = 0; id < XKV_DIR_SERVERS; id++) {
		const struct xkv_dir_server *srv;

		if (!(f.write_set >> id & 1))
			continue;
		srv = bpf_map_lookup_elem(&xkv_dir_servers, &id);
		if (!srv ||
		    bpf_skb_load_bytes(skb, f.ip_off + offsetof(struct iphdr, daddr), &daddr, 4)) {
			dir_count(XKV_DIR_STAT_BAD_SERVER, 0);
			continue;
		}
		bpf_l3_csum_replace(skb, f.ip_off + offsetof(struct iphdr, check), daddr, srv->addr,
				    4);
		bpf_skb_store_bytes(skb, f.ip_off + offsetof(struct iphdr, daddr), &srv->addr, 4, 0);
		bpf_skb_store_bytes(skb, f.udp_off + offsetof(struct udphdr, dest), &srv->port, 2, 0);
		fib = (struct bpf_fib_lookup){.family = AF_INET,
					      .l4_protocol = IPPROTO_UDP,
					      .ipv4_src = saddr,
					      .ipv4_dst = srv->addr,
					      .ifindex = skb->ingress_ifindex};
		if (bpf_fib_lookup(skb, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS) {
			dir_count(XKV_DIR_STAT_FANOUT_NO_ROUTE, 0);
			continue;
		}
		bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), fib.dmac, ETH_ALEN, 0);
		bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), fib.smac, ETH_ALEN, 0);
		dir_count(bpf_clone_redirect(skb, fib.ifindex, 0) ? XKV_DIR_STAT_FANOUT_NO_ROUTE
								  : XKV_DIR_STAT_FANOUT_COPY,
			  0);
	}
	return TC_ACT_SHOT; /* its copies went */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
