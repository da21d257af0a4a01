// SPDX-License-Identifier: MIT
/*
 * The AF_XDP client without a network: a request frame written along the client's
 * route parses (userspace/net/packet.c) as a request from the client to the
 * server, the server's reply to it parses back into the client's route, the
 * neighbour table is read right, the client XDP program passes what is not a
 * reply to a bench socket (BPF_PROG_RUN; needs root), --queues spreads threads
 * over queues only as far as it can, and no reply is built to or from a group address.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afxdp.h"
#include "bench_client.skel.h"
#include "options.h"
#include "proto/codec.h"
#include "skip.h"

#define HDR_LEN (ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr))

static const struct afxdp_endpoint client = {
	.mac = {0x02, 0, 0, 0, 0, 0x02},
	.port = 40001,
}, server = {
	.mac = {0x02, 0, 0, 0, 0, 0x01},
	.port = 7411,
};

static void endpoints(struct afxdp_endpoint *c, struct afxdp_endpoint *s)
{
	*c = client;
	*s = server;
	inet_pton(AF_INET, "10.9.0.2", &c->ip);
	inet_pton(AF_INET, "10.9.0.1", &s->ip);
}

/* A GET of "key-17" as the AF_XDP transport sends it: payload first, headers around it. */
static uint32_t request_frame(uint8_t *frame, const struct xkv_route *r, uint32_t *payload_len)
{
	struct xkv_msg get = {.op = XKV_OP_GET, .key_len = 6, .key = "key-17", .request_id = 77,
			      .timestamp = 123456789};
	int len = xkv_encode(frame + xkv_reply_hdr_len(r), 2048 - HDR_LEN, &get);

	cr_assert_gt(len, 0);
	*payload_len = (uint32_t)len;
	return xkv_reply_write_hdr(frame, r, (uint32_t)len);
}

static uint16_t ip_checksum_over(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

Test(afxdp, a_request_frame_parses_as_sent_from_client_to_server)
{
	struct afxdp_endpoint c, s;
	struct xkv_route route, parsed;
	uint8_t frame[2048];
	uint32_t payload_len, off, len, frame_len;
	struct iphdr ip;
	struct udphdr udp;
	struct xkv_msg m;

	endpoints(&c, &s);
	afxdp_reply_route(&route, &c, &s);
	frame_len = request_frame(frame, &route, &payload_len);
	cr_assert_eq(frame_len, HDR_LEN + payload_len);
	cr_assert_eq(xkv_frame_parse(frame, frame_len, &parsed, &off, &len), 0);
	cr_assert_eq(off, HDR_LEN);
	cr_assert_eq(len, payload_len);
	cr_assert_arr_eq(parsed.eth_src, c.mac, 6);
	cr_assert_arr_eq(parsed.eth_dst, s.mac, 6);
	cr_assert_eq(parsed.ip_version, 4);
	cr_assert_eq(parsed.vlan_proto, 0);
	cr_assert_arr_eq(parsed.ip_src, &c.ip, 4);
	cr_assert_arr_eq(parsed.ip_dst, &s.ip, 4);
	cr_assert_eq(ntohs(parsed.port_src), c.port);
	cr_assert_eq(ntohs(parsed.port_dst), s.port);

	memcpy(&ip, frame + ETH_HLEN, sizeof(ip));
	memcpy(&udp, frame + ETH_HLEN + sizeof(ip), sizeof(udp));
	cr_assert_eq(ip_checksum_over(frame + ETH_HLEN, sizeof(ip)), 0xffff, "IPv4 checksum");
	cr_assert_eq(ntohs(ip.tot_len), sizeof(ip) + sizeof(udp) + payload_len);
	cr_assert_gt(ip.ttl, 0);
	cr_assert_eq(udp.check, 0, "no UDP checksum over IPv4: the server never checks one");
	cr_assert_eq(xkv_decode(frame + off, len, &m), XKV_R_OK);
	cr_assert_eq(m.request_id, 77);
	cr_assert_eq(m.timestamp, 123456789);
	cr_assert_eq(memcmp(m.key, "key-17", 6), 0);

	/* one byte short of what the IP header promises: not a datagram */
	cr_assert_eq(xkv_frame_parse(frame, frame_len - 1, &parsed, &off, &len), -EINVAL);
}

Test(afxdp, the_servers_reply_parses_back_into_the_clients_route)
{
	struct afxdp_endpoint c, s;
	struct xkv_route route, request, reply;
	uint8_t frame[2048], answer[2048];
	uint32_t payload_len, off, len, answer_len;

	endpoints(&c, &s);
	afxdp_reply_route(&route, &c, &s);
	cr_assert_eq(xkv_frame_parse(frame, request_frame(frame, &route, &payload_len), &request,
				     &off, &len),
		     0);
	/* the server answers along the request's route, as its AF_XDP worker does */
	memcpy(answer + xkv_reply_hdr_len(&request), frame + off, len);
	answer_len = xkv_reply_write_hdr(answer, &request, len);
	cr_assert_eq(xkv_frame_parse(answer, answer_len, &reply, &off, &len), 0);
	cr_assert_arr_eq(reply.eth_src, route.eth_src, 6);
	cr_assert_arr_eq(reply.eth_dst, route.eth_dst, 6);
	cr_assert_arr_eq(reply.ip_src, route.ip_src, 4);
	cr_assert_arr_eq(reply.ip_dst, route.ip_dst, 4);
	cr_assert_eq(reply.port_src, route.port_src);
	cr_assert_eq(reply.port_dst, route.port_dst);
	cr_assert_eq(len, payload_len);
}

/* Whether buf[0..len) still holds only byte b. */
static bool untouched(const uint8_t *buf, size_t len, uint8_t b)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != b)
			return false;
	return true;
}

