// SPDX-License-Identifier: MIT
/*
 * The coherence directory's XDP program (bpf/dir.bpf.c) under BPF_PROG_RUN: every row
 * of Pegasus's Algorithms 1 and 2, versions that wrap, servers out of range, traffic
 * that is not its business and traffic that is malformed. Each packet must get its
 * verdict and grow exactly its one counter, and the frame that leaves must say what
 * the directory decided (addresses, checksum, the extension's fields). The test
 * network has no route to the servers, so a steered datagram leaves by XDP_PASS, to
 * the kernel's forwarding, rather than by a redirect.
 */
#define _GNU_SOURCE /* unshare */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include "xkv/dir.h"
#include "xkv/hash.h"
#include "dir_fixture.h"
#include "packet.h"
#include "skip.h"

#define SERVERS	  DIR_SERVERS
#define CLIENT	  DIR_CLIENT
#define FOREIGN	  "10.0.9.9" /* no server's address */
#define HOT_KEY	  "hot"
#define IP_OFF	  ETH_HLEN
#define UDP_OFF	  (IP_OFF + 20)
#define EXT_OFF	  (UDP_OFF + 8 + sizeof(struct xkv_hdr))

static struct dir_bpf *skel;

const char *suite_skip_reason(void)
{
	return skip_reason_bpf(BPF_PROG_TYPE_XDP);
}

static void config(enum xkv_dir_select select, __u32 live)
{
	cr_assert_eq(dir_fixture_config(skel, select, live), 0);
}

static void setup(void)
{
	skel = dir_fixture_open();
	cr_assert_not_null(skel, "the directory's program does not load");
}

static void teardown(void)
{
	dir_bpf__destroy(skel);
}

TestSuite(dir, .init = setup, .fini = teardown);

static __u64 hot_hash(void)
{
	return xkv_hash(HOT_KEY, strlen(HOT_KEY));
}

/* HOT_KEY in the directory: replica set rset, versions, home. */
static void replicate(__u32 rset, __u64 ver_curr, __u64 ver_next, __u32 home, bool migrating)
{
	struct xkv_dir_entry e = {.rset = rset, .ver_curr = ver_curr, .ver_next = ver_next,
				  .home = home};
	__u64 hash = hot_hash();
	__u32 one = 1;

	cr_assert_eq(dir_fixture_replicate(skel, HOT_KEY, &e), 0);
	if (migrating)
		cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_migrating), &hash,
						 &one, 0),
			     0);
}

static struct xkv_dir_entry entry(void)
{
	struct xkv_dir_entry e = {0};
	__u64 hash = hot_hash();

	cr_assert_eq(bpf_map_lookup_elem_flags(bpf_map__fd(skel->maps.xkv_dir_keys), &hash, &e,
					       BPF_F_LOCK), 0, "HOT_KEY is not in the directory");
	return e;
}

static __u64 counter(__u32 slot)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 values[ncpu], sum = 0;

	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xkv_dir_stats), &slot, values), 0);
	for (int i = 0; i < ncpu; i++)
		sum += values[i];
	return sum;
}

struct out {
	__u8 frame[PKT_SIZE_MAX];
	__u32 len;
	__u32 verdict;
};

/*
 * Runs spec once, as it came in on interface ingress (0: none); exactly the counters
 * of the mask `counted` grow, each by one.
 */
static struct out run_on(const struct pkt_spec *spec, __u32 ingress, __u64 counted)
{
	__u8 in[PKT_SIZE_MAX];
	struct pkt_layout layout;
	__u64 before[XKV_DIR_STAT_MAX];
	struct out o = {0};
	struct xdp_md ctx = {.ingress_ifindex = ingress};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_out = o.frame,
		    .data_size_out = sizeof(o.frame));

	if (ingress) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	pkt_build(spec, in, &layout);
	ctx.data_end = (__u32)layout.len;
	opts.data_size_in = (__u32)layout.len;
	for (__u32 s = 0; s < XKV_DIR_STAT_MAX; s++)
		before[s] = counter(s);
	cr_assert_eq(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xkv_dir), &opts), 0);
	o.verdict = opts.retval;
	o.len = opts.data_size_out;
	for (__u32 s = 0; s < XKV_DIR_STAT_MAX; s++)
		cr_assert_eq(counter(s) - before[s], counted >> s & 1, "counter %s grew by %llu",
			     xkv_dir_stat_name(s), (unsigned long long)(counter(s) - before[s]));
	return o;
}

static struct out run_counting(const struct pkt_spec *spec, __u64 counted)
{
	return run_on(spec, 0, counted);
}

/* Runs spec once; exactly the counter `counted` grows. */
static struct out run(const struct pkt_spec *spec, __u32 counted)
{
	return run_counting(spec, 1ull << counted);
}

/* The packet the same spec builds, to compare an unchanged frame with. */
static void assert_unchanged(const struct pkt_spec *spec, const struct out *o)
{
	__u8 in[PKT_SIZE_MAX];
	struct pkt_layout layout;

	pkt_build(spec, in, &layout);
	cr_assert_eq(o->len, layout.len);
	cr_assert_eq(memcmp(in, o->frame, o->len), 0, "the frame was changed");
}

static const struct iphdr *ip_of(const struct out *o)
{
	return (const struct iphdr *)(o->frame + IP_OFF);
}

