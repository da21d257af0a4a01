// SPDX-License-Identifier: MIT
/*
 * The xkv XDP program: parse -> validate -> steer. Traffic that is not UDP to the
 * configured ports (xkv's, and memcached's when set) passes untouched; xkv and
 * memcached requests go to the AF_XDP socket of the chosen worker on this rx queue,
 * the same for the same key; anything else aimed at the ports is dropped and
 * counted under a named reason (include/xkv/maps.h), requests that are not addressed
 * to the interface's own unicast MAC and IP (xkv_local) among them.
 */
#include "maps.bpf.h"
#include "memcached.h"
#include "parse.h"
#include "steer.h"

static __always_inline void xkv_count(__u32 slot)
{
	__u64 *count = bpf_map_lookup_elem(&xkv_stats, &slot);

	if (count)
		*count += 1; /* per-CPU slot: no other writer */
}

static __always_inline int xkv_drop(__u32 reason)
{
	xkv_count(reason);
	return XDP_DROP;
}

static __always_inline int xkv_pass(void)
{
	xkv_count(XKV_STAT_PASSED);
	return XDP_PASS;
}

static __always_inline bool xkv_mac_is_local(const struct xkv_local_fast *l, __u64 mac)
{
	__u64 m;

	for (__u32 i = 0; i < XKV_LOCAL_MACS && i < l->nmac; i++) {
		__builtin_memcpy(&m, l->mac[i], sizeof(m));
		if (m == mac)
			return true;
	}
	return false;
}

/* An IPv4-mapped address that is one of the interface's subnets' broadcast addresses. */
static __always_inline bool xkv_is_local_broadcast(const struct xkv_local_fast *l,
						   const __u64 addr[2])
{
	__u32 b;

	if (addr[0] != 0 || (__u32)addr[1] != (__u32)xkv_v4mapped_lo(0))
		return false;
	for (__u32 i = 0; i < XKV_LOCAL_BCASTS && i < l->nbcast; i++) {
		__builtin_memcpy(&b, l->bcast[i], sizeof(b));
		if (xkv_v4mapped_lo(b) == addr[1])
			return true;
	}
	return false;
}

/* Whether dst is one of the unicast IPs in place. */
static __always_inline bool xkv_ip_is_local(const struct xkv_local_fast *l, const __u64 dst[2])
{
	for (__u32 i = 0; i < XKV_LOCAL_IPS && i < l->nip; i++)
		if (l->ip[i][0] == dst[0] && l->ip[i][1] == dst[1])
			return true;
	return false;
}

/*
 * XKV_R_OK when the request may be answered: to addresses of the interface's own, so
 * that the reply, addresses swapped, is unicast and ours, from an allowed source (the
 * xkv_allow trie, prefix 128). MACs, broadcast addresses and up to XKV_LOCAL_IPS
 * unicast IPs are compared in place; more IPs are looked up.
 */
static __always_inline int xkv_addresses_answerable(const struct xkv_addresses *a)
{
	const struct xkv_local_fast *l;
	struct xkv_local_key local;
	struct xkv_allow_key allow;
	__u32 zero = 0;
	__u8 *use;

	l = bpf_map_lookup_elem(&xkv_local_l2, &zero);
	if (!l) /* never: an array holds its one entry */
		return XKV_R_BAD_CONFIG;
	if (!xkv_mac_is_local(l, a->mac_dst))
		return XKV_R_BAD_DEST_MAC;
	/* a subnet's broadcast address looks like a unicast one: only the interface knows it */
	if (xkv_is_local_broadcast(l, a->src))
		return XKV_R_MULTICAST_SOURCE;
	if (l->nip <= XKV_LOCAL_IPS) {
		if (!xkv_ip_is_local(l, a->dst))
			return XKV_R_NOT_FOR_US;
	} else {
		/* set field by field: an initializer would be a .rodata map, which pins refuse */
		__builtin_memset(&local, 0, sizeof(local));
		local.kind = XKV_LOCAL_IP;
		__builtin_memcpy(local.addr, a->dst, sizeof(local.addr));
		use = bpf_map_lookup_elem(&xkv_local, &local);
		if (!use || *use != XKV_LOCAL_UNICAST)
			return XKV_R_NOT_FOR_US;
	}
	allow.prefixlen = 128;
	__builtin_memcpy(allow.addr, a->src, sizeof(allow.addr));
	if (!bpf_map_lookup_elem(&xkv_allow, &allow))
		return XKV_R_NOT_ALLOWED;
	return XKV_R_OK;
}

