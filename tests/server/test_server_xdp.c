// SPDX-License-Identifier: MIT
/*
 * xkv-server with the XDP backend, end to end over a veth pair between two network
 * namespaces (made by run-in-netns.sh, which passes their names in XKV_* variables).
 * The server runs in the server namespace; each test enters the client namespace.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "client/client.h"
#include "net/xsk.h"
#include "proto/codec.h"
#include "xkv/dir.h"
#include "xkv/ewt.h"
#include "server_proc.h"
#include "workloads.h"

static struct server_proc srv, other;
static struct xkv_client *cli;
static char allow[64];

static void setup(void)
{
	netns_test_setup(&srv, allow);
	other = srv;
}

static void teardown(void)
{
	xkv_client_close(cli);
	cli = NULL;
	server_stop(&srv);
	server_stop(&other);
	unlink(srv.out_path);
}

TestSuite(server_xdp, .init = setup, .fini = teardown, .timeout = 180);

/* Starts an XDP-backend server on the veth with extra args (NULL-terminated). */
static void start_xdp(const char *workers, const char *const *extra)
{
	const char *args[24] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"), "--workers",
				workers, "--allow", allow};
	size_t n = 8;
	int err;

	while (extra && *extra)
		args[n++] = *extra++;
	args[n] = NULL;
	err = server_start(&srv, args);
	cr_assert_eq(err, 0, "XDP server did not start: %s", strerror(-err));
	cli = xkv_client_open(server_addr(&srv), NULL);
	cr_assert_not_null(cli);
}

/* Frames: none lost, none in flight, once the server has stopped. */
static void assert_frames_idle(void)
{
	cr_assert_eq(server_counter(&srv, "frames_unaccounted"), 0, "a UMEM frame leaked");
	cr_assert_eq(server_counter(&srv, "frames_in_tx"), 0);
	cr_assert_eq(server_counter(&srv, "frames_idle") + server_counter(&srv, "frames_in_fill"),
		     server_counter(&srv, "frames_total"));
}

Test(server_xdp, ten_thousand_keys_byte_for_byte)
{
	static const char *const extra[] = {"--memory", "512M", "--mode", "store", NULL};

	start_xdp("1", extra);
	workload_keys_roundtrip(cli, 10000);
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	cr_assert_eq(server_counter(&srv, "store items"), 10000 / 2);
	cr_assert_eq(server_counter(&srv, "tx_dropped"), 0);
	assert_frames_idle();
}

/*
 * Version 3 end to end on the XDP backend: steering and the codec find the key after
 * the directory's extension, values in pieces both ways; a write steered as a
 * directory would is applied by its version, an older one not.
 */
Test(server_xdp, version_3_end_to_end)
{
	static const char *const extra[] = {"--memory", "512M", "--mode", "store", NULL};
	const struct xkv_client_opts opts = {.dir = true};
	struct xkv_client_steer s = {.ext = {.key_hash = htobe64(xkv_hash("hot", 3)),
					     .ver = htobe64(5),
					     .dflags = XKV_DIR_STEERED}};
	struct xkv_client *v3;
	uint32_t len;
	void *got;

	start_xdp("2", extra);
	v3 = xkv_client_open(server_addr(&srv), &opts);
	cr_assert_not_null(v3);
	workload_keys_roundtrip(v3, 2000);
	cr_assert_eq(xkv_client_steered(v3, XKV_OP_PUT, "hot", 3, "five", 4, &s, NULL, NULL), 0);
	cr_assert_eq(be64toh(s.reply.ver), 5);
	s.ext.ver = htobe64(4);
	cr_assert_eq(xkv_client_steered(v3, XKV_OP_PUT, "hot", 3, "four", 4, &s, NULL, NULL), 0);
	cr_assert_eq(be64toh(s.reply.ver), 5, "an older write loses to the newer one");
	s.ext.ver = 0;
	cr_assert_eq(xkv_client_steered(v3, XKV_OP_GET, "hot", 3, NULL, 0, &s, &got, &len), 0);
	cr_assert(len == 4 && !memcmp(got, "five", 4));
	free(got);
	xkv_client_close(v3);
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	cr_assert_eq(server_counter(&srv, "dir_stale"), 1);
	cr_assert_eq(server_counter(&srv, "dir_applied"), 1);
	assert_frames_idle();
}

