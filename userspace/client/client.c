// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "proto/codec.h"
#include "proto/reassembly.h"

#define DEFAULT_TIMEOUT_MS 500
#define DEFAULT_RETRIES	   2
#define RECV_MAX	   65536
#define SOCKET_BUF	   (8 << 20)

struct xkv_client {
	int fd;
	int timeout_ms;
	int attempts;
	uint32_t max_payload;
	uint32_t next_id;
	uint64_t token;		 /* the server's last validation token; 0: none yet */
	uint8_t *dgram;		 /* one outgoing datagram */
	uint8_t *rx;		 /* one incoming datagram */
	struct xkv_reasm *reasm; /* GET replies in pieces */
};

/* The answer to one request: status, and for a GET its value (malloc'ed). */
struct reply {
	enum xkv_status status;
	uint8_t *value;
	uint32_t value_len;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Splits HOST[:PORT], [V6]:PORT or a bare IPv6 address into host and port strings. */
static int split_server(const char *server, char *host, size_t host_cap, char *port,
			size_t port_cap)
{
	const char *colon = strrchr(server, ':');
	size_t host_len;

	snprintf(port, port_cap, "%d", XKV_DEFAULT_PORT);
	if (server[0] == '[') {
		const char *end = strchr(server, ']');

		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		host_len = end - server - 1;
		server++;
		colon = end[1] ? end + 1 : NULL;
	} else if (colon && strchr(server, ':') != colon) {
		colon = NULL; /* several colons: an IPv6 address with no port */
		host_len = strlen(server);
	} else {
		host_len = colon ? (size_t)(colon - server) : strlen(server);
	}
	if (!host_len || host_len >= host_cap)
		return -EINVAL;
	memcpy(host, server, host_len);
	host[host_len] = '\0';
	if (colon) {
		if (!colon[1] || strlen(colon + 1) >= port_cap)
			return -EINVAL;
		snprintf(port, port_cap, "%s", colon + 1);
	}
	return 0;
}

static int connect_server(const char *server)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res, *ai;
	char host[256], port[16];
	int fd = -1, err;

	err = split_server(server, host, sizeof(host), port, sizeof(port));
	if (err)
		return err;
	err = getaddrinfo(host, port, &hints, &res);
	if (err)
		return err == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		int rcvbuf = SOCKET_BUF;

		fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		/* a 1 MiB reply arrives as a burst of ~720 datagrams; FORCE needs root */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	err = fd < 0 ? -errno : fd;
	freeaddrinfo(res);
	return err;
}