/*
 * XKV_R_OK when the request may be answered: from unicast addresses (checked on every
 * packet, a few instructions), and answerable (xkv_addresses_answerable). Those checks
 * and the allowlist's trie cost a GET about 5 ns: each CPU remembers the addresses it
 * found answerable (source, destination IP and MAC), until the allowlist or the local
 * addresses change (their generation moves: bpfctl adds one after each change). An
 * entry is tagged with the generation read before the maps were asked, so any change
 * after that voids it. "Before" is program order, which x86 keeps between two loads; a
 * CPU that reorders loads (arm64) needs the generation read with load-acquire
 * (BPF_LOAD_ACQ: LLVM 20 and kernel 6.15, not Debian 12's clang 14). Inlined: as a
 * global function its call cost a GET 3 ns of 45 (bench-xdp).
 */
_Static_assert(XKV_ADDR_CACHE == 64, "xkv_check_addresses hashes addresses to 6 bits");

static __always_inline int xkv_check_addresses(const struct xkv_addresses *a)
{
	__u64 *genp, gen, mix;
	struct xkv_addr_cached *c;
	__u32 zero = 0, idx;
	int reason;

	if (a->src_group || xkv_mac_is_group((const __u8 *)&a->mac_src))
		return XKV_R_MULTICAST_SOURCE;
	genp = bpf_map_lookup_elem(&xkv_addr_gen, &zero);
	if (!genp) /* never: an array holds its one entry */
		return XKV_R_BAD_CONFIG;
	gen = *(volatile __u64 *)genp;
	mix = a->src[0] ^ a->src[1] ^ a->dst[0] ^ a->dst[1] ^ a->mac_dst;
	idx = (__u32)((mix * 0x9E3779B97F4A7C15ULL) >> 58); /* 6 bits: XKV_ADDR_CACHE */
	c = bpf_map_lookup_elem(&xkv_addr_cache, &idx);
	if (c && c->tag == gen + 1 && c->src[0] == a->src[0] && c->src[1] == a->src[1] &&
	    c->dst[0] == a->dst[0] && c->dst[1] == a->dst[1] && c->mac_dst == a->mac_dst)
		return XKV_R_OK;
	reason = xkv_addresses_answerable(a);
	if (reason == XKV_R_OK && c) { /* this CPU's entry: no other writer */
		c->src[0] = a->src[0];
		c->src[1] = a->src[1];
		c->dst[0] = a->dst[0];
		c->dst[1] = a->dst[1];
		c->mac_dst = a->mac_dst;
		c->tag = gen + 1;
	}
	return reason;
}

/* The xkv header at the start of the UDP payload, payload_len bytes, into *req. */
static __always_inline int xkv_parse_request(struct xdp_md *ctx, struct xkv_hdr *hdr,
					     __u32 payload_len, struct xkv_request *req)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	enum xkv_reason reason;

	if (payload_len < sizeof(*hdr) || (void *)(hdr + 1) > data_end)
		return XKV_R_TRUNCATED;
	reason = xkv_hdr_check(hdr, payload_len);
	if (reason != XKV_R_OK)
		return reason;
	if (hdr->op & XKV_OP_REPLY)
		return XKV_R_REPLY_TO_SERVER;
	req->op = hdr->op;
	req->key_off = (void *)(hdr + 1) - data + xkv_ext_len(hdr); /* a directory's extension first */
	req->key_len = xkv_be16(hdr->key_len);
	req->value_len = xkv_be32(hdr->value_len);
	req->frag_len = xkv_be32(hdr->frag_len);
	return XKV_R_OK;
}

/*
 * When the kernel saw the request, for the server's latency (include/xkv/latency.h):
 * in the metadata before the packet, which AF_XDP copies into the socket's frame. A
 * driver without metadata leaves it unstamped, and the server counts it so.
 */
static __always_inline void xkv_stamp_arrival(struct xdp_md *ctx)
{
	struct xkv_arrival_meta *meta;
	__u64 now;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		return;
	meta = (void *)(long)ctx->data_meta;
	if ((void *)(meta + 1) > (void *)(long)ctx->data)
		return;
	now = bpf_ktime_get_ns();
	meta->ns = now;
	meta->check = now ^ XKV_ARRIVAL_MAGIC;
}

/*
 * The hash of the key where it lies in the packet (no copy): XKV_R_OK and *hash, or
 * why not. A global function, verified once: every header layout (VLAN, IP options,
 * IPv6 extension headers) and both protocols reach it as one state, so the verifier
 * walks the hash's paths once, not once per layout. The parsers proved the bounds; the
 * verifier needs them again here.
 */
__noinline int xkv_key_hash(struct xdp_md *ctx, __u64 key_off, __u32 key_len, __u64 *hash)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (!hash)
		return XKV_R_BAD_CONFIG;
	barrier_var(key_len);
	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return XKV_R_BAD_KEY_LEN;
	if (key_off > XKV_KEY_OFF_MAX)
		return XKV_R_TRUNCATED;
	if (xkv_hash_within((const __u8 *)data + key_off, key_len, data_end, hash))
		return XKV_R_TRUNCATED;
	return XKV_R_OK;
}

