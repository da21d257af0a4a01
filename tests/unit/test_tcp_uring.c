// SPDX-License-Identifier: MIT
/*
 * The TCP layer (userspace/net/tcp_uring.c) with a line handler, on loopback: the
 * listener runs on a thread of its own as a worker would, clients block.
 * "big N" answers N bytes, "wait" pauses the connection until the test resumes it,
 * "quit" closes it, any other line comes back as it was.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/tcp_uring.h"

#define IN_MAX 65536

struct server {
	struct xkv_tcp tcp;
	pthread_t thread;
	atomic_bool stop;
	atomic_bool resume;	  /* the test's: resume the paused connection */
	struct xkv_tcp_conn *paused;
	bool refuse;		  /* open refuses every connection */
	atomic_uint opened, closed; /* sessions the handler made and freed */
	uint16_t port;
};

static int line_open(void *ctx, struct xkv_tcp_conn *c)
{
	struct server *s = ctx;

	if (s->refuse)
		return -EACCES;
	c->session = malloc(1); /* ASan sees any connection that is never closed */
	atomic_fetch_add(&s->opened, 1);
	return 0;
}

static void big_reply(struct xkv_tcp_conn *c, size_t n)
{
	cr_assert_eq(xkv_tcp_reserve(&c->out, n), 0);
	for (size_t i = 0; i < n; i++)
		c->out.data[c->out.len + i] = (char)('a' + i % 26);
	c->out.len += n;
}

static size_t line_input(void *ctx, struct xkv_tcp_conn *c, const char *in, size_t in_len,
			 bool *close)
{
	struct server *s = ctx;
	size_t used = 0;
	const char *nl;

	while ((nl = memchr(in + used, '\n', in_len - used))) {
		size_t len = (size_t)(nl - (in + used)) + 1;
		const char *line = in + used;

		used += len;
		if (!strncmp(line, "quit\n", len)) {
			*close = true;
			break;
		}
		if (!strncmp(line, "wait\n", len)) {
			s->paused = c;
			xkv_tcp_pause(c);
			break;
		}
		if (len > 4 && !strncmp(line, "big ", 4))
			big_reply(c, strtoull(line + 4, NULL, 10));
		else
			cr_assert_eq(xkv_tcp_append(c, line, len), 0);
	}
	return used;
}

static void line_close(void *ctx, struct xkv_tcp_conn *c)
{
	struct server *s = ctx;

	free(c->session);
	if (s->paused == c)
		s->paused = NULL;
	atomic_fetch_add(&s->closed, 1);
}

static void *serve(void *arg)
{
	struct server *s = arg;
	struct pollfd pfd = {.fd = xkv_tcp_fd(&s->tcp), .events = POLLIN};

	while (!atomic_load(&s->stop)) {
		xkv_tcp_reap(&s->tcp);
		if (atomic_exchange(&s->resume, false) && s->paused) {
			struct xkv_tcp_conn *c = s->paused;

			s->paused = NULL;
			cr_assert_eq(xkv_tcp_append(c, "resumed\n", 8), 0);
			xkv_tcp_resume(&s->tcp, c);
		}
		poll(&pfd, 1, 5);
	}
	return NULL;
}

static void start(struct server *s, uint32_t max_conns, bool refuse)
{
	const struct xkv_tcp_handler h = {
		.open = line_open, .input = line_input, .close = line_close, .ctx = s};

	memset(s, 0, sizeof(*s));
	s->refuse = refuse;
	static uint16_t started;

	/*
	 * Ports of our own, below the ephemeral ones: two per test process, whose pids
	 * are apart. Never one a stopped server had: its socket goes once the kernel has
	 * cancelled the ring's accept, and SO_REUSEPORT would let both share the port
	 * meanwhile.
	 */
	s->port = (uint16_t)(20000 + getpid() % 6000 * 2 + started++);
	cr_assert_eq(xkv_tcp_open(&s->tcp, s->port, max_conns, IN_MAX, NULL, &h), 0, "port %u", s->port);
	cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void stop(struct server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	xkv_tcp_close(&s->tcp);
	cr_assert_eq(atomic_load(&s->opened), atomic_load(&s->closed),
		     "every session freed: %u opened, %u closed", s->opened, s->closed);
}

static int dial(const struct server *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(s->port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Reads exactly n bytes; fails the test on a timeout or an early close. */
static void read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, buf + got, n - got, 0);

		cr_assert_gt(r, 0, "%zu of %zu bytes, then %zd (%s)", got, n, r, strerror(errno));
		got += (size_t)r;
	}
}