/*
 * Pegasus Sec. 6.6 on the XDP backend: told that "hot" is replicated, the server sends
 * a steered request for another key home, as it came and from its client. Home, here,
 * is the client host's second address, where the frame that leaves is caught (the
 * client host accepts a datagram from its own address: accept_local).
 */
Test(server_xdp, a_stray_leaves_for_home_as_from_its_client)
{
	static const char *const extra[] = {"--memory", "64M", NULL};
	const struct xkv_client_opts opts = {.dir = true};
	struct xkv_dir_notice n = {.state = XKV_DIR_KEY_REPLICATED, .self = 0, .nservers = 2};
	struct xkv_client_steer s = {.ext = {.dflags = XKV_DIR_NOTICE}};
	struct sockaddr_in home = {.sin_family = AF_INET}, client = home, to = home, from;
	struct timeval wait = {.tv_sec = 2};
	struct xkv_msg stray = {.op = XKV_OP_GET, .key = "cold", .key_len = 4, .request_id = 7,
				.dir = true,
				.ext = {.key_hash = htobe64(xkv_hash("cold", 4)), .ver = htobe64(3),
					.target = 1, .dflags = XKV_DIR_STEERED}};
	socklen_t len = sizeof(home);
	int home_fd = socket(AF_INET, SOCK_DGRAM, 0), client_fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint8_t buf[2048];
	struct xkv_client *v3;
	struct xkv_msg got;
	ssize_t n_got;
	int n_out;

	cr_assert_eq(system("sysctl -qw net.ipv4.conf.all.accept_local=1"), 0);
	start_xdp("1", extra);
	inet_pton(AF_INET, netns_env("XKV_STRANGER_IP"), &home.sin_addr);
	cr_assert_eq(bind(home_fd, (struct sockaddr *)&home, sizeof(home)), 0);
	cr_assert_eq(getsockname(home_fd, (struct sockaddr *)&home, &len), 0);
	cr_assert_eq(setsockopt(home_fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)), 0);
	inet_pton(AF_INET, netns_env("XKV_SERVER_IP"), &to.sin_addr);
	to.sin_port = htons(srv.port);
	n.servers[0] = (struct xkv_dir_server){.addr = to.sin_addr.s_addr, .port = to.sin_port};
	n.servers[1] = (struct xkv_dir_server){.addr = home.sin_addr.s_addr, .port = home.sin_port};
	v3 = xkv_client_open(server_addr(&srv), &opts);
	cr_assert_not_null(v3);
	cr_assert_eq(xkv_client_steered(v3, XKV_OP_PUT, "hot", 3, &n, sizeof(n), &s, NULL, NULL),
		     0, "the notice");
	xkv_client_close(v3);

	inet_pton(AF_INET, netns_env("XKV_CLIENT_IP"), &client.sin_addr);
	len = sizeof(client);
	cr_assert_eq(bind(client_fd, (struct sockaddr *)&client, sizeof(client)), 0);
	cr_assert_eq(getsockname(client_fd, (struct sockaddr *)&client, &len), 0);
	n_out = xkv_encode(buf, sizeof(buf), &stray);
	cr_assert_gt(n_out, 0);
	cr_assert_eq(sendto(client_fd, buf, (size_t)n_out, 0, (struct sockaddr *)&to, sizeof(to)),
		     n_out);
	len = sizeof(from);
	n_got = recvfrom(home_fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
	cr_assert_gt(n_got, 0, "nothing reached home");
	cr_assert_eq(from.sin_addr.s_addr, client.sin_addr.s_addr, "from its client");
	cr_assert_eq(from.sin_port, client.sin_port);
	cr_assert_eq(xkv_decode(buf, (size_t)n_got, &got), XKV_R_OK);
	cr_assert(got.op == XKV_OP_GET && got.key_len == 4 && !memcmp(got.key, "cold", 4));
	cr_assert_eq(got.request_id, 7);
	cr_assert_eq(got.ext.dflags, XKV_DIR_STEERED | XKV_DIR_FORWARDED);
	close(home_fd);
	close(client_fd);
	system("sysctl -qw net.ipv4.conf.all.accept_local=0");
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	cr_assert_eq(server_counter(&srv, "dir_notices"), 1);
	cr_assert_eq(server_counter(&srv, "dir_forwarded"), 1);
	assert_frames_idle();
}