static const struct udphdr *udp_of(const struct out *o)
{
	return (const struct udphdr *)(o->frame + UDP_OFF);
}

static struct xkv_dir_ext ext_of(const struct out *o)
{
	struct xkv_dir_ext e;

	memcpy(&e, o->frame + EXT_OFF, sizeof(e));
	return e;
}

/* Whether the frame's IPv4 header checksum holds. */
static bool ip_checksum_holds(const struct out *o)
{
	const __u8 *h = o->frame + IP_OFF;
	__u32 sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void assert_addr(__be32 addr, const char *want)
{
	char text[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr, text, sizeof(text));
	cr_assert_str_eq(text, want);
}

/* A client's request for key from CLIENT to server 0, version 3 unless v2. */
static struct pkt_spec request(__u8 op, const char *key, bool v2)
{
	/* a checksum a rewrite would make wrong: the directory must clear it */
	struct pkt_spec s = {.op = op, .dir = !v2, .src = CLIENT, .dst = "10.0.1.1",
			     .udp_check = 0xbeef};

	snprintf(s.key, sizeof(s.key), "%s", key);
	if (op == XKV_OP_PUT)
		s.value_len = s.frag_len = 8;
	return s;
}

/* Server id's reply to CLIENT about HOT_KEY at version ver, the client having addressed target. */
static struct pkt_spec reply(__u32 id, __u64 ver, __u8 target, __u32 load)
{
	struct pkt_spec s = {.op = XKV_OP_GET | XKV_OP_REPLY, .dir = true, .no_key = true,
			     .dst = CLIENT, .dport = 40000, .sport = PKT_PORT, .udp_check = 0xbeef};

	dir_fixture_server(id, s.src, sizeof(s.src));
	s.dir_ext = (struct xkv_dir_ext){.key_hash = htobe64(hot_hash()), .ver = htobe64(ver),
				     .load = htonl(load), .target = target,
				     .dflags = XKV_DIR_STEERED};
	return s;
}

/* Where a steered request went: its server's id, the frame checked on the way. */
static __u32 steered_to(const struct out *o, __u32 target)
{
	struct xkv_dir_ext e = ext_of(o);
	char want[16];
	__u32 id = (ntohl(ip_of(o)->daddr) & 0xff) - 1;

	cr_assert_eq(o->verdict, XDP_PASS, "no route here: the kernel forwards it");
	cr_assert_lt(id, SERVERS);
	dir_fixture_server(id, want, sizeof(want));
	assert_addr(ip_of(o)->daddr, want);
	cr_assert(ip_checksum_holds(o), "the IP checksum does not hold after the rewrite");
	cr_assert_eq(udp_of(o)->check, 0, "a UDP checksum left over rewritten bytes");
	cr_assert_eq(be64toh(e.key_hash), hot_hash());
	cr_assert_eq(e.target, target, "the addressed server, for the reply's source");
	cr_assert_eq(e.dflags, XKV_DIR_STEERED);
	return id;
}

/* Algorithm 1, lines 2-3: a READ goes to a server of the replica set. */
Test(dir, a_read_goes_to_its_replica_set)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct out o;

	replicate(1u << 2, 7, 7, 0, false);
	o = run(&get, XKV_DIR_STAT_READ);
	cr_assert_eq(steered_to(&o, 0), 2);
	cr_assert_eq(be64toh(ext_of(&o).ver), 0, "a READ carries no version");
	cr_assert_eq(entry().reads, 1);
}

/* Round-robin turns over the replica set, and only over it. */
Test(dir, reads_turn_over_the_replica_set)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	__u32 seen = 0;

	replicate(1u << 1 | 1u << 3, 7, 7, 0, false);
	for (int i = 0; i < 8; i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		seen |= 1u << steered_to(&o, 0);
	}
	cr_assert_eq(seen, 1u << 1 | 1u << 3);
}

/* Algorithm 1, lines 4-6: a WRITE takes ++ver_next and goes to a server the policy picks. */
Test(dir, a_write_is_stamped_with_the_next_version)
{
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);
	struct out o;
	__u32 to;

	replicate(1u << 0, 5, 5, 0, false);
	o = run(&put, XKV_DIR_STAT_WRITE);
	to = steered_to(&o, 0);
	cr_assert_eq(be64toh(ext_of(&o).ver), 6);
	cr_assert_eq(ntohl(ext_of(&o).write_set), 1u << to);
	cr_assert_eq(entry().ver_next, 6);
	cr_assert_eq(entry().ver_curr, 5, "current only once a server acknowledges");
	cr_assert_eq(entry().rset, 1u << 0);
	o = run(&put, XKV_DIR_STAT_WRITE);
	cr_assert_eq(be64toh(ext_of(&o).ver), 7);
	cr_assert_eq(entry().writes, 2);
}

Test(dir, least_loaded_picks_by_the_loads_replies_reported)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);
	const __u32 loads[SERVERS] = {5, 1, 9, 3};
	struct out o;

	config(XKV_DIR_SELECT_LEAST_LOADED, 0xf);
	replicate(1u << 0 | 1u << 2 | 1u << 3, 4, 4, 0, false);
	for (__u32 id = 0; id < SERVERS; id++) {
		const struct pkt_spec r = reply(id, 1, 0, loads[id]);

		run(&r, XKV_DIR_STAT_REPLY_OLDER);
	}
	o = run(&get, XKV_DIR_STAT_READ);
	cr_assert_eq(steered_to(&o, 0), 3, "the least loaded of the replica set");
	o = run(&put, XKV_DIR_STAT_WRITE);
	cr_assert_eq(steered_to(&o, 0), 1, "the least loaded of all");
}