/* Whether the server closed fd (EOF or reset) within the receive timeout, sending nothing more. */
static bool closed_by_server(int fd)
{
	char buf[4096];
	ssize_t r = recv(fd, buf, sizeof(buf), 0);

	if (r > 0) {
		cr_log_error("%zd bytes came before the close: %.*s", r, (int)(r < 64 ? r : 64),
			     buf);
		return false;
	}
	return r == 0 || errno == ECONNRESET;
}

Test(tcp_uring, a_line_sent_byte_by_byte_is_answered_whole)
{
	const char *line = "hello, world\n";
	char buf[32] = {0};
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	for (size_t i = 0; i < strlen(line); i++) {
		cr_assert_eq(send(fd, line + i, 1, 0), 1);
		usleep(2000); /* each byte its own receive */
	}
	read_all(fd, buf, strlen(line));
	cr_assert_str_eq(buf, line);
	close(fd);
	stop(&s);
}

Test(tcp_uring, a_large_reply_to_a_slow_reader_arrives_whole)
{
	const size_t n = 8u << 20; /* over XKV_TCP_OUT_HIGH: input waits while it drains */
	char *buf = malloc(n + 6);
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	cr_assert_eq(send(fd, "big 8388608\nafter\n", 18, 0), 18);
	usleep(200000); /* the socket buffers fill: the server's sends come back partial */
	read_all(fd, buf, n + 6);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(buf[i], (char)('a' + i % 26), "byte %zu", i);
	cr_assert_eq(memcmp(buf + n, "after\n", 6), 0, "pipelined input answered after it");
	free(buf);
	close(fd);
	stop(&s);
}

Test(tcp_uring, a_line_longer_than_the_buffer_closes_the_connection)
{
	char *junk = malloc(IN_MAX * 2);
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	memset(junk, 'x', IN_MAX * 2);
	send(fd, junk, IN_MAX * 2, MSG_NOSIGNAL);
	cr_assert(closed_by_server(fd));
	close(fd);
	free(junk);
	stop(&s);
}

Test(tcp_uring, quit_closes_after_the_replies_before_it)
{
	char buf[8] = {0};
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	cr_assert_eq(send(fd, "one\nquit\ntwo\n", 13, 0), 13);
	read_all(fd, buf, 4);
	cr_assert_str_eq(buf, "one\n");
	cr_assert(closed_by_server(fd), "closed, and two never answered");
	close(fd);
	stop(&s);
}

Test(tcp_uring, a_paused_connection_reads_nothing_until_resumed)
{
	char buf[32] = {0};
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	cr_assert_eq(send(fd, "wait\n", 5, 0), 5);
	usleep(50000);
	cr_assert_eq(send(fd, "next\n", 5, 0), 5); /* received, and not fed */
	usleep(100000);
	cr_assert_eq(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1, "nothing while paused");
	atomic_store(&s.resume, true);
	read_all(fd, buf, 13);
	cr_assert_str_eq(buf, "resumed\nnext\n");
	close(fd);
	stop(&s);
}

/*
 * A client that half-closes after its requests (nc -N) still gets every reply, the one
 * its paused request waits for too (a memcached write away on another worker); then
 * the connection closes.
 */
Test(tcp_uring, a_half_closed_connection_is_answered_before_it_closes)
{
	char buf[32] = {0};
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	cr_assert_eq(send(fd, "a\nwait\nb\n", 9, 0), 9);
	cr_assert_eq(shutdown(fd, SHUT_WR), 0);
	usleep(100000); /* the end of input is seen while the connection is paused */
	atomic_store(&s.resume, true);
	read_all(fd, buf, 12);
	cr_assert_str_eq(buf, "a\nresumed\nb\n");
	cr_assert(closed_by_server(fd), "closed once everything was answered");
	close(fd);
	stop(&s);
}

Test(tcp_uring, input_fed_while_a_receive_is_posted_stays_in_order)
{
	char buf[32] = {0};
	struct server s;
	int fd;

	start(&s, 4, false);
	fd = dial(&s);
	/* "x" waits behind the pause while the next receive is posted after it */
	cr_assert_eq(send(fd, "wait\nx\n", 7, 0), 7);
	usleep(50000);
	atomic_store(&s.resume, true);
	read_all(fd, buf, 10);
	cr_assert_str_eq(buf, "resumed\nx\n");
	cr_assert_eq(send(fd, "y\n", 2, 0), 2);
	memset(buf, 0, sizeof(buf));
	read_all(fd, buf, 2);
	cr_assert_str_eq(buf, "y\n", "what the posted receive brought: %s", buf);
	close(fd);
	stop(&s);
}

