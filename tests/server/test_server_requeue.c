// SPDX-License-Identifier: MIT
/*
 * xkv-server with the XDP backend when its interface's rx queues change under it: it
 * says so on stderr and stops with XKV_SERVER_EXIT_RESTART, detaching and unpinning
 * what it attached, rather than letting XDP drop a whole queue's requests (no_socket).
 * Run through tests/server/run-in-netns.sh, whose namespaces it uses; each test remakes
 * the veth pair with the same names and addresses but 4 queues a side, of which 2 are
 * in use (veth's channels change with ethtool -L, ETHTOOL_SCHANNELS here), so the
 * script's trap still removes everything.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"
#include "server/server.h"
#include "server_proc.h"

#define VETH_QUEUES  4 /* the most each side can have */
#define START_QUEUES 2
#define EXIT_WAIT_MS 2500 /* the server looks once a second, then stops */

static struct server_proc srv;
static int srv_sock = -1; /* made in the server's namespace: ethtool on its side */
static char err_path[64];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A shell command; its exit status. */
static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ethtool -L IF rx n tx n, through a socket of the interface's namespace: 0 or -errno */
static int set_queues(int sock, const char *ifname, uint32_t n)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr = {.ifr_data = (void *)&ch};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(sock, SIOCETHTOOL, &ifr))
		return -errno;
	ch.cmd = ETHTOOL_SCHANNELS;
	ch.rx_count = n;
	ch.tx_count = n;
	return ioctl(sock, SIOCETHTOOL, &ifr) ? -errno : 0;
}

static void setup(void)
{
	const char *ns_s = netns_env("XKV_NS_SERVER"), *ns_c = netns_env("XKV_NS_CLIENT");
	const char *if_s = netns_env("XKV_IFACE"), *if_c = netns_env("XKV_IFACE_CLIENT");
	int cli_sock, err;

	srv = (struct server_proc){.netns = ns_s, .host = netns_env("XKV_SERVER_IP")};
	snprintf(err_path, sizeof(err_path), "/tmp/xkv-test-requeue-%d.err", getpid());
	/* a test before may have removed it */
	cr_assert_eq(run("{ ip -n %s link del %s 2>/dev/null; true; } && "
			 "ip -n %s link add %s numrxqueues %d numtxqueues %d type veth "
			 "peer name %s numrxqueues %d numtxqueues %d netns %s && "
			 "ip -n %s addr add %s/24 dev %s && ip -n %s addr add %s/24 dev %s && "
			 "ip -n %s link set %s up && ip -n %s link set %s up",
			 ns_s, if_s, ns_s, if_s, VETH_QUEUES, VETH_QUEUES, if_c, VETH_QUEUES,
			 VETH_QUEUES, ns_c, ns_s, srv.host, if_s, ns_c, netns_env("XKV_CLIENT_IP"),
			 if_c, ns_s, if_s, ns_c, if_c),
		     0, "remaking the veth pair with %d queues", VETH_QUEUES);
	cr_assert_eq(netns_enter(ns_s), 0, "entering the server namespace");
	srv_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(netns_enter(ns_c), 0, "entering the client namespace");
	cli_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert(srv_sock >= 0 && cli_sock >= 0);
	err = set_queues(srv_sock, if_s, START_QUEUES);
	if (!err)
		err = set_queues(cli_sock, if_c, START_QUEUES);
	close(cli_sock);
	if (err == -EOPNOTSUPP)
		cr_skip_test("this kernel's veth cannot change its channels (ethtool -L)");
	cr_assert_eq(err, 0, "%d queues on the veth: %s", START_QUEUES, strerror(-err));
}

static void teardown(void)
{
	if (srv.pid > 0)
		kill(srv.pid, SIGCONT); /* SIGTERM waits on a stopped process */
	server_stop(&srv);
	if (srv_sock >= 0)
		close(srv_sock);
	srv_sock = -1;
	unlink(srv.out_path);
	unlink(err_path);
}

TestSuite(server_requeue, .init = setup, .fini = teardown, .timeout = 60);

/* A server on both veth queues, 2 workers each; its stderr goes to err_path. */
static void start_server(void)
{
	char allow[64];
	const char *args[] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"), "--workers", "2",
			      "--allow", allow, NULL};
	int saved = dup(STDERR_FILENO), fd, err;

	snprintf(allow, sizeof(allow), "%s/32", netns_env("XKV_CLIENT_IP"));
	fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(saved >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO); /* the server inherits it */
	err = server_start(&srv, args);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	cr_assert_eq(err, 0, "XDP server did not start: %s", strerror(-err));
}