/*
 * A request from or to a multicast or broadcast address is answered by no frame: the
 * reply would go to a group, or claim a group's address as its source (the XDP program
 * drops such requests first; packet.c is the last line).
 */
Test(afxdp, no_reply_goes_to_or_comes_from_a_group_address)
{
	static const struct {
		const char *what;
		int field; /* 0 eth_src, 1 eth_dst, 2 ip_src, 3 ip_dst */
		const char *addr;
	} cases[] = {
		{"client MAC broadcast", 0, "\xff\xff\xff\xff\xff\xff"},
		{"client MAC multicast", 0, "\x01\x00\x5e\x00\x00\x01"},
		{"server MAC broadcast", 1, "\xff\xff\xff\xff\xff\xff"},
		{"server MAC multicast", 1, "\x33\x33\x00\x00\x00\x01"},
		{"client IP broadcast", 2, "255.255.255.255"},
		{"client IP multicast", 2, "239.1.2.3"},
		{"server IP broadcast", 3, "255.255.255.255"},
		{"server IP multicast", 3, "224.0.0.1"},
		{"client IPv6 multicast", 2, "ff02::1"},
		{"server IPv6 multicast", 3, "ff05::2"},
	};
	struct afxdp_endpoint c, s;
	struct xkv_route route, request, bad;
	uint8_t frame[2048], answer[2048];
	uint32_t payload_len, off, len;

	endpoints(&c, &s);
	afxdp_reply_route(&route, &c, &s);
	cr_assert_eq(xkv_frame_parse(frame, request_frame(frame, &route, &payload_len), &request,
				     &off, &len),
		     0);
	cr_assert_gt(xkv_reply_write_hdr(answer, &request, len), 0, "unicast both ways: sent");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool v6 = strchr(cases[i].addr, ':') != NULL;

		bad = request;
		if (cases[i].field < 2) {
			memcpy(cases[i].field ? bad.eth_dst : bad.eth_src, cases[i].addr, 6);
		} else {
			bad.ip_version = v6 ? 6 : 4;
			if (v6) /* an IPv6 request: the other side unicast too */
				inet_pton(AF_INET6, "fd00::9", cases[i].field == 2 ? bad.ip_dst
										  : bad.ip_src);
			inet_pton(v6 ? AF_INET6 : AF_INET, cases[i].addr,
				  cases[i].field == 2 ? bad.ip_src : bad.ip_dst);
		}
		memset(answer, 0xaa, sizeof(answer));
		cr_expect_eq(xkv_reply_write_hdr(answer, &bad, len), 0, "%s: a reply was built",
			     cases[i].what);
		cr_expect(untouched(answer, sizeof(answer), 0xaa), "%s: bytes written",
			  cases[i].what);
	}
}

static const char arp_table[] =
	"IP address       HW type     Flags       HW address            Mask     Device\n"
	"10.9.0.1         0x1         0x2         02:00:00:00:00:01     *        veth01\n"
	"10.9.0.1         0x1         0x2         0a:0b:0c:0d:0e:0f     *        veth0\n"
	"10.9.0.3         0x1         0x0         00:00:00:00:00:00     *        veth0\n"
	"10.9.0.4         0x1         0x6         02:00:00:00:00:04     *        veth0\n";

static int lookup(const char *ip, const char *dev, uint8_t mac[6])
{
	FILE *f = fmemopen((void *)arp_table, sizeof(arp_table) - 1, "r");
	struct in_addr a;
	int err;

	cr_assert_not_null(f);
	inet_pton(AF_INET, ip, &a);
	err = afxdp_arp_lookup(f, dev, a, mac);
	fclose(f);
	return err;
}