Test(server_xdp, concurrent_clients_one_writer_per_partition)
{
	start_xdp("2", NULL);
	cr_assert_eq(workload_concurrent_clients(server_addr(&srv), 4, 300), 0, "wrong answers");
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "put"), 4 * 300);
	cr_assert_eq(server_counter(&srv, "foreign_writes"), 0, "invariant 1");
	assert_frames_idle();
}

/* A datagram from one of the client host's addresses to the server. */
static void send_from(const char *src_ip, const void *buf, size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(srv.port)};
	struct sockaddr_in from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, srv.host, &to.sin_addr);
	inet_pton(AF_INET, src_ip, &from.sin_addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
	cr_assert_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	close(fd);
}

/*
 * Whether a PUT from the client's address to dst, on the server's link, is answered; the
 * client host is told that dst is at the server's MAC, unless it is a broadcast address.
 */
static bool answered_at(const char *dst, bool broadcast)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(srv.port)};
	struct timeval wait = {.tv_usec = 300000};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
	uint8_t buf[2048];
	size_t len = workload_put_datagram(buf, "dst", 1, 2, 2);
	char cmd[512];
	ssize_t got;

	if (!broadcast) {
		snprintf(cmd, sizeof(cmd),
			 "ip -n %s neigh replace %s dev %s lladdr $(ip -n %s -br link show %s | "
			 "awk '{print $3}')",
			 netns_env("XKV_NS_CLIENT"), dst, netns_env("XKV_IFACE_CLIENT"),
			 netns_env("XKV_NS_SERVER"), netns_env("XKV_IFACE"));
		cr_assert_eq(system(cmd), 0, "%s", cmd);
	}
	inet_pton(AF_INET, dst, &to.sin_addr);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)), 0);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)), 0);
	cr_assert_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	got = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	return got > 0;
}

/*
 * Invariant 4 area: only requests to the interface's own MAC and addresses (read at
 * attach), or to a --listen address, are served; to another address on the link, or to
 * the subnet's broadcast address, they are dropped under their reasons.
 */
Test(server_xdp, only_requests_to_its_own_addresses_are_served)
{
	static const char *const listen[] = {"--listen", "10.201.0.77", NULL};

	start_xdp("1", listen);
	cr_assert(answered_at(netns_env("XKV_SERVER_IP"), false));
	cr_assert(answered_at("10.201.0.77", false), "a --listen address is served");
	cr_assert_not(answered_at("10.201.0.55", false), "answered from another host's address");
	cr_assert_not(answered_at("10.201.0.255", true), "answered a broadcast");
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "steering dropped not_for_us"), 1);
	cr_assert_eq(server_counter(&srv, "steering dropped bad_dest_mac"), 1);
}

