// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "client/client.h"
#include "server_proc.h"

#define START_TIMEOUT_MS 5000
#define STOP_TIMEOUT_MS	 5000

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

const char *server_addr(const struct server_proc *s)
{
	return s->addr;
}

int netns_enter(const char *name)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

static int wait_until_answering(struct server_proc *s)
{
	struct xkv_client_opts opts = {.timeout_ms = 50, .retries = -1};
	struct xkv_client *c = xkv_client_open(server_addr(s), &opts);
	int err = -ETIMEDOUT;

	if (!c)
		return -errno;
	for (int waited = 0; waited < START_TIMEOUT_MS; waited += 50) {
		void *v = NULL;
		uint32_t len;

		err = xkv_client_get(c, "ping", 4, &v, &len);
		free(v);
		if (err == 0 || err == -ENOENT)
			break;
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			err = -ECHILD;
			break;
		}
		sleep_ms(50);
	}
	xkv_client_close(c);
	return err == -ENOENT ? 0 : err;
}

int server_start(struct server_proc *s, const char *const *args)
{
	const char *argv[32] = {s->bin ? s->bin : XKV_SERVER_BIN};
	char port[8];
	size_t n = 1;
	int err;

	/* a port of our own: tests of several binaries may run at the same time */
	if (!s->port)
		s->port = (uint16_t)(20000 + (getpid() * 7 + time(NULL)) % 30000);
	snprintf(port, sizeof(port), "%u", s->port);
	/* written once here: client threads read it while the test starts more of them */
	snprintf(s->addr, sizeof(s->addr), "%s:%u", s->host ? s->host : "127.0.0.1", s->port);
	snprintf(s->out_path, sizeof(s->out_path), "/tmp/xkv-test-server-%d-%u.out", getpid(),
		 s->port);
	while (args && *args && n < 28)
		argv[n++] = *args++;
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n] = NULL;

	s->pid = fork();
	if (s->pid < 0)
		return -errno;
	if (s->pid == 0) {
		if (!freopen(s->out_path, "w", stdout) || (s->netns && netns_enter(s->netns)))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	err = wait_until_answering(s);
	if (err)
		server_stop(s);
	return err;
}

int server_stop(struct server_proc *s)
{
	int status;

	if (s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	for (int waited = 0; waited < STOP_TIMEOUT_MS; waited += 10) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			s->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		sleep_ms(10);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &status, 0);
	s->pid = 0;
	s->term_signal = SIGKILL;
	return -1;
}

/*
 * "worker W queue Q name: N": one worker's socket on one queue, which the lines
 * "worker W name" and "queue Q name" already count. A name matches it only whole.
 */
static bool per_worker_queue(const char *line)
{
	unsigned w, q;
	int end = 0;

	return sscanf(line, "worker %u queue %u %n", &w, &q, &end) == 2 && end > 0;
}

/* The sum of every "<what>: N" in f's lines, -1 if none. */
static long counter_sum(FILE *f, const char *what)
{
	size_t wlen = strlen(what);
	long total = -1;
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		bool whole_only = per_worker_queue(line);

		for (char *p = strstr(line, what); p; p = strstr(p + 1, what)) {
			long v;

			if ((p == line || (!whole_only && p[-1] == ' ')) && p[wlen] == ':' &&
			    sscanf(p + wlen + 1, "%ld", &v) == 1)
				total = (total < 0 ? 0 : total) + v;
		}
	}
	return total;
}

long server_counter(const struct server_proc *s, const char *what)
{
	FILE *f = fopen(s->out_path, "r");
	long total;

	if (!f)
		return -1;
	total = counter_sum(f, what);
	fclose(f);
	return total;
}

long server_live_counter(const struct server_proc *s, const char *loader, const char *iface,
			 const char *what)
{
	char cmd[512];
	long total;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nsenter --net=/run/netns/%s %s stats --iface %s", s->netns,
		 loader, iface);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	total = counter_sum(p, what);
	return pclose(p) == 0 ? total : -1;
}

const char *netns_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s unset: run this test through tests/server/run-in-netns.sh",
			   name);
	return v;
}

void netns_test_setup(struct server_proc *s, char allow[64])
{
	*s = (struct server_proc){.netns = netns_env("XKV_NS_SERVER"),
				  .host = netns_env("XKV_SERVER_IP")};
	snprintf(allow, 64, "%s/32", netns_env("XKV_CLIENT_IP"));
	cr_assert_eq(netns_enter(netns_env("XKV_NS_CLIENT")), 0, "entering the client namespace");
}