/* Sec. 6.5: while a key is removed, its writes go home only. */
Test(dir, a_migrating_keys_writes_go_home)
{
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);

	replicate(1u << 0 | 1u << 1, 3, 3, 2, true);
	for (int i = 0; i < 4; i++) {
		struct out o = run(&put, XKV_DIR_STAT_WRITE);

		cr_assert_eq(steered_to(&o, 0), 2);
	}
}

Test(dir, servers_not_live_are_never_chosen)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);
	struct out o;

	config(XKV_DIR_SELECT_ROUND_ROBIN, 1u << 1);
	replicate(1u << 2, 3, 3, 0, false);
	o = run(&get, XKV_DIR_STAT_NO_SERVER);
	cr_assert_eq(o.verdict, XDP_DROP, "the replica set's only server is down");
	cr_assert_eq(entry().reads, 0);
	for (int i = 0; i < 4; i++) {
		o = run(&put, XKV_DIR_STAT_WRITE);
		cr_assert_eq(steered_to(&o, 0), 1);
	}
}

/* A version wraps: the next after 2^64 - 1 is 0, and 0 is newer than 2^64 - 1. */
Test(dir, versions_wrap)
{
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);
	const struct pkt_spec newer = reply(2, 0, 0, 0);
	struct out o;

	replicate(1u << 1, UINT64_MAX, UINT64_MAX, 0, false);
	o = run(&put, XKV_DIR_STAT_WRITE);
	cr_assert_eq(be64toh(ext_of(&o).ver), 0);
	cr_assert_eq(entry().ver_next, 0);
	run(&newer, XKV_DIR_STAT_REPLY_NEWER);
	cr_assert_eq(entry().ver_curr, 0);
	cr_assert_eq(entry().rset, 1u << 2);
}

/* Algorithm 2, lines 2-4 and 5-6: a higher version resets the set, an equal one joins it. */
Test(dir, replies_reset_or_join_the_replica_set)
{
	const struct pkt_spec newer = reply(2, 9, 0, 0), same = reply(3, 9, 0, 0);
	const struct pkt_spec older = reply(1, 8, 0, 0);

	replicate(1u << 0 | 1u << 1, 8, 9, 0, false);
	run(&newer, XKV_DIR_STAT_REPLY_NEWER);
	cr_assert_eq(entry().ver_curr, 9);
	cr_assert_eq(entry().rset, 1u << 2, "reset to the sender alone");
	run(&same, XKV_DIR_STAT_REPLY_SAME);
	cr_assert_eq(entry().rset, 1u << 2 | 1u << 3, "the sender joins");
	run(&older, XKV_DIR_STAT_REPLY_OLDER);
	cr_assert_eq(entry().rset, 1u << 2 | 1u << 3, "an older version changes nothing");
	cr_assert_eq(entry().ver_curr, 9);
}

/* A reply that vouches for no version (a busy server) leaves the set, but reaches the client. */
Test(dir, a_reply_without_a_version_changes_nothing)
{
	struct pkt_spec busy = reply(2, 0, 1, 0);
	struct out o;

	busy.dir_ext.dflags |= XKV_DIR_NO_VERSION;
	replicate(1u << 0, 0, 0, 0, false);
	o = run(&busy, XKV_DIR_STAT_REPLY_NO_VERSION);
	cr_assert_eq(entry().rset, 1u << 0, "version 0 would have let it join");
	assert_addr(ip_of(&o)->saddr, "10.0.1.2");
}

/* Recovering (Sec. 6.7): no request passes, steered or not; replies still do. */
Test(dir, a_holding_directory_drops_every_request)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec cold = request(XKV_OP_GET, "cold", true);
	const struct pkt_spec r = reply(2, 9, 0, 0);
	struct xkv_dir_config cfg = {.port = PKT_PORT, .nservers = DIR_SERVERS, .live = 0xf,
				     .flags = XKV_DIR_HOLD};
	__u32 zero = 0;

	replicate(1u << 2, 9, 9, 0, false);
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_config), &zero, &cfg, 0),
		     0);
	cr_assert_eq(run(&get, XKV_DIR_STAT_HELD).verdict, XDP_DROP);
	cr_assert_eq(run(&cold, XKV_DIR_STAT_HELD).verdict, XDP_DROP);
	cr_assert_eq(run(&r, XKV_DIR_STAT_REPLY_SAME).verdict, XDP_PASS);
}

/*
 * Sec. 6.4: a WRITE goes to as many servers as its key has had reads per write, up to
 * write_max; for more than one it passes, set in its extension, for tc's copies.
 */