Test(server_xdp, hostile_traffic_while_valid_traffic_flows)
{
	const char *me = netns_env("XKV_CLIENT_IP"), *stranger = netns_env("XKV_STRANGER_IP");
	const int rounds = 200;
	uint8_t buf[2048];
	int answered = 0;

	start_xdp("1", NULL);
	for (int i = 0; i < rounds; i++) {
		char key[16];
		void *got;
		uint32_t got_len;
		int n = snprintf(key, sizeof(key), "good%d", i);
		size_t len;

		for (size_t b = 0; b < 64; b++)
			buf[b] = (uint8_t)rand();
		buf[0] = 0;
		send_from(me, buf, 64); /* random bytes */
		len = workload_put_datagram(buf, "hostile", i, 5, 5);
		send_from(me, buf, 20); /* truncated in the header */
		send_from(stranger, buf, len); /* a good request from outside the allowlist */
		buf[2] = 9;
		send_from(me, buf, len); /* bad version */
		buf[2] = XKV_VERSION;
		send_from(me, buf, len - 1); /* frag_len lies */
		len = workload_put_datagram(buf, "hostile", 100000 + i, XKV_VALUE_MAX, 1000);
		send_from(me, buf, len); /* the first piece of a 1 MiB value, never finished */

		cr_assert_eq(xkv_client_put(cli, key, n, "ok", 2), 0);
		cr_assert_eq(xkv_client_get(cli, key, n, &got, &got_len), 0);
		answered += got_len == 2 && !memcmp(got, "ok", 2);
		free(got);
	}
	cr_assert_eq(answered, rounds);
	cr_assert_eq(server_stop(&srv), 0);
	/* the XDP program drops and counts what is malformed before any worker sees it */
	cr_assert_eq(server_counter(&srv, "steering dropped bad_magic"), rounds);
	cr_assert_eq(server_counter(&srv, "steering dropped truncated"), rounds);
	cr_assert_eq(server_counter(&srv, "steering dropped not_allowed"), rounds);
	cr_assert_eq(server_counter(&srv, "steering dropped bad_version"), rounds);
	cr_assert_eq(server_counter(&srv, "steering dropped bad_length"), rounds);
	/* a first piece of an unfinished 1 MiB value costs its page, not 1 MiB: none refused */
	cr_assert_eq(server_counter(&srv, "refused_pieces"), 0);
	assert_frames_idle();
}

/* A GET from a source that shows no token draws no more than 3x its bytes. */
Test(server_xdp, unvalidated_source_is_not_amplified)
{
	uint64_t sent, received;

	start_xdp("1", NULL);
	received = workload_unvalidated_get(cli, srv.host, srv.port, &sent);
	cr_assert_gt(received, 0, "answered: with a token to ask again with");
	cr_assert_leq(received, XKV_AMPLIFY_MAX * sent, "%lu bytes for a %lu-byte GET", received,
		      sent);
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "validate"), 2, "the socket's GET and the library's");
	assert_frames_idle();
}

/* The same bytes in, the same bytes out, whichever backend serves them. */
static void replies_to_stream(const char *host, uint16_t port, uint8_t (*out)[2048],
			      ssize_t *lens, int count)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval tv = {.tv_sec = 1};
	uint8_t req[2048];

	inet_pton(AF_INET, host, &to.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < count; i++) {
		static const uint8_t ops[] = {XKV_OP_PUT, XKV_OP_GET, XKV_OP_GET, XKV_OP_DELETE};
		char key[16], value[64];
		struct xkv_msg m = {
			.op = ops[i % 4],
			.key = key,
			.key_len = (uint16_t)snprintf(key, sizeof(key), "s%d", (i / 4) % 7),
			.request_id = (uint32_t)i,
			.timestamp = 1000u + i,
		};
		int len;

		if (m.op == XKV_OP_PUT) {
			m.frag = value;
			m.value_len = m.frag_len = (uint32_t)snprintf(value, sizeof(value), "v%d", i);
		}
		len = xkv_encode(req, sizeof(req), &m);
		cr_assert_gt(len, 0);
		cr_assert_eq(send(fd, req, len, 0), len);
		lens[i] = recv(fd, out[i], sizeof(out[i]), 0);
		cr_assert_gt(lens[i], 0, "reply %d from port %u", i, port);
	}
	close(fd);
}

Test(server_xdp, xdp_and_uring_backends_answer_alike)
{
	enum { COUNT = 200 };
	static uint8_t xdp[COUNT][2048], uring[COUNT][2048];
	static ssize_t xdp_len[COUNT], uring_len[COUNT];
	/* reached from the client host: not loopback, so it needs the allowlist too */
	const char *uring_args[] = {"--backend", "uring", "--workers", "1", "--allow", allow, NULL};

	start_xdp("1", NULL);
	other.port = srv.port + 1;
	cr_assert_eq(server_start(&other, uring_args), 0);
	replies_to_stream(srv.host, srv.port, xdp, xdp_len, COUNT);
	replies_to_stream(other.host, other.port, uring, uring_len, COUNT);
	for (int i = 0; i < COUNT; i++) {
		cr_assert_eq(xdp_len[i], uring_len[i], "reply %d: lengths differ", i);
		cr_assert_eq(memcmp(xdp[i], uring[i], xdp_len[i]), 0, "reply %d: bytes differ", i);
	}
}

