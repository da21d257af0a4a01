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
#include "client/servers.h"
#include "proto/codec.h"
#include "proto/reassembly.h"

#define DEFAULT_TIMEOUT_MS 500
#define DEFAULT_RETRIES	   2
#define RECV_MAX	   65536
#define SOCKET_BUF	   (8 << 20)

/* One server of the list: its socket, connected, and what it told us. */
struct server {
	int fd;
	uint64_t token; /* its last validation token; 0: none yet */
};

struct xkv_client {
	struct server *servers;
	uint32_t nservers;
	struct xkv_ketama ring;	 /* with more than one server: which holds a key */
	struct xkv_server_addr *addrs;
	int timeout_ms;
	int attempts;
	uint32_t max_payload;
	bool dir; /* requests in version 3 (xkv_client_opts.dir) */
	uint32_t next_id;
	uint8_t *dgram;		 /* one outgoing datagram */
	uint8_t *rx;		 /* one incoming datagram */
	struct xkv_reasm *reasm; /* GET replies in pieces */
};

/* The answer to one request: status, for a GET its value (malloc'ed), its extension. */
struct reply {
	enum xkv_status status;
	uint8_t *value;
	uint32_t value_len;
	struct xkv_dir_ext ext; /* version 3: the first datagram's */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int connect_server(const struct xkv_server_addr *a)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res, *ai;
	int fd = -1, err;

	err = getaddrinfo(a->host, a->port, &hints, &res);
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

/* Every server of the list, connected; with several, their ketama continuum. */
static int connect_all(struct xkv_client *c, const char *list)
{
	uint32_t bad;
	int err = xkv_servers_parse(list, XKV_DEFAULT_PORT, &c->addrs, &c->nservers, &bad);

	if (err)
		return err;
	c->servers = calloc(c->nservers, sizeof(*c->servers));
	if (!c->servers)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nservers; i++)
		c->servers[i].fd = -1;
	for (uint32_t i = 0; i < c->nservers; i++) {
		int fd = connect_server(&c->addrs[i]);

		if (fd < 0)
			return fd;
		c->servers[i].fd = fd;
	}
	return c->nservers > 1 ? xkv_servers_ketama(c->addrs, c->nservers, &c->ring) : 0;
}

struct xkv_client *xkv_client_open(const char *servers, const struct xkv_client_opts *opts)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = XKV_VALUE_MAX,
		.max_messages = 1,
		.timeout_ns = 0, /* each request's leftovers go when it ends */
	};
	struct xkv_client *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->attempts = 1 + (!opts || !opts->retries ? DEFAULT_RETRIES
						   : opts->retries < 0 ? 0 : opts->retries);
	c->max_payload = opts && opts->max_payload ? opts->max_payload : XKV_DGRAM_MAX;
	c->dir = opts && opts->dir;
	if (c->max_payload <
	    sizeof(struct xkv_hdr) + (c->dir ? XKV_DIR_EXT_LEN : 0) + XKV_KEY_MAX + 1) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	if (getrandom(&c->next_id, sizeof(c->next_id), 0) != sizeof(c->next_id))
		c->next_id = (uint32_t)now_ns();

	err = connect_all(c, servers);
	if (err) {
		xkv_client_close(c);
		errno = -err;
		return NULL;
	}
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
	for (uint32_t i = 0; c->servers && i < c->nservers; i++)
		if (c->servers[i].fd >= 0)
			close(c->servers[i].fd);
	free(c->servers);
	free(c->addrs);
	xkv_ketama_fini(&c->ring);
	free(c->dgram);
	free(c->rx);
	xkv_reasm_destroy(c->reasm);
	free(c);
}

/* Sends every datagram of one request: one, or one per piece of a large value. */
static int send_request(struct xkv_client *c, struct server *to, struct xkv_msg *req,
			const uint8_t *value)
{
	uint32_t room = c->max_payload - xkv_msg_hdr_len(req) - req->key_len;
	uint32_t off = 0;

	do {
		int len;

		req->frag_offset = off;
		req->frag_len = req->value_len - off < room ? req->value_len - off : room;
		req->frag = value + off;
		req->timestamp = now_ns();
		req->token = to->token;
		len = xkv_encode(c->dgram, c->max_payload, req);
		if (len < 0)
			return len;
		if (send(to->fd, c->dgram, len, 0) < 0)
			return -errno;
		off += req->frag_len;
	} while (off < req->value_len);
	return 0;
}