struct xkv_client *xkv_client_open(const char *server, const struct xkv_client_opts *opts)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = XKV_VALUE_MAX,
		.max_messages = 1,
		.timeout_ns = 0, /* each request's leftovers go when it ends */
	};
	struct xkv_client *c = calloc(1, sizeof(*c));
	int fd;

	if (!c)
		return NULL;
	c->timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->attempts = 1 + (!opts || !opts->retries ? DEFAULT_RETRIES
						   : opts->retries < 0 ? 0 : opts->retries);
	c->max_payload = opts && opts->max_payload ? opts->max_payload : XKV_DGRAM_MAX;
	if (c->max_payload < sizeof(struct xkv_hdr) + XKV_KEY_MAX + 1) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	if (getrandom(&c->next_id, sizeof(c->next_id), 0) != sizeof(c->next_id))
		c->next_id = (uint32_t)now_ns();

	fd = connect_server(server);
	if (fd < 0) {
		free(c);
		errno = -fd;
		return NULL;
	}
	c->fd = fd;
	c->dgram = malloc(c->max_payload);
	c->rx = malloc(RECV_MAX);
	c->reasm = xkv_reasm_create(&reasm);
	if (!c->dgram || !c->rx || !c->reasm) {
		xkv_client_close(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void xkv_client_close(struct xkv_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c->dgram);
	free(c->rx);
	xkv_reasm_destroy(c->reasm);
	free(c);
}

/* Sends every datagram of one request: one, or one per piece of a large value. */
static int send_request(struct xkv_client *c, struct xkv_msg *req, const uint8_t *value)
{
	uint32_t room = c->max_payload - sizeof(struct xkv_hdr) - req->key_len;
	uint32_t off = 0;

	do {
		int len;

		req->frag_offset = off;
		req->frag_len = req->value_len - off < room ? req->value_len - off : room;
		req->frag = value + off;
		req->timestamp = now_ns();
		req->token = c->token;
		len = xkv_encode(c->dgram, c->max_payload, req);
		if (len < 0)
			return len;
		if (send(c->fd, c->dgram, len, 0) < 0)
			return -errno;
		off += req->frag_len;
	} while (off < req->value_len);
	return 0;
}

/* Takes one datagram; returns 1 when it completes the reply to req, 0 to keep waiting. */
static int take_datagram(struct xkv_client *c, const struct xkv_msg *req, size_t len,
			 struct reply *out)
{
	static const struct xkv_peer server;
	struct xkv_reasm_msg *whole;
	struct xkv_msg m;

	if (xkv_decode(c->rx, len, &m) != XKV_R_OK)
		return 0;
	/* the socket is connected: any reply's token is the server's word for us */
	if ((m.op & XKV_OP_REPLY) && m.token)
		c->token = m.token;
	if (m.request_id != req->request_id || m.op != (req->op | XKV_OP_REPLY))
		return 0; /* a stray, or a late reply to an earlier request */
	out->status = m.status;
	if (m.frag_len == m.value_len) {
		out->value_len = m.value_len;
		out->value = malloc(m.value_len ? m.value_len : 1);
		if (!out->value)
			return -ENOMEM;
		memcpy(out->value, m.frag, m.value_len);
		return 1;
	}
	if (xkv_reasm_add(c->reasm, &server, &m, now_ns(), &whole) != XKV_REASM_COMPLETE)
		return 0;
	out->value_len = whole->head.value_len;
	out->value = malloc(out->value_len);
	if (out->value)
		memcpy(out->value, whole->head.frag, out->value_len);
	xkv_reasm_release(c->reasm, whole);
	return out->value ? 1 : -ENOMEM;
}

static int await_reply(struct xkv_client *c, const struct xkv_msg *req, struct reply *out)
{
	uint64_t deadline = now_ns() + (uint64_t)c->timeout_ms * 1000000ULL;

	for (;;) {
		uint64_t now = now_ns();
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		ssize_t len;
		int done;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		len = recv(c->fd, c->rx, RECV_MAX, MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno; /* ECONNREFUSED: nothing listens there */
		}
		done = take_datagram(c, req, (size_t)len, out);
		if (done)
			return done < 0 ? done : 0;
	}
}

static int status_errno(enum xkv_status status)
{
	switch (status) {
	case XKV_S_OK:
		return 0;
	case XKV_S_NOT_FOUND:
		return -ENOENT;
	case XKV_S_TOO_LARGE:
		return -E2BIG;
	case XKV_S_NO_MEMORY:
		return -ENOMEM;
	case XKV_S_BAD_REQUEST:
		return -EINVAL;
	case XKV_S_BUSY:
		return -EBUSY;
	case XKV_S_VALIDATE:
		return -EAGAIN;
	}
	return -EPROTO;
}

/*
 * One request, retried with the same id until a reply comes or the attempts run out.
 * Answered VALIDATE, it is asked once more, with the token that answer brought.
 */
static int transact(struct xkv_client *c, uint8_t op, const void *key, size_t key_len,
		    const void *value, size_t value_len, struct reply *out)
{
	struct xkv_msg req = {
		.op = op,
		.key = key,
		.key_len = (uint16_t)key_len,
		.value_len = (uint32_t)value_len,
		.request_id = c->next_id++,
	};
	bool validated = false;
	int err = -ETIMEDOUT;

	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return -EINVAL;
	if (value_len > XKV_VALUE_MAX)
		return -E2BIG;
	*out = (struct reply){0};
	for (int attempt = 0; attempt < c->attempts && err == -ETIMEDOUT; attempt++) {
		err = send_request(c, &req, value);
		if (!err)
			err = await_reply(c, &req, out);
		if (!err && out->status == XKV_S_VALIDATE && !validated) {
			validated = true;
			free(out->value);
			*out = (struct reply){0};
			/* a new id: a late copy of this answer must not pass for the next */
			req.request_id = c->next_id++;
			attempt--; /* answered: no attempt lost */
			err = -ETIMEDOUT;
		}
	}
	xkv_reasm_expire(c->reasm, now_ns()); /* forget pieces of a reply that never finished */
	return err ? err : status_errno(out->status);
}

int xkv_client_get(struct xkv_client *c, const void *key, size_t key_len, void **value,
		   uint32_t *value_len)
{
	struct reply r;
	int err = transact(c, XKV_OP_GET, key, key_len, NULL, 0, &r);

	if (err) {
		free(r.value);
		return err;
	}
	*value = r.value;
	*value_len = r.value_len;
	return 0;
}

int xkv_client_put(struct xkv_client *c, const void *key, size_t key_len, const void *value,
		   size_t value_len)
{
	struct reply r;
	int err = transact(c, XKV_OP_PUT, key, key_len, value, value_len, &r);

	free(r.value);
	return err;
}

int xkv_client_delete(struct xkv_client *c, const void *key, size_t key_len)
{
	struct reply r;
	int err = transact(c, XKV_OP_DELETE, key, key_len, NULL, 0, &r);

	free(r.value);
	return err;
}