Test(tcp_uring, connections_over_the_limit_or_refused_are_closed_at_accept)
{
	struct server s;
	int fds[3];
	char buf[4];

	start(&s, 2, false);
	for (int i = 0; i < 3; i++)
		fds[i] = dial(&s);
	cr_assert(closed_by_server(fds[2]), "the third of 2 is closed");
	cr_assert_eq(send(fds[0], "ok\n", 3, 0), 3);
	read_all(fds[0], buf, 3);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	stop(&s);
	cr_assert_eq(s.tcp.refused, 1);

	start(&s, 2, true);
	fds[0] = dial(&s);
	cr_assert(closed_by_server(fds[0]), "the handler refused it");
	close(fds[0]);
	stop(&s);
	cr_assert_eq(s.tcp.refused, 1);
}

/* A client at the limit: fds[0 .. n) dialed, and each answers a line. */
static void fill(const struct server *s, int *fds, int n)
{
	char buf[3];

	for (int i = 0; i < n; i++) {
		fds[i] = dial(s);
		cr_assert_eq(send(fds[i], "hi\n", 3, 0), 3);
		read_all(fds[i], buf, 3);
	}
}

/* Whether a new client gets its line answered. */
static bool served(const struct server *s)
{
	char buf[6] = {0};
	int fd = dial(s);
	bool ok = send(fd, "honest\n", 7, MSG_NOSIGNAL) == 7 && recv(fd, buf, 6, MSG_WAITALL) == 6 &&
		  !memcmp(buf, "honest", 6);

	close(fd);
	return ok;
}

/*
 * At the limit, a connection idle for XKV_TCP_IDLE_KICK_NS, or one that sends a byte
 * at a time and never a whole request (slowloris), gives its place to a new client;
 * clients that keep sending requests keep theirs, and the new one is refused.
 */
Test(tcp_uring, idle_or_slow_connections_give_way_at_the_limit_busy_ones_do_not, .timeout = 20)
{
	struct server s;
	int fds[4], slow;
	char buf[3];

	start(&s, 4, false);
	fill(&s, fds, 4);
	usleep(1100000); /* idle past the kick */
	cr_assert(served(&s), "an honest client kept out by 4 idle ones");
	cr_assert_eq(s.tcp.kicks, 1);
	cr_assert(closed_by_server(fds[0]) || closed_by_server(fds[1]) || closed_by_server(fds[2]) ||
		  closed_by_server(fds[3]), "one idle connection was closed");
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	stop(&s);

	start(&s, 4, false);
	fill(&s, fds, 3);
	slow = dial(&s);
	for (int i = 0; i < 12; i++) { /* a byte every 100 ms, never a line */
		cr_assert_eq(send(slow, "x", 1, 0), 1);
		for (int f = 0; f < 3; f++) { /* the others busy */
			cr_assert_eq(send(fds[f], "hi\n", 3, 0), 3);
			read_all(fds[f], buf, 3);
		}
		usleep(100000);
	}
	cr_assert(served(&s), "a slowloris kept an honest client out");
	cr_assert(closed_by_server(slow), "the slow one gave way");
	for (int f = 0; f < 3; f++) {
		cr_assert_eq(send(fds[f], "hi\n", 3, 0), 3, "busy connection %d kept", f);
		read_all(fds[f], buf, 3);
	}
	cr_assert_eq(s.tcp.kicks, 1);

	/* 4 busy again, each with a request half a second ago: the next is refused */
	fill(&s, &slow, 1);
	usleep(500000);
	cr_assert(!served(&s), "a connection busy half a second ago was kicked for a new one");
	cr_assert_eq(s.tcp.kicks, 1);
	for (int f = 0; f < 3; f++)
		close(fds[f]);
	close(slow);
	stop(&s);
	cr_assert_geq(s.tcp.refused, 1);
}

Test(tcp_uring, closing_frees_connections_still_open)
{
	struct server s;
	int fds[3];
	char buf[4];

	start(&s, 8, false);
	for (int i = 0; i < 3; i++) {
		fds[i] = dial(&s);
		cr_assert_eq(send(fds[i], "hi\n", 3, 0), 3);
		read_all(fds[i], buf, 3);
	}
	cr_assert_eq(send(fds[0], "wait\n", 5, 0), 5); /* one of them paused */
	usleep(50000);
	stop(&s); /* asserts every session was freed */
	cr_assert_eq(s.opened, 3);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}