Test(dir, a_write_goes_to_as_many_servers_as_reads_per_write_up_to_the_most)
{
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);
	struct xkv_dir_config cfg = {.port = PKT_PORT, .nservers = DIR_SERVERS, .live = 0xf,
				     .write_max = 3};
	struct xkv_dir_entry e = {.rset = 1u << 0, .ver_curr = 5, .ver_next = 5, .reads = 1};
	struct xkv_dir_fanout meta;
	__u64 hash = hot_hash();
	__u32 zero = 0, set;
	struct out o;

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_config), &zero, &cfg, 0),
		     0);
	cr_assert_eq(dir_fixture_replicate(skel, HOT_KEY, &e), 0);
	/* 1 read for 0 writes: one server, as ever */
	o = run(&put, XKV_DIR_STAT_WRITE);
	cr_assert_eq(__builtin_popcount(ntohl(ext_of(&o).write_set)), 1);
	/* 10 reads for 1 write: 5 a write, the most 3 */
	e.reads = 10;
	e.writes = 1;
	e.ver_next = 6;
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_keys), &hash, &e, 0), 0);
	o = run_counting(&put, 1ull << XKV_DIR_STAT_WRITE | 1ull << XKV_DIR_STAT_FANOUT);
	cr_assert_eq(o.verdict, XDP_PASS, "for the tc program's copies");
	/* BPF_PROG_RUN hands the metadata back before the frame */
	memcpy(&meta, o.frame, sizeof(meta));
	memmove(o.frame, o.frame + sizeof(meta), o.len - sizeof(meta));
	set = ntohl(ext_of(&o).write_set);
	cr_assert_eq(__builtin_popcount(set), 3, "write set 0x%x", set);
	cr_assert_eq(be64toh(ext_of(&o).ver), 7, "one version for every copy");
	cr_assert_eq(entry().ver_next, 7);
	cr_assert_eq(meta.magic, XKV_DIR_FANOUT_MAGIC);
	cr_assert_eq(meta.write_set, set, "the copies go where the extension says");
	cr_assert_eq(meta.ip_off, sizeof(struct ethhdr));
	cr_assert_eq(meta.udp_off, sizeof(struct ethhdr) + sizeof(struct iphdr));
	cr_assert_eq(udp_of(&o)->check, 0);
	/* while it is removed, home alone, whatever the reads */
	replicate(1u << 0, 7, 7, 2, true);
	o = run(&put, XKV_DIR_STAT_WRITE);
	cr_assert_eq(ntohl(ext_of(&o).write_set), 1u << 2);
}

/* Each piece of a WRITE would take a version, and maybe a server, of its own. */
Test(dir, a_replicated_keys_write_in_pieces_is_dropped)
{
	struct pkt_spec piece = request(XKV_OP_PUT, HOT_KEY, false);
	struct out o;

	piece.value_len = 2 * piece.frag_len;
	replicate(1u << 0, 5, 5, 0, false);
	o = run(&piece, XKV_DIR_STAT_SPLIT_WRITE);
	cr_assert_eq(o.verdict, XDP_DROP);
	cr_assert_eq(entry().ver_next, 5, "no version taken");
}

/* What a client writes in the extension goes: no reply can pass for a steered one. */
Test(dir, a_clients_extension_is_cleared_where_the_directory_does_not_steer)
{
	struct pkt_spec forged = request(XKV_OP_PUT, "cold", false);
	const struct xkv_dir_ext zero = {0};
	struct xkv_dir_ext e;
	struct out o;

	replicate(1u << 2, 9, 9, 0, false);
	forged.dir_ext = (struct xkv_dir_ext){.key_hash = htobe64(hot_hash()),
					      .ver = htobe64(1ull << 62), .target = 1,
					      .dflags = XKV_DIR_STEERED};
	o = run(&forged, XKV_DIR_STAT_UNREPLICATED);
	cr_assert_eq(o.verdict, XDP_PASS);
	e = ext_of(&o);
	cr_assert_eq(memcmp(&e, &zero, sizeof(e)), 0, "a client's fields went on to the server");
}

/* A version past ver_next was never given: no server can have acknowledged it. */
Test(dir, a_reply_with_a_version_never_given_changes_nothing)
{
	const struct pkt_spec forged = reply(3, 7, 0, 0);
	struct out o;

	replicate(1u << 2, 5, 6, 0, false);
	o = run(&forged, XKV_DIR_STAT_REPLY_UNISSUED);
	cr_assert_eq(o.verdict, XDP_PASS, "its client still gets it");
	assert_addr(ip_of(&o)->saddr, "10.0.1.1");
	cr_assert_eq(entry().rset, 1u << 2);
	cr_assert_eq(entry().ver_curr, 5);
}

/* Every server of the set may report the highest load: the choice stays in the set. */
Test(dir, least_loaded_never_leaves_the_set)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct out o;

	config(XKV_DIR_SELECT_LEAST_LOADED, 0xf);
	replicate(1u << 2, 4, 4, 0, false);
	for (__u32 id = 0; id < SERVERS; id++) {
		const struct pkt_spec r = reply(id, 1, 0, UINT32_MAX);

		run(&r, XKV_DIR_STAT_REPLY_OLDER);
	}
	o = run(&get, XKV_DIR_STAT_READ);
	cr_assert_eq(steered_to(&o, 0), 2);
}