Test(afxdp, the_neighbour_table_is_read_by_address_and_device)
{
	static const uint8_t on_veth0[6] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f},
			     on_veth01[6] = {2, 0, 0, 0, 0, 1}, permanent[6] = {2, 0, 0, 0, 0, 4};
	uint8_t mac[6];

	cr_assert_eq(lookup("10.9.0.1", "veth0", mac), 0);
	cr_assert_arr_eq(mac, on_veth0, 6, "the entry of another device with a longer name");
	cr_assert_eq(lookup("10.9.0.1", "veth01", mac), 0);
	cr_assert_arr_eq(mac, on_veth01, 6);
	cr_assert_eq(lookup("10.9.0.4", "veth0", mac), 0, "complete and permanent");
	cr_assert_arr_eq(mac, permanent, 6);
	cr_assert_eq(lookup("10.9.0.3", "veth0", mac), -ENOENT, "still resolving");
	cr_assert_eq(lookup("10.9.0.9", "veth0", mac), -ENOENT);
	cr_assert_eq(lookup("10.9.0.1", "veth", mac), -ENOENT);
}

/* Runs one frame through a freshly loaded client program (server 10.9.0.1:7411). */
static int verdict(struct bench_client_bpf *skel, const uint8_t *frame, uint32_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = len, .repeat = 1);

	cr_assert_eq(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_client), &run), 0);
	return (int)run.retval;
}

static struct bench_client_bpf *load_client(void)
{
	struct bench_client_bpf *skel;
	const char *why = skip_reason_bpf(BPF_PROG_TYPE_XDP);
	struct in_addr s;

	if (why)
		cr_skip_test("%s", why);
	skel = bench_client_bpf__open();
	cr_assert_not_null(skel);
	inet_pton(AF_INET, "10.9.0.1", &s);
	skel->rodata->server_addr[10] = skel->rodata->server_addr[11] = 0xff;
	memcpy(&skel->rodata->server_addr[12], &s, 4);
	skel->rodata->server_port = htons(7411);
	cr_assert_eq(bench_client_bpf__load(skel), 0);
	return skel;
}

Test(afxdp, the_client_program_passes_all_but_replies_to_its_sockets)
{
	struct bench_client_bpf *skel = load_client();
	struct afxdp_endpoint c, s, other;
	struct xkv_route route;
	uint8_t frame[2048], arp[60] = {0};
	uint32_t len, payload_len;

	endpoints(&c, &s);
	/* a reply from the server to a port without a socket: passed and counted */
	afxdp_reply_route(&route, &s, &c); /* written along it, the frame goes server -> client */
	len = request_frame(frame, &route, &payload_len);
	cr_assert_eq(verdict(skel, frame, len), XDP_PASS);
	cr_assert_eq(skel->bss->no_socket, 1);
	/* from the server's port on another host, from another port, to the server: not ours */
	other = s;
	other.ip.s_addr ^= htonl(1);
	afxdp_reply_route(&route, &other, &c);
	len = request_frame(frame, &route, &payload_len);
	cr_assert_eq(verdict(skel, frame, len), XDP_PASS);
	other = s;
	other.port = 7412;
	afxdp_reply_route(&route, &other, &c);
	len = request_frame(frame, &route, &payload_len);
	cr_assert_eq(verdict(skel, frame, len), XDP_PASS);
	afxdp_reply_route(&route, &c, &s);
	len = request_frame(frame, &route, &payload_len);
	cr_assert_eq(verdict(skel, frame, len), XDP_PASS);
	/* ARP */
	memset(arp, 0xff, 6);
	arp[12] = 0x08;
	arp[13] = 0x06;
	cr_assert_eq(verdict(skel, arp, sizeof(arp)), XDP_PASS);
	cr_assert_eq(skel->bss->no_socket, 1, "only the first was a reply from the server");
	cr_assert_eq(skel->bss->redirected + skel->bss->wrong_queue, 0);
	bench_client_bpf__destroy(skel);
}

/* xkv-bench ARGS, its options parsed into o. */
static int parse(struct bench_opts *o, const char *args, char *why, size_t len)
{
	char buf[256], *argv[24], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "xkv-bench --server 10.9.0.1 %s", args);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 23; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return bench_options_parse(argc, argv, o, why, len);
}

Test(afxdp, queues_take_a_thread_each_from_the_first_queue)
{
	static const char *const refused[] = {
		"--transport xdp --iface veth0 --queues 2",
		"--transport xdp --iface veth0 --queues 17 --threads 16",
		"--transport xdp --iface veth0 --queues 0",
		"--transport xdp --iface veth0 --queue 1023 --queues 2 --threads 2",
		"--queues 1",
	};
	struct bench_opts o;
	char why[256];

	cr_assert_eq(parse(&o, "--transport xdp --iface veth0", why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(o.queue, 0);
	cr_assert_eq(o.queues, 1, "one queue unless asked");
	cr_assert_eq(parse(&o, "--transport xdp --iface veth0 --queue 2 --queues 3 --threads 5",
			   why, sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(o.queue, 2);
	cr_assert_eq(o.queues, 3);
	cr_assert_eq(parse(&o, "--transport xdp --iface veth0 --queues 16 --threads 16", why,
			   sizeof(why)),
		     0, "%s", why);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		cr_assert_eq(parse(&o, refused[i], why, sizeof(why)), -EINVAL, "\"%s\" taken",
			     refused[i]);
	cr_assert(strstr(why, "--transport xdp"), "%s", why);
}