/*
 * A request that passed its protocol's checks, to its worker's AF_XDP socket. draw:
 * xkv_random()'s, taken early for a GET (xkv_xdp); a write draws here if it must.
 */
static __always_inline int xkv_steer_request(struct xdp_md *ctx, const struct xkv_config *cfg,
					     const struct xkv_request *req, __u64 hash, __u32 draw)
{
	__u32 worker, drop;
	__u64 *steered;
	int claimed;

	claimed = xkv_ewt_claimed(cfg->policy, req->op, req->frag_len, req->value_len);
	/*
	 * A held slot decides where a claimed write goes (a join: most writes to a hot key),
	 * so no candidate is drawn for it. Else chosen once, outside xkv_ewt_claim's loop:
	 * the verifier walks the choice once.
	 */
	if (!claimed || !xkv_ewt_held_by(xkv_partition(hash), &worker))
		worker = xkv_choose_worker(cfg, req->op, req->value_len, hash,
					   claimed ? xkv_random() : draw, claimed);
	if (claimed)
		drop = xkv_ewt_claim(cfg, ctx->rx_queue_index, xkv_partition(hash), &worker);
	else
		drop = xkv_redirect_to(cfg, ctx->rx_queue_index, worker);
	if (drop != XKV_R_OK)
		return xkv_drop(drop);
	/* from here on only the redirect: a claimed EWT slot counts this packet */
	if (!cfg->no_arrival_stamp)
		xkv_stamp_arrival(ctx);
	xkv_depth_add(worker);
	steered = bpf_map_lookup_elem(&xkv_steered, &worker);
	if (steered)
		*steered += 1;
	return XDP_REDIRECT;
}

SEC("xdp")
int xkv_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct xkv_config *shared;
	struct xkv_config cfg;
	struct xkv_request req;
	struct xkv_udp_view v;
	__u32 zero = 0, drop, early, parsed, payload_len, draw = 0;
	__u64 frame_len, hash = 0;
	bool memcached;
	__u16 dport;

	shared = bpf_map_lookup_elem(&xkv_config, &zero);
	if (!shared)
		return xkv_pass();
	/* each field read once: a concurrent update can't change a value after its check */
	cfg = *(volatile const struct xkv_config *)shared;
	if (!cfg.port || !xkv_parse_udp(data, data_end, &v))
		return xkv_pass();
	dport = bpf_ntohs(v.udp->dest);
	memcached = cfg.memcached_port && dport == cfg.memcached_port && dport != cfg.port;
	if (dport != cfg.port && !memcached)
		return xkv_pass();

	if (cfg.workers < 1 || cfg.workers > XKV_WORKERS_MAX || cfg.policy >= XKV_POLICY_END)
		return xkv_drop(XKV_R_BAD_CONFIG);
	/*
	 * The request is read and its key hashed before the addresses are checked, though
	 * their faults are counted first: the hash's chain of multiplies then runs beside
	 * the checks rather than ahead of steering (an erew GET 3 ns less, bench-xdp). What
	 * the headers said is kept as one reason, so that no packet pointer is live past
	 * the parse: the verifier then walks the checks once per outcome, not per layout.
	 */
	early = v.ip_len_bad ? XKV_R_BAD_IP_LEN
		: v.fragment ? XKV_R_IP_FRAGMENT /* xkv never needs them (docs/LOADER.md) */
		: bpf_ntohs(v.udp->len) != v.ip_payload_len ? XKV_R_BAD_UDP_LEN
		: XKV_R_OK;
	frame_len = data_end - data;
	payload_len = v.ip_payload_len - sizeof(struct udphdr);
	if (memcached)
		parsed = xkv_mc_parse(ctx, (void *)(v.udp + 1) - data, payload_len, &req);
	else
		parsed = xkv_parse_request(ctx, (struct xkv_hdr *)(v.udp + 1), payload_len, &req);
	if (parsed == XKV_R_OK)
		parsed = xkv_key_hash(ctx, req.key_off, req.key_len, &hash);
	/* drawn here too, for the same reason: a GET under a policy of two choices */
	if (parsed == XKV_R_OK && req.op == XKV_OP_GET && cfg.policy != XKV_POLICY_EREW)
		draw = xkv_random();
	drop = xkv_check_addresses(&v.addr);
	if (drop != XKV_R_OK)
		return xkv_drop(drop);
	if (early != XKV_R_OK)
		return xkv_drop(early);
	if (parsed != XKV_R_OK)
		return xkv_drop(parsed);
	/*
	 * The kernel refuses a frame larger than a socket's after the redirect
	 * (xsk_rcv_check): a write would keep its EWT hold, a request its queue depth.
	 */
	if (cfg.frame_max && frame_len > cfg.frame_max)
		return xkv_drop(XKV_R_FRAME_TOO_LARGE);
	return xkv_steer_request(ctx, &cfg, &req, hash, draw);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
