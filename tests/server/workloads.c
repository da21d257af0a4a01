// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "workloads.h"

void workload_fill(uint8_t *v, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (uint32_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		v[i] = (uint8_t)x;
	}
}

static uint32_t size_of_key(int i)
{
	static const uint32_t big[] = {1440, 1441, 1472, 2880, 100000, 500000, XKV_VALUE_MAX};

	if (i % 200 == 0)
		return big[(i / 200) % (sizeof(big) / sizeof(big[0]))];
	return (uint32_t)(i * 37) % 300;
}

void workload_keys_roundtrip(struct xkv_client *c, int keys)
{
	static uint8_t want[XKV_VALUE_MAX];
	char key[32];

	for (int i = 0; i < keys; i++) {
		uint32_t len = size_of_key(i);
		int n = snprintf(key, sizeof(key), "key:%d", i);

		workload_fill(want, len, i);
		cr_assert_eq(xkv_client_put(c, key, n, want, len), 0, "put %s (%u B)", key, len);
	}
	for (int i = 0; i < keys; i++) {
		uint32_t len = size_of_key(i), got_len;
		int n = snprintf(key, sizeof(key), "key:%d", i);
		void *got;

		workload_fill(want, len, i);
		cr_assert_eq(xkv_client_get(c, key, n, &got, &got_len), 0, "get %s", key);
		cr_assert_eq(got_len, len, "%s: %u bytes back, want %u", key, got_len, len);
		cr_assert_eq(memcmp(got, want, len), 0, "%s: bytes differ", key);
		free(got);
	}
	for (int i = 0; i < keys; i += 2) {
		int n = snprintf(key, sizeof(key), "key:%d", i);

		cr_assert_eq(xkv_client_delete(c, key, n), 0);
		cr_assert_eq(xkv_client_delete(c, key, n), -ENOENT);
	}
	for (int i = 0; i < keys && i < 100; i++) {
		int n = snprintf(key, sizeof(key), "key:%d", i);
		uint32_t len;
		void *got = NULL;

		cr_assert_eq(xkv_client_get(c, key, n, &got, &len), i % 2 ? 0 : -ENOENT);
		free(got);
	}
}

struct client_thread {
	pthread_t thread;
	const char *server;
	int id, ops, errors;
};

static void *client_run(void *arg)
{
	struct client_thread *t = arg;
	struct xkv_client *c = xkv_client_open(t->server, NULL);
	uint8_t want[3000];
	char key[32];

	if (!c) {
		t->errors++;
		return NULL;
	}
	for (int i = 0; i < t->ops; i++) {
		uint32_t len = (uint32_t)(i * 13 + t->id) % sizeof(want), got_len;
		int n = snprintf(key, sizeof(key), "t%d:%d", t->id, i % 40);
		void *got;

		workload_fill(want, len, t->id * 1000 + i);
		if (xkv_client_put(c, key, n, want, len) ||
		    xkv_client_get(c, key, n, &got, &got_len)) {
			t->errors++;
			continue;
		}
		t->errors += got_len != len || memcmp(got, want, len);
		free(got);
	}
	xkv_client_close(c);
	return NULL;
}

int workload_concurrent_clients(const char *server, int nclients, int ops)
{
	struct client_thread t[16];
	int errors = 0;

	cr_assert_leq(nclients, 16);
	for (int i = 0; i < nclients; i++) {
		t[i] = (struct client_thread){.server = server, .id = i, .ops = ops};
		pthread_create(&t[i].thread, NULL, client_run, &t[i]);
	}
	for (int i = 0; i < nclients; i++) {
		pthread_join(t[i].thread, NULL);
		errors += t[i].errors;
	}
	return errors;
}

size_t workload_put_datagram(uint8_t *buf, const char *key, uint32_t id, uint32_t value_len,
			     uint32_t frag_len)
{
	static const uint8_t value[1400];
	struct xkv_msg m = {
		.op = XKV_OP_PUT,
		.key = key,
		.key_len = (uint16_t)strlen(key),
		.request_id = id,
		.value_len = value_len,
		.frag_len = frag_len,
		.frag = value,
	};

	return (size_t)xkv_encode(buf, 2048, &m);
}

/* A socket of its own connected to host:port, whose receives give up after ms. */
static int raw_socket(const char *host, uint16_t port, int ms)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rcvbuf = 32 << 20;

	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, host, &to.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	/* without it a receive waits for ever */
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	return fd;
}