/* Takes one datagram; returns 1 when it completes the reply to req, 0 to keep waiting. */
static int take_datagram(struct xkv_client *c, struct server *from, const struct xkv_msg *req,
			 size_t len, struct reply *out)
{
	static const struct xkv_peer server;
	struct xkv_reasm_msg *whole;
	struct xkv_msg m;

	if (xkv_decode(c->rx, len, &m) != XKV_R_OK)
		return 0;
	/* the socket is connected: any reply's token is the server's word for us */
	if ((m.op & XKV_OP_REPLY) && m.token)
		from->token = m.token;
	if (m.request_id != req->request_id || m.op != (req->op | XKV_OP_REPLY))
		return 0; /* a stray, or a late reply to an earlier request */
	out->status = m.status;
	if (m.dir && (m.frag_offset == 0 || m.frag_len == m.value_len))
		out->ext = m.ext;
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

static int await_reply(struct xkv_client *c, struct server *from, const struct xkv_msg *req,
		       struct reply *out)
{
	uint64_t deadline = now_ns() + (uint64_t)c->timeout_ms * 1000000ULL;

	for (;;) {
		uint64_t now = now_ns();
		struct pollfd pfd = {.fd = from->fd, .events = POLLIN};
		ssize_t len;
		int done;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		len = recv(from->fd, c->rx, RECV_MAX, MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno; /* ECONNREFUSED: nothing listens there */
		}
		done = take_datagram(c, from, req, (size_t)len, out);
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
		    const void *value, size_t value_len, const struct xkv_client_steer *steer,
		    struct reply *out)
{
	struct xkv_msg req = {
		.op = op,
		.key = key,
		.key_len = (uint16_t)key_len,
		.value_len = (uint32_t)value_len,
		.request_id = c->next_id++,
		.dir = c->dir || steer, /* the extension zero: the directory's to fill */
	};
	bool validated = false;
	int err = -ETIMEDOUT;
	struct server *to;

	if (key_len < XKV_KEY_MIN || key_len > XKV_KEY_MAX)
		return -EINVAL;
	if (steer && steer->server >= c->nservers)
		return -EINVAL;
	if (steer)
		req.ext = steer->ext;
	to = &c->servers[steer ? steer->server : xkv_client_place(c, key, key_len)];
	if (value_len > XKV_VALUE_MAX)
		return -E2BIG;
	*out = (struct reply){0};
	for (int attempt = 0; attempt < c->attempts && err == -ETIMEDOUT; attempt++) {
		err = send_request(c, to, &req, value);
		if (!err)
			err = await_reply(c, to, &req, out);
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

uint32_t xkv_client_servers(const struct xkv_client *c)
{
	return c->nservers;
}

uint32_t xkv_client_place(const struct xkv_client *c, const void *key, size_t key_len)
{
	return c->nservers > 1 ? xkv_ketama_place(&c->ring, key, key_len) : 0;
}

const char *xkv_client_server_name(const struct xkv_client *c, uint32_t i)
{
	return i < c->nservers ? c->addrs[i].name : NULL;
}

int xkv_client_get(struct xkv_client *c, const void *key, size_t key_len, void **value,
		   uint32_t *value_len)
{
	struct reply r;
	int err = transact(c, XKV_OP_GET, key, key_len, NULL, 0, NULL, &r);

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
	int err = transact(c, XKV_OP_PUT, key, key_len, value, value_len, NULL, &r);

	free(r.value);
	return err;
}

int xkv_client_delete(struct xkv_client *c, const void *key, size_t key_len)
{
	struct reply r;
	int err = transact(c, XKV_OP_DELETE, key, key_len, NULL, 0, NULL, &r);

	free(r.value);
	return err;
}

int xkv_client_steered(struct xkv_client *c, uint8_t op, const void *key, size_t key_len,
		       const void *value, size_t value_len, struct xkv_client_steer *steer,
		       void **reply_value, uint32_t *reply_len)
{
	struct reply r;
	int err = transact(c, op, key, key_len, value, value_len, steer, &r);

	steer->reply = r.ext;
	if (!err && reply_value) {
		*reply_value = r.value;
		*reply_len = r.value_len;
	} else {
		free(r.value);
	}
	return err;
}