/* A client may send from the xkv port too: its reply is still a reply. */
Test(dir, a_reply_to_a_client_on_the_xkv_port_is_a_reply)
{
	struct pkt_spec r = reply(2, 10, 0, 0);
	struct out o;

	replicate(1u << 1, 9, 10, 0, false);
	r.dport = PKT_PORT;
	o = run(&r, XKV_DIR_STAT_REPLY_NEWER);
	cr_assert_eq(entry().rset, 1u << 2);
	assert_addr(ip_of(&o)->saddr, "10.0.1.1");
}

/* A reply leaves from the server the client addressed, whichever answered. */
Test(dir, a_reply_takes_the_address_the_client_sent_to)
{
	const struct pkt_spec r = reply(2, 9, 1, 0);
	struct out o;

	replicate(1u << 2, 9, 9, 0, false);
	o = run(&r, XKV_DIR_STAT_REPLY_SAME);
	cr_assert_eq(o.verdict, XDP_PASS);
	assert_addr(ip_of(&o)->saddr, "10.0.1.2");
	assert_addr(ip_of(&o)->daddr, CLIENT);
	cr_assert_eq(ntohs(udp_of(&o)->source), PKT_PORT);
	cr_assert(ip_checksum_holds(&o));
	cr_assert_eq(udp_of(&o)->check, 0);
}

/* The directory dropped the key meanwhile: the reply still reaches the client. */
Test(dir, a_reply_for_a_key_no_longer_held_still_reaches_its_client)
{
	const struct pkt_spec r = reply(2, 9, 0, 0);
	struct out o = run(&r, XKV_DIR_STAT_REPLY_UNKNOWN);

	cr_assert_eq(o.verdict, XDP_PASS);
	assert_addr(ip_of(&o)->saddr, "10.0.1.1");
}

Test(dir, servers_out_of_range_are_refused)
{
	struct pkt_spec from_nowhere = reply(2, 9, 0, 0), to_nowhere = reply(2, 9, SERVERS, 0);
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct xkv_dir_addr addr = {.port = htons(PKT_PORT)};
	__u32 beyond = SERVERS + 3;
	struct out o;

	replicate(1u << 2, 9, 9, 0, false);
	snprintf(from_nowhere.src, sizeof(from_nowhere.src), "%s", FOREIGN);
	o = run(&from_nowhere, XKV_DIR_STAT_BAD_SERVER);
	cr_assert_eq(o.verdict, XDP_DROP, "a steered reply from no server of ours");
	o = run(&to_nowhere, XKV_DIR_STAT_BAD_SERVER);
	cr_assert_eq(o.verdict, XDP_DROP, "a target beyond the servers");
	cr_assert_eq(entry().rset, 1u << 2, "neither touched the replica set");
	/* an address the table maps to an id past the configured servers */
	inet_pton(AF_INET, "10.0.1.1", &addr.addr);
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_addrs), &addr, &beyond, 0),
		     0);
	o = run(&get, XKV_DIR_STAT_BAD_SERVER);
	cr_assert_eq(o.verdict, XDP_DROP);
}

/* What is not a replicated key's passes unchanged, each counted once. */
Test(dir, unreplicated_and_foreign_traffic_passes_unchanged)
{
	const struct pkt_spec cold = request(XKV_OP_GET, "cold", false);
	const struct pkt_spec cold_v2 = request(XKV_OP_PUT, "cold", true);
	struct pkt_spec other_port = request(XKV_OP_GET, HOT_KEY, false), v6 = {.ipv6 = true};
	struct pkt_spec tcp = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec to_foreign = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec unsteered = {.op = XKV_OP_GET | XKV_OP_REPLY, .no_key = true,
					   .src = "10.0.1.1", .dst = CLIENT, .dport = 40000,
					   .sport = PKT_PORT};
	const struct {
		const struct pkt_spec *spec;
		__u32 counted;
	} rows[] = {
		{&cold, XKV_DIR_STAT_UNREPLICATED},	  {&cold_v2, XKV_DIR_STAT_UNREPLICATED},
		{&other_port, XKV_DIR_STAT_PASSED},	  {&v6, XKV_DIR_STAT_PASSED},
		{&tcp, XKV_DIR_STAT_PASSED},		  {&to_foreign, XKV_DIR_STAT_UNKNOWN_TARGET},
		{&unsteered, XKV_DIR_STAT_UNREPLICATED},
	};

	replicate(1u << 2, 9, 9, 0, false);
	other_port.dport = PKT_PORT + 1;
	tcp.l4 = IPPROTO_TCP;
	snprintf(to_foreign.dst, sizeof(to_foreign.dst), "%s", FOREIGN);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct out o = run(rows[i].spec, rows[i].counted);

		cr_assert_eq(o.verdict, XDP_PASS, "row %zu", i);
		assert_unchanged(rows[i].spec, &o);
	}
	cr_assert_eq(entry().reads, 0);
}

/* An old client cannot reach a replicated key: its home may not hold the newest value. */
Test(dir, a_version_2_request_for_a_replicated_key_is_dropped)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, true);
	struct out o;

	replicate(1u << 2, 9, 9, 0, false);
	o = run(&get, XKV_DIR_STAT_NO_EXTENSION);
	cr_assert_eq(o.verdict, XDP_DROP);
}