/*
 * Sends m without a token on fd; returns the reply bytes that came until a receive gave
 * up. A reply must come, within REPLY_WAIT_MS however busy the machine (a server that
 * answers nothing would draw no bytes, the best ratio of all), and every datagram must
 * be a reply to m.
 */
static uint64_t exchange(int fd, const struct xkv_msg *m, uint64_t *sent)
{
	enum { REPLY_WAIT_MS = 5000 };
	static uint8_t buf[2048];
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uint64_t received = 0;
	ssize_t len = xkv_encode(buf, sizeof(buf), m);
	struct xkv_msg r;

	cr_assert_gt(len, 0);
	cr_assert_eq(send(fd, buf, (size_t)len, 0), len);
	*sent = (uint64_t)len;
	cr_assert_eq(poll(&pfd, 1, REPLY_WAIT_MS), 1, "no reply to request %u in %d ms",
		     m->request_id, REPLY_WAIT_MS);
	while ((len = recv(fd, buf, sizeof(buf), 0)) > 0) {
		cr_assert_eq(xkv_decode(buf, (size_t)len, &r), XKV_R_OK,
			     "a datagram that is no reply");
		cr_assert(r.op == (m->op | XKV_OP_REPLY) && r.request_id == m->request_id,
			  "a reply to op %u, request %u, not to op %u, request %u", r.op,
			  r.request_id, m->op, m->request_id);
		received += (uint64_t)len;
	}
	cr_assert_gt(received, 0, "no reply to request %u: %s", m->request_id, strerror(errno));
	return received;
}

uint64_t workload_unvalidated_get(struct xkv_client *c, const char *host, uint16_t port,
				  uint64_t *sent)
{
	static uint8_t value[XKV_VALUE_MAX];
	struct xkv_msg m = {.op = XKV_OP_GET, .key = "amp", .key_len = 3, .request_id = 1};
	int fd = raw_socket(host, port, 1000);
	uint64_t received;
	uint32_t got_len;
	void *got;

	workload_fill(value, sizeof(value), 42);
	cr_assert_eq(xkv_client_put(c, "amp", 3, value, sizeof(value)), 0);
	received = exchange(fd, &m, sent);
	close(fd);

	cr_assert_eq(xkv_client_get(c, "amp", 3, &got, &got_len), 0, "the library asks again");
	cr_assert_eq(got_len, sizeof(value));
	cr_assert_eq(memcmp(got, value, sizeof(value)), 0, "and gets the whole value");
	free(got);
	return received;
}

/* The ratio of one request without a token, printed; the worst so far in *worst. */
static void ratio_of(int fd, const char *what, struct xkv_msg *m, double *worst)
{
	uint64_t sent, received;

	m->request_id++; /* each its own: a reply to another is no reply to this one */
	received = exchange(fd, m, &sent);
	double ratio = (double)received / (double)sent;

	printf("amplification: %-28s %4lu bytes in, %8lu out: %.3f\n", what, sent, received,
	       ratio);
	if (ratio > *worst)
		*worst = ratio;
}

double workload_worst_ratio(struct xkv_client *c, const char *host, uint16_t port)
{
	static uint8_t value[XKV_VALUE_MAX];
	static const uint16_t key_lens[] = {1, XKV_KEY_MAX};
	int fd = raw_socket(host, port, 100);
	char key[XKV_KEY_MAX], what[64];
	double worst = 0;

	memset(key, 'a', sizeof(key));
	for (size_t k = 0; k < sizeof(key_lens) / sizeof(key_lens[0]); k++) {
		uint32_t at_3x = XKV_AMPLIFY_MAX * (sizeof(struct xkv_hdr) + key_lens[k]) -
				 sizeof(struct xkv_hdr);
		uint32_t sizes[] = {0, at_3x, at_3x + 1, 1400, 100000, XKV_VALUE_MAX};
		struct xkv_msg m = {.op = XKV_OP_GET, .key = key, .key_len = key_lens[k]};

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			cr_assert_eq(xkv_client_put(c, key, key_lens[k], value, sizes[i]), 0);
			snprintf(what, sizeof(what), "GET, %u B key, %u B value", key_lens[k],
				 sizes[i]);
			ratio_of(fd, what, &m, &worst);
		}
		m.op = XKV_OP_DELETE;
		ratio_of(fd, "DELETE", &m, &worst);
		m = (struct xkv_msg){.op = XKV_OP_PUT, .key = key, .key_len = key_lens[k],
				     .frag = value, .value_len = 1, .frag_len = 1};
		ratio_of(fd, "PUT", &m, &worst);
	}
	close(fd);
	printf("amplification: worst ratio %.3f\n", worst);
	return worst;
}