Test(server_xdp, sigkill_then_restart_then_sigterm_leaves_nothing)
{
	char pins[128], cmd[256];
	struct stat st;
	void *got = NULL;
	uint32_t len;

	start_xdp("1", NULL);
	cr_assert_eq(xkv_client_put(cli, "k", 1, "v", 1), 0);
	kill(srv.pid, SIGKILL); /* leaves the program attached and the maps pinned */
	server_stop(&srv);
	xkv_client_close(cli);
	cli = NULL;

	start_xdp("1", NULL); /* finds the stale attachment and takes over */
	cr_assert_eq(xkv_client_get(cli, "k", 1, &got, &len), -ENOENT, "a new, empty store");
	cr_assert_eq(xkv_client_put(cli, "k", 1, "v2", 2), 0);
	cr_assert_eq(server_stop(&srv), 0);

	snprintf(pins, sizeof(pins), "/sys/fs/bpf/xkv/%s", netns_env("XKV_IFACE"));
	cr_assert_neq(stat(pins, &st), 0, "pins removed");
	snprintf(cmd, sizeof(cmd), "ip -n %s link show %s | grep -q xdp", netns_env("XKV_NS_SERVER"),
		 netns_env("XKV_IFACE"));
	cr_assert_neq(system(cmd), 0, "no XDP program left on the interface");
}

/* Whether the file at path contains text. */
static bool file_has(const char *path, const char *text)
{
	char buf[1024] = {0};
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, text) != NULL;
}

/* Whether the running server srv still answers a PUT and a GET of key. */
static void assert_answers(const char *key, const char *value)
{
	void *got = NULL;
	uint32_t len;

	cr_assert_eq(xkv_client_put(cli, key, strlen(key), value, strlen(value)), 0);
	cr_assert_eq(xkv_client_get(cli, key, strlen(key), &got, &len), 0);
	cr_assert(len == strlen(value) && !memcmp(got, value, len));
	free(got);
}

/*
 * A second server on the interface of a running one refuses, naming it, and touches
 * nothing of it; the loader's detach leaves a running server's attachment without
 * --force; once the first is killed, a new server takes over its stale pins.
 */
Test(server_xdp, a_second_server_leaves_the_running_one_alone)
{
	const char *ns = netns_env("XKV_NS_SERVER"), *iface = netns_env("XKV_IFACE");
	char cmd[512], err_path[64], pid[16], pins[128];
	struct stat st;
	int status;

	start_xdp("1", NULL);
	assert_answers("first", "1");
	snprintf(err_path, sizeof(err_path), "/tmp/xkv-test-second-%d.err", getpid());
	snprintf(pid, sizeof(pid), "pid %d", srv.pid);
	/* the same command again; timeout ends it should it start serving instead */
	snprintf(cmd, sizeof(cmd),
		 "nsenter --net=/run/netns/%s timeout 10 %s --backend xdp --iface %s --workers 1 "
		 "--allow %s --port %u >/dev/null 2>%s",
		 ns, XKV_SERVER_BIN, iface, allow, srv.port, err_path);
	status = system(cmd);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		  "the second server exits 1 at once (status %#x)", status);
	cr_assert(file_has(err_path, pid), "its message names the running server's %s", pid);
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/xkv/%s/xkv_xsks", iface);
	cr_assert_eq(stat(pins, &st), 0, "the running server's pins are left");
	assert_answers("first", "2");

	snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s %s detach --iface %s 2>%s", ns,
		 XKV_LOADER_BIN, iface, err_path);
	cr_assert_neq(system(cmd), 0, "detach refuses without --force");
	cr_assert(file_has(err_path, pid), "naming the running server");
	cr_assert(file_has(err_path, "--force"));
	cr_assert_eq(stat(pins, &st), 0, "its pins are left");
	assert_answers("first", "3");
	unlink(err_path);

	kill(srv.pid, SIGKILL); /* its lock goes with it; its attachment and pins stay */
	server_stop(&srv);
	xkv_client_close(cli);
	cli = NULL;
	start_xdp("1", NULL);
	assert_answers("second", "1");
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_neq(stat(pins, &st), 0, "the new server removed the pins on its way out");
}