/* Its exit status once it stops by itself within ms, or -1. */
static int wait_exit(int ms)
{
	int status;

	for (int waited = 0; waited < ms; waited += 10) {
		if (waitpid(srv.pid, &status, WNOHANG) == srv.pid) {
			srv.pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		usleep(10000);
	}
	return -1;
}

/* Whether the server's stderr has a line with text in it. */
static bool said(const char *text)
{
	FILE *f = fopen(err_path, "r");
	char line[512];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* What a server that attached by itself leaves on exit: nothing. */
static void assert_nothing_left(void)
{
	char pins[128];
	struct stat st;

	snprintf(pins, sizeof(pins), "/sys/fs/bpf/xkv/%s", netns_env("XKV_IFACE"));
	cr_assert_neq(stat(pins, &st), 0, "pins removed");
	cr_assert_neq(run("ip -n %s link show %s 2>/dev/null | grep -q xdp",
			  netns_env("XKV_NS_SERVER"), netns_env("XKV_IFACE")),
		      0, "no XDP program left on the interface");
}

Test(server_requeue, more_queues_stop_it_saying_which_would_be_dropped)
{
	char line[256];

	start_server();
	cr_assert_eq(set_queues(srv_sock, netns_env("XKV_IFACE"), VETH_QUEUES), 0);
	cr_assert_eq(wait_exit(EXIT_WAIT_MS), XKV_SERVER_EXIT_RESTART,
		     "the server goes on, or exits otherwise, when its queues grow");
	snprintf(line, sizeof(line),
		 "xkv-server: %s now has 4 rx queues, it had 2: requests on queues 2-3 would be "
		 "dropped; restart xkv-server",
		 netns_env("XKV_IFACE"));
	cr_assert(said(line), "no line on stderr saying: %s", line);
	cr_assert_gt(server_counter(&srv, "queue 1 frames_total"), 0, "its counters printed");
	assert_nothing_left();
}

/* Stopped (SIGSTOP) before it looks, the server shows as running with queues uncovered. */
Test(server_requeue, status_names_the_queues_without_a_socket)
{
	start_server();
	cr_assert_eq(run("nsenter --net=/run/netns/%s %s status --iface %s --json | python3 -c '"
			 "import json, sys; s = json.load(sys.stdin)[0][\"server\"]; "
			 "sys.exit(not (s[\"rx_queues\"] == 2 and "
			 "s[\"queues_without_socket\"] == []))'",
			 srv.netns, XKV_LOADER_BIN, netns_env("XKV_IFACE")),
		     0, "status --json before: 2 queues, all with sockets");
	kill(srv.pid, SIGSTOP);
	cr_assert_eq(set_queues(srv_sock, netns_env("XKV_IFACE"), 3), 0);
	cr_assert_eq(run("nsenter --net=/run/netns/%s %s status --iface %s | grep -qx '  warning: "
			 "rx queue 2 of 3 has no socket: requests arriving there are dropped "
			 "(no_socket); restart xkv-server'",
			 srv.netns, XKV_LOADER_BIN, netns_env("XKV_IFACE")),
		     0, "status names queue 2");
	cr_assert_eq(run("nsenter --net=/run/netns/%s %s status --iface %s --json | python3 -c '"
			 "import json, sys; s = json.load(sys.stdin)[0][\"server\"]; "
			 "sys.exit(not (s[\"rx_queues\"] == 3 and "
			 "s[\"queues_without_socket\"] == [2]))'",
			 srv.netns, XKV_LOADER_BIN, netns_env("XKV_IFACE")),
		     0, "status --json: queues_without_socket [2]");
	kill(srv.pid, SIGCONT);
	cr_assert_eq(wait_exit(EXIT_WAIT_MS), XKV_SERVER_EXIT_RESTART);
	cr_assert(said("requests on queue 2 would be dropped"));
	assert_nothing_left();
}

/*
 * The kernel refuses to take away a queue an AF_XDP socket is bound to; should one
 * allow it, the server stops as for more queues.
 */
Test(server_requeue, fewer_queues_are_refused_or_stop_it)
{
	struct xkv_client *cli;
	int err;

	start_server();
	err = set_queues(srv_sock, netns_env("XKV_IFACE"), 1);
	if (err) {
		cr_assert_eq(err, -EINVAL, "%s", strerror(-err));
		usleep(1500000); /* a look by the server passes */
		cli = xkv_client_open(server_addr(&srv), NULL);
		cr_assert_not_null(cli);
		err = xkv_client_put(cli, "k", 1, "v", 1);
		xkv_client_close(cli);
		cr_assert_eq(err, 0, "the server serves on");
		cr_assert_eq(server_stop(&srv), 0);
	} else {
		cr_assert_eq(wait_exit(EXIT_WAIT_MS), XKV_SERVER_EXIT_RESTART);
		cr_assert(said("its sockets on queue 1 listen on nothing; restart xkv-server"));
	}
	assert_nothing_left();
}

/* A veth remade with another count is first removed: that stops it as well. */
Test(server_requeue, a_removed_interface_stops_it)
{
	char line[128];

	start_server();
	cr_assert_eq(run("ip -n %s link del %s", netns_env("XKV_NS_SERVER"), netns_env("XKV_IFACE")), 0);
	cr_assert_eq(wait_exit(EXIT_WAIT_MS), XKV_SERVER_EXIT_RESTART);
	snprintf(line, sizeof(line), "xkv-server: %s is gone", netns_env("XKV_IFACE"));
	cr_assert(said(line), "no line on stderr saying: %s", line);
	assert_nothing_left();
}