/* Malformed datagrams to or from the port are counted and left to the server to refuse. */
Test(dir, malformed_datagrams_are_counted)
{
	struct pkt_spec bad_magic = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec cut_ext = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec bad_key_len = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec ext_without_flag = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec reply_to_port = reply(2, 9, 0, 0);
	struct pkt_spec request_from_port = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec udp_len_lie = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec *rows[] = {&bad_magic,	   &cut_ext,	       &bad_key_len,
				   &ext_without_flag, &reply_to_port, &request_from_port,
				   &udp_len_lie};

	replicate(1u << 2, 9, 9, 0, false);
	bad_magic.magic = 0x1234;
	cut_ext.payload = sizeof(struct xkv_hdr) + 10;
	bad_key_len.key_len_delta = 300;
	ext_without_flag.flags = 0x02;
	reply_to_port.dport = PKT_PORT;
	reply_to_port.sport = 40000;
	request_from_port.sport = PKT_PORT;
	request_from_port.dport = 40000;
	udp_len_lie.udp_len_delta = 200;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct out o = run(rows[i], XKV_DIR_STAT_MALFORMED);

		cr_assert_eq(o.verdict, XDP_PASS, "row %zu", i);
		assert_unchanged(rows[i], &o);
	}
	cr_assert_eq(entry().reads, 0);
	cr_assert_eq(entry().rset, 1u << 2);
}

/* Every byte of a steered request cut short: never steered, never a fault. */
Test(dir, a_request_cut_at_every_byte_is_never_steered)
{
	struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	__u8 full[PKT_SIZE_MAX];
	struct pkt_layout layout;

	replicate(1u << 2, 9, 9, 0, false);
	pkt_build(&get, full, &layout);
	for (__u16 cut = ETH_HLEN; cut < layout.len; cut++) { /* the least BPF_PROG_RUN takes */
		__u64 reads = counter(XKV_DIR_STAT_READ);
		struct out o;

		get.cut = cut;
		o = run(&get, cut < UDP_OFF + 8 ? XKV_DIR_STAT_PASSED : XKV_DIR_STAT_MALFORMED);
		cr_assert_eq(o.verdict, XDP_PASS, "cut at %u", cut);
		cr_assert_eq(counter(XKV_DIR_STAT_READ), reads);
	}
}

/*
 * Sec. 6.6: a stray a server sends home, from its client's address and marked, passes
 * as it is (steered already: a collision with a replicated key's hash would steer it
 * again, round and round); one that arrives where its client lives is a client's, and
 * is dropped, as is one from nowhere a route leads. In a network of the test's own: lo,
 * the servers' side, and a veth with the clients' network.
 */
Test(dir, a_stray_passes_from_the_servers_side_and_a_forged_one_is_dropped)
{
	struct pkt_spec stray = request(XKV_OP_PUT, HOT_KEY, false);
	struct pkt_spec nowhere;
	__u32 servers_side, clients_side;
	struct out o;

	cr_assert_eq(unshare(CLONE_NEWNET), 0, "a network namespace of its own");
	cr_assert_eq(system("ip link set lo up && ip link add xkvc type veth peer name xkvp && "
			    "ip addr add 10.0.0.254/24 dev xkvc && ip link set xkvc up && "
			    "ip link set xkvp up && sysctl -qw net.ipv4.ip_forward=1"),
		     0);
	servers_side = if_nametoindex("lo");
	clients_side = if_nametoindex("xkvc");
	replicate(1u << 1, 9, 9, 0, false);
	stray.dir_ext = (struct xkv_dir_ext){.key_hash = htobe64(hot_hash()), .ver = htobe64(7),
					     .target = 0,
					     .dflags = XKV_DIR_STEERED | XKV_DIR_FORWARDED};
	o = run_on(&stray, servers_side, 1ull << XKV_DIR_STAT_FORWARDED);
	cr_assert_eq(o.verdict, XDP_PASS, "no route to the servers here: the kernel's");
	assert_unchanged(&stray, &o);
	cr_assert_eq(entry().ver_next, 9, "not stamped again");
	o = run_on(&stray, clients_side, 1ull << XKV_DIR_STAT_FORGED);
	cr_assert_eq(o.verdict, XDP_DROP);
	nowhere = stray;
	snprintf(nowhere.src, sizeof(nowhere.src), "%s", FOREIGN);
	o = run_on(&nowhere, servers_side, 1ull << XKV_DIR_STAT_FORGED);
	cr_assert_eq(o.verdict, XDP_DROP);
}

/* Choosing a server: the strategies of bpf/dir_select/, and what replies tell them. */

static void config_popular(enum xkv_dir_select select, __u32 popular_ppm)
{
	struct xkv_dir_config cfg = {.port = PKT_PORT, .select = select, .nservers = DIR_SERVERS,
				     .live = 0xf, .popular_ppm = popular_ppm};
	__u32 zero = 0;

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_config), &zero, &cfg, 0),
		     0);
}

static struct xkv_dir_load load_get(void)
{
	struct xkv_dir_load load;
	__u32 zero = 0;

	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xkv_dir_load), &zero, &load), 0);
	return load;
}

static void load_put(const struct xkv_dir_load *load)
{
	__u32 zero = 0;

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_load), &zero, load, 0), 0);
}

/* Requests strategy select sent to server id, over the CPUs. */
static __u64 sent_by(enum xkv_dir_select select, __u32 id)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 slot = select * XKV_DIR_SERVERS + id;
	__u64 values[ncpu], sum = 0;

	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xkv_dir_choices), &slot, values),
		     0);
	for (int i = 0; i < ncpu; i++)
		sum += values[i];
	return sum;
}