/* The loader's attachment outlives a server that reused it. */
Test(server_xdp, a_loader_attachment_is_reused_and_left)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "nsenter --net=/run/netns/%s %s attach --iface %s --allow %s >/dev/null 2>&1",
		 netns_env("XKV_NS_SERVER"), XKV_LOADER_BIN, netns_env("XKV_IFACE"), allow);
	cr_assert_eq(system(cmd), 0, "xkv-loader attach");
	start_xdp("1", NULL);
	cr_assert_eq(xkv_client_put(cli, "k", 1, "v", 1), 0);
	cr_assert_eq(server_stop(&srv), 0);
	snprintf(cmd, sizeof(cmd), "ip -n %s link show %s | grep -q xdp", netns_env("XKV_NS_SERVER"),
		 netns_env("XKV_IFACE"));
	cr_assert_eq(system(cmd), 0, "still attached after the server left");
	snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s %s detach --iface %s >/dev/null",
		 netns_env("XKV_NS_SERVER"), XKV_LOADER_BIN, netns_env("XKV_IFACE"));
	cr_assert_eq(system(cmd), 0, "xkv-loader detach");
}

/* A counter of the running server, summed over workers, as `xkv-loader stats` shows it. */
static long live_counter(const char *what)
{
	return server_live_counter(&srv, XKV_LOADER_BIN, netns_env("XKV_IFACE"), what);
}

/* Polls the live counter until it shows want: a snapshot is published every 100 ms. */
static long live_counter_reaching(const char *what, long want)
{
	long got = live_counter(what);

	for (int tries = 0; tries < 50 && got != want; tries++) {
		usleep(50000);
		got = live_counter(what);
	}
	return got;
}

static void put_keys(int from, int to)
{
	for (int i = from; i < to; i++) {
		char key[16];
		int len = snprintf(key, sizeof(key), "live%d", i);

		cr_assert_eq(xkv_client_put(cli, key, (uint16_t)len, "v", 1), 0);
	}
}

/* Whether python's check holds of d, the JSON of `xkv-loader COMMAND --iface IF --json`. */
static bool loader_json_holds(const char *command, const char *check)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "nsenter --net=/run/netns/%s %s %s --iface %s --json | python3 -c '"
		 "import json, sys; d = json.load(sys.stdin); sys.exit(not (%s))'",
		 srv.netns, XKV_LOADER_BIN, command, netns_env("XKV_IFACE"), check);
	return system(cmd) == 0;
}

/* Whether python's check holds of d, `bpftool -j map dump` of the pinned map (fields by BTF). */
static bool map_json_holds(const char *map, const char *check)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "bpftool -j map dump pinned /sys/fs/bpf/xkv/%s/%s | python3 -c '"
		 "import json, sys; d = json.load(sys.stdin); sys.exit(not (%s))'",
		 netns_env("XKV_IFACE"), map, check);
	return system(cmd) == 0;
}

Test(server_xdp, live_counters_move_while_it_runs)
{
	char check[512];

	start_xdp("2", NULL);
	put_keys(0, 100);
	cr_assert_eq(live_counter_reaching("put", 100), 100, "both workers' PUTs, live");
	cr_assert_eq(live_counter_reaching("store items", 100), 100);
	put_keys(100, 150);
	cr_assert_eq(live_counter_reaching("put", 150), 150, "and moving");
	cr_assert_eq(live_counter_reaching("store items", 150), 150);
	cr_assert_eq(live_counter("queue 0 sockets"), 2, "one socket a worker on the one queue");

	/* the same figures as JSON that parses */
	snprintf(check, sizeof(check),
		 "sum(w[\"put\"] for w in d[\"workers\"]) == 150 and len(d[\"workers\"]) == 2 "
		 "and d[\"server\"][\"store\"][\"items\"] == 150 and d[\"server\"][\"pid\"] == %d",
		 (int)srv.pid);
	cr_assert(loader_json_holds("stats", check), "stats --json: %s", check);

	/* status names the server and the sockets bound on each rx queue */
	snprintf(check, sizeof(check),
		 "d[0][\"server\"][\"queue_sockets\"] == [2] and d[0][\"server\"][\"pid\"] == %d "
		 "and d[0][\"server\"][\"running\"]",
		 (int)srv.pid);
	cr_assert(loader_json_holds("status", check), "status --json: %s", check);

	/* and bpftool, which names the fields from the map's BTF: requests[XKV_OP_PUT] */
	snprintf(check, sizeof(check),
		 "sum(e[\"formatted\"][\"value\"][\"req\"][\"requests\"][%d] for e in d) == 150",
		 XKV_OP_PUT);
	cr_assert(map_json_holds("xkv_wstats", check), "bpftool map dump: %s", check);

	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "put"), 150, "the shutdown print agrees");
	cr_assert_eq(server_counter(&srv, "queue 0 rx_packets"),
		     server_counter(&srv, "worker 0 rx_packets") +
			     server_counter(&srv, "worker 1 rx_packets"),
		     "the queue's packets are its sockets'");
}

/*
 * dcrew end to end: XDP takes or joins a slot for every write, the workers release
 * each one, and xkv-loader stats shows the table empty again with every write counted.
 * Then a slot held for a second (the first piece of a PUT whose others never come,
 * which keeps its hold in reassembly) must show in the server's sampled occupancy.
 */
Test(server_xdp, dcrew_writes_take_and_release_their_slots)
{
	static const char *const extra[] = {"--policy", "dcrew", NULL};
	static const char counted[] =
		"d[\"ewt\"][\"taken\"] + d[\"ewt\"][\"conflicts\"] == 100 and "
		"d[\"ewt\"][\"active\"] == 0 and d[\"ewt\"][\"dropped\"] == 0";
	static const char held[] = "d[\"ewt\"][\"active_max\"] >= 1";
	uint8_t buf[2048];
	char check[256];
	int tries = 0;

	start_xdp("2", extra);
	put_keys(0, 100);
	cr_assert_eq(live_counter_reaching("ewt_released", 100), 100, "every write released");
	cr_assert(loader_json_holds("stats", counted), "stats --json: %s", counted);
	/* and bpftool, by the fields' names: every slot free */
	snprintf(check, sizeof(check),
		 "len(d) == %d and not any(e[\"formatted\"][\"value\"][\"writes\"] for e in d)",
		 XKV_EWT_SLOTS);
	cr_assert(map_json_holds("xkv_ewt", check), "bpftool map dump: %s", check);

	send_from(netns_env("XKV_CLIENT_IP"), buf,
		  workload_put_datagram(buf, "held", 1, 3000, 1000));
	while (!loader_json_holds("stats", held) && ++tries < 50)
		usleep(100000); /* the server publishes what it sampled every 100 ms */
	cr_assert_lt(tries, 50, "stats --json: %s, with a slot held", held);
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "ewt_not_owner"), 0, "a write came without its slot");
}

/*
 * 64 sockets on the one queue, and datagrams that get no reply: first pieces of PUTs
 * never finished, which wait in reassembly until they time out. Each leaves its frame
 * in its socket's cache. Caches that could hold every frame would starve the fill
 * ring, and the queue would never receive again.
 */
Test(server_xdp, unanswered_datagrams_on_64_sockets_leave_the_queue_receiving)
{
	const char *me = netns_env("XKV_CLIENT_IP");
	uint8_t buf[2048];

	start_xdp("64", NULL);
	for (int i = 0; i < 10000; i++) {
		char key[24];

		snprintf(key, sizeof(key), "piece%d", i); /* keys, and so owners, all around */
		send_from(me, buf, workload_put_datagram(buf, key, i, 3000, 1000));
	}
	cr_assert_eq(xkv_client_put(cli, "after", 5, "v", 1), 0, "the queue stopped receiving");
	put_keys(0, 64);
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "put"), 1 + 64);
	assert_frames_idle();
}

/*
 * The client's veth made a slow receiver: an XDP program that holds each packet some
 * 40 us, run by a NAPI thread of its own rather than inline in the server's kick.
 */
static void slow_receiver_on(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "ip -n %s link set dev %s xdpdrv obj %s sec xdp && "
		 "ip netns exec %s sh -c 'echo 1 > /sys/class/net/%s/threaded'",
		 netns_env("XKV_NS_CLIENT"), netns_env("XKV_IFACE_CLIENT"), XKV_SLOW_RECEIVER_BPF,
		 netns_env("XKV_NS_CLIENT"), netns_env("XKV_IFACE_CLIENT"));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Undoes whatever slow_receiver_on did, for the tests that follow. */