/* bpf_ktime_get_ns's clock. */
static __u64 ktime_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (__u64)now.tv_sec * 1000000000u + (__u64)now.tv_nsec;
}

/* Server id replies n times, reporting load and service (XKV_DIR_SERVICE_UNIT ns). */
static void reports(__u32 id, __u32 n, __u32 load, __u16 service)
{
	struct pkt_spec r = reply(id, 1, 0, load);

	r.dir_ext.service = htons(service);
	for (__u32 i = 0; i < n; i++)
		run(&r, XKV_DIR_STAT_REPLY_OLDER);
}

/* Whatever the strategy, a READ stays in its replica set, a WRITE among the live, each counted. */
Test(dir, every_strategy_chooses_within_the_set_and_counts_its_choices)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec put = request(XKV_OP_PUT, HOT_KEY, false);

	replicate(1u << 1 | 1u << 3, 4, 4, 0, false);
	/* the set's servers busy and slow: a strategy that looked past the set would leave it */
	reports(1, 1, 100, 6250);
	reports(3, 1, 100, 6250);
	for (__u32 s = 0; s < XKV_DIR_SELECT_MAX; s++) {
		config(s, 0xf & ~(1u << 2));
		for (int i = 0; i < 12; i++) {
			struct out o = run(&get, XKV_DIR_STAT_READ);
			__u32 to = steered_to(&o, 0);

			cr_assert(to == 1 || to == 3, "%s sent a read to %u, not of its set",
				  xkv_dir_select_name(s), to);
		}
		for (int i = 0; i < 4; i++) {
			struct out o = run(&put, XKV_DIR_STAT_WRITE);

			cr_assert_neq(steered_to(&o, 0), 2, "%s chose a server not live",
				      xkv_dir_select_name(s));
		}
		cr_assert_eq(sent_by(s, 0) + sent_by(s, 1) + sent_by(s, 3), 16,
			     "%s counted its choices", xkv_dir_select_name(s));
		cr_assert_eq(sent_by(s, 2), 0);
	}
}

/* Its extension's stamp and service are the directory's and the server's: a client's go. */
Test(dir, a_clients_stamp_is_not_taken_for_the_directorys)
{
	struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct out o;

	replicate(1u << 1, 4, 4, 0, false);
	get.dir_ext.sent = htonl(12345);
	get.dir_ext.service = htons(7);
	o = run(&get, XKV_DIR_STAT_READ);
	steered_to(&o, 0);
	cr_assert_eq(ext_of(&o).sent, 0, "round-robin times nothing");
	cr_assert_eq(ext_of(&o).service, 0);
}

/* A steered reply tells its server's queue, time per request and round trip. */
Test(dir, a_steered_reply_tells_the_directory_of_its_server)
{
	struct pkt_spec r = reply(2, 1, 0, 24);
	struct pkt_spec unsteered = reply(1, 1, 0, 99);
	struct xkv_dir_load load;

	replicate(1u << 2, 4, 4, 0, false);
	r.dir_ext.service = htons(100);
	r.dir_ext.sent = htonl((__u32)(ktime_ns() - 80000) | 1); /* 80 us ago */
	run(&r, XKV_DIR_STAT_REPLY_OLDER);
	unsteered.dir_ext.dflags = 0;
	run(&unsteered, XKV_DIR_STAT_UNREPLICATED);
	load = load_get();
	cr_assert_eq(load.server[2].load, 24);
	cr_assert_eq(load.server[2].service_ns, 100 * XKV_DIR_SERVICE_UNIT);
	cr_assert_eq(load.server[2].queue_avg, 24 * 16, "the first sample, in 1/16ths");
	cr_assert_eq(load.server[2].service_avg, 1600);
	cr_assert_geq(load.server[2].response_avg, 80000, "the round trip it took");
	cr_assert_lt(load.server[2].response_avg, 1000000000);
	r.dir_ext.load = htonl(8);
	run(&r, XKV_DIR_STAT_REPLY_OLDER);
	cr_assert_eq(load_get().server[2].queue_avg, 24 * 16 - 24 * 2 + 8 * 2, "then 1/8 a reply");
	cr_assert_eq(load.server[1].load, 0, "an unsteered reply tells nothing");
}

/*
 * Pegasus's load prediction: each request sent adds its server's time per request to
 * the server's backlog, and the least backlog is chosen, without waiting for replies.
 */
Test(dir, predict_sends_each_request_where_the_backlog_is_least)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const __u64 ms = 1000000, far = ktime_ns() + 60000 * ms; /* no backlog drains in the test */
	const __u32 want[] = {1, 1, 1, 3, 1, 3, 1, 3};
	struct xkv_dir_load load;

	config(XKV_DIR_SELECT_PREDICT, 0xf);
	replicate(1u << 1 | 1u << 3, 4, 4, 0, false);
	reports(1, 1, 0, 62500); /* 1 ms a request */
	reports(3, 1, 0, 62500);
	load = load_get();
	load.server[1].backlog_until = far;
	load.server[3].backlog_until = far + 5 * ms / 2;
	load_put(&load);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		cr_assert_eq(steered_to(&o, 0), want[i], "read %zu", i);
	}
	load = load_get();
	cr_assert_eq(load.server[1].backlog_until, far + 5 * ms, "5 requests of 1 ms each");
	cr_assert_eq(load.server[3].backlog_until, far + 5 * ms / 2 + 3 * ms);
}

/* An idle server's backlog starts now, not where it last ended. */
Test(dir, predict_drains_a_backlog_with_time)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct xkv_dir_load load;
	__u64 before;

	config(XKV_DIR_SELECT_PREDICT, 0xf);
	replicate(1u << 1, 4, 4, 0, false);
	reports(1, 1, 0, 1000); /* 16 us */
	load = load_get();
	load.server[1].backlog_until = 1; /* long drained */
	load_put(&load);
	before = ktime_ns();
	steered_to((struct out[]){run(&get, XKV_DIR_STAT_READ)}, 0);
	cr_assert_geq(load_get().server[1].backlog_until, before + 16000);
	cr_assert_lt(load_get().server[1].backlog_until, ktime_ns() + 16000);
}

/*
 * C3: the server whose replies report a longer queue scores higher, and so does one
 * with more requests sent and not answered; each request is stamped for its round
 * trip, and its reply takes it off the count.
 */
Test(dir, c3_scores_queues_and_requests_outstanding)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct pkt_spec back = reply(1, 1, 0, 0);
	__u32 to3 = 0;

	config(XKV_DIR_SELECT_C3, 0xf);
	replicate(1u << 1 | 1u << 3, 4, 4, 0, false);
	reports(1, 1, 0, 62); /* alike but for the queue: 0 and 1 */
	reports(3, 1, 1, 62);
	for (int i = 0; i < 6; i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		cr_assert_neq(ext_of(&o).sent, 0, "stamped, for its round trip");
		back.dir_ext.sent = ext_of(&o).sent;
		to3 += steered_to(&o, 0) == 3;
	}
	/* (1 + c + q)^3: server 1 first, server 3 once 1 has requests outstanding */
	cr_assert(to3 >= 1 && to3 <= 3, "server 3 got %u of 6", to3);
	cr_assert_eq(load_get().server[1].outstanding + load_get().server[3].outstanding, 6);
	run(&back, XKV_DIR_STAT_REPLY_OLDER);
	cr_assert_eq(load_get().server[1].outstanding, 6 - to3 - 1, "answered: one less");
	cr_assert_gt(load_get().server[1].response_avg, 0);
	reports(3, 1, 400, 62); /* a long queue (q some 50): shunned while server 1's is short */
	for (int i = 0; i < 6; i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		cr_assert_eq(steered_to(&o, 0), 1, "read %d went to the long queue", i);
	}
}

/* C3's count of requests unanswered restarts each second: a lost reply cannot shun a server. */
Test(dir, c3_forgets_requests_unanswered_for_a_second)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	struct xkv_dir_load load;

	config(XKV_DIR_SELECT_C3, 0xf);
	replicate(1u << 1, 4, 4, 0, false);
	load = load_get();
	load.server[1].outstanding = 1000; /* replies lost */
	load.server[1].outstanding_since = ktime_ns() - 2000000000ull;
	load_put(&load);
	steered_to((struct out[]){run(&get, XKV_DIR_STAT_READ)}, 0);
	cr_assert_eq(load_get().server[1].outstanding, 1);
}

/* Popularity's oracle: HOT_KEY's count of requests. */
static void oracle_put(__u64 count)
{
	__u64 hash = hot_hash();

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_popularity), &hash, &count,
					 0),
		     0);
}

static __u64 oracle_get(void)
{
	__u64 hash = hot_hash(), count = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xkv_dir_popularity), &hash, &count);
	return count;
}

/*
 * Hector's Popularity-Aware: a key below the threshold always goes to one server, its
 * home; a popular one turns over its replica set. Its oracle counts the key's requests
 * and every request forwarded, replicated or not.
 */
Test(dir, popularity_keeps_a_cool_key_home_and_spreads_a_hot_one)
{
	const struct pkt_spec get = request(XKV_OP_GET, HOT_KEY, false);
	const struct pkt_spec cold = request(XKV_OP_GET, "cold", false);
	struct xkv_dir_load load = {.requests = 990};
	__u32 rset = 1u << 1 | 1u << 2 | 1u << 3, seen = 0;

	config_popular(XKV_DIR_SELECT_POPULARITY, 500000); /* half the requests */
	replicate(rset, 4, 4, 2, false);
	load_put(&load);
	for (int i = 0; i < 10; i++)
		run(&cold, XKV_DIR_STAT_UNREPLICATED);
	cr_assert_eq(load_get().requests, 1000, "an unreplicated request is one of all");
	oracle_put(10);
	for (int i = 0; i < 6; i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		cr_assert_eq(steered_to(&o, 0), 2, "a key of 1 %% of the requests stays home");
	}
	cr_assert_eq(oracle_get(), 16, "the oracle counts the key's requests");
	cr_assert_eq(load_get().requests, 1006);
	oracle_put(900);
	for (int i = 0; i < 6; i++) {
		struct out o = run(&get, XKV_DIR_STAT_READ);

		seen |= 1u << steered_to(&o, 0);
	}
	cr_assert_eq(seen, rset, "a key of most requests turns over its set");
}