static void slow_receiver_off(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "ip netns exec %s sh -c 'echo 0 > /sys/class/net/%s/threaded' 2>/dev/null; "
		 "ip -n %s link set dev %s xdpdrv off",
		 netns_env("XKV_NS_CLIENT"), netns_env("XKV_IFACE_CLIENT"), netns_env("XKV_NS_CLIENT"),
		 netns_env("XKV_IFACE_CLIENT"));
	system(cmd);
}

/* A GET of key with the given request id, sent on the connected socket fd. */
static void send_get(int fd, const char *key, uint32_t id)
{
	struct xkv_msg m = {.op = XKV_OP_GET, .key = key, .key_len = (uint16_t)strlen(key),
			    .request_id = id};
	uint8_t dgram[2048];
	int len = xkv_encode(dgram, sizeof(dgram), &m);

	cr_assert_eq(send(fd, dgram, len, 0), len);
}

/*
 * count GETs of key, in_flight of them sent at once, then one more for each reply:
 * more than that would outrun the frames a queue has for requests and replies waiting.
 * At once means no more than the worker's RX ring holds, then the rest 20 ms later: a
 * burst past the ring that comes before the worker has read any of it is dropped there
 * (the server's veth counts it), and a fast host sends one that fast.
 * Returns how many were answered OK, each once, before a second without a reply.
 */
static int gets_in_flight(const char *key, int count, int in_flight)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(srv.port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rcvbuf = 32 << 20, sent, answered = 0;
	struct timeval tv = {.tv_sec = 1};
	bool *seen = calloc(count, sizeof(*seen));
	uint8_t dgram[2048];
	ssize_t len;

	cr_assert_not_null(seen);
	inet_pton(AF_INET, srv.host, &to.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	/* room for the replies to all in flight */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (sent = 0; sent < in_flight; sent++) {
		if (sent == XKV_XSK_RING)
			usleep(20000);
		send_get(fd, key, (uint32_t)sent);
	}
	while (answered < count && (len = recv(fd, dgram, sizeof(dgram), 0)) > 0) {
		struct xkv_msg m;

		if (xkv_decode(dgram, (size_t)len, &m) != XKV_R_OK ||
		    m.op != (XKV_OP_GET | XKV_OP_REPLY) || m.status != XKV_S_OK ||
		    m.request_id >= (uint32_t)count || seen[m.request_id])
			continue;
		seen[m.request_id] = true;
		answered++;
		if (sent < count)
			send_get(fd, key, (uint32_t)sent++);
	}
	close(fd);
	free(seen);
	return answered;
}

/*
 * Replies written faster than the kernel sends them: in copy mode it takes them off
 * the TX ring only when kicked, and here only as fast as the slow receiver lets it.
 * 2600 GETs at a time keep the worker's ring of 2048 full: a reply that finds it full
 * must wait, kicking, and the last ones must go out once nothing more comes.
 */
Test(server_xdp, a_slow_receiver_still_gets_every_reply, .fini = slow_receiver_off)
{
	/*
	 * Full datagrams: the server's socket may then have fewer in flight than the 256
	 * the receiver's veth ring holds, so the kernel makes it wait rather than drop.
	 */
	static const uint8_t value[1400];
	/* its GETs show no token: 1440-byte replies to 41-byte GETs need a trusted link */
	const char *const trust[] = {"--trust", allow, NULL};
	int answered;

	start_xdp("1", trust);
	slow_receiver_on();
	cr_assert_eq(xkv_client_put(cli, "k", 1, value, sizeof(value)), 0);
	answered = gets_in_flight("k", 5000, 2600);
	cr_assert_eq(answered, 5000, "%d of 5000 GETs answered", answered);
	cr_assert_eq(server_stop(&srv), 0);
	cr_assert_eq(server_counter(&srv, "tx_ring_full"), 0);
	cr_assert_eq(server_counter(&srv, "tx_dropped"), 0);
	assert_frames_idle();
}
