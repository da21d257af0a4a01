/* SPDX-License-Identifier: MIT */
/*
 * The xkv client library: blocking GET/PUT/DELETE over UDP with timeouts and
 * retries. Values of any size up to 1 MiB are split into datagrams and put back
 * together. One client is one socket; use one per thread. The validation token
 * the server asks for before a large reply (docs/PROTOCOL.md, "Amplification") is
 * kept and shown without the caller's help.
 */
#ifndef XKV_CLIENT_H
#define XKV_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xkv/proto.h>

struct xkv_client_opts {
	int timeout_ms;	      /* per attempt; 0: 500 */
	int retries;	      /* attempts after the first; -1: none, 0: 2 */
	uint32_t max_payload; /* UDP payload per datagram; 0: XKV_DGRAM_MAX */
	/*
	 * Requests in version 3, the directory's extension zero (docs/PROTOCOL.md): what
	 * a key a coherence directory replicates needs (docs/DIRECTORY.md).
	 */
	bool dir;
};

struct xkv_client;

/*
 * servers is one server, HOST[:PORT] or [V6ADDR]:PORT (port XKV_DEFAULT_PORT if left
 * out), or a list of them, "S1,S2,...", each with an optional ":WEIGHT" after its port
 * and " NAME": keys are spread over a list by ketama as twemproxy spreads them
 * (client/ketama.h, client/servers.h). NULL + errno.
 */
struct xkv_client *xkv_client_open(const char *servers, const struct xkv_client_opts *opts);
void xkv_client_close(struct xkv_client *c);

/*
 * Each returns 0, or: -ENOENT (not found), -E2BIG (too large), -ENOMEM (server
 * out of memory), -EINVAL (bad request, e.g. key length), -EBUSY (server busy),
 * -ETIMEDOUT (no reply after every retry), -EAGAIN (the server refused the token it
 * gave), -EPROTO (a reply that makes no sense), or another -errno from the socket.
 */
int xkv_client_get(struct xkv_client *c, const void *key, size_t key_len, void **value,
		   uint32_t *value_len); /* *value is malloc'ed; free() it */
int xkv_client_put(struct xkv_client *c, const void *key, size_t key_len, const void *value,
		   size_t value_len);
int xkv_client_delete(struct xkv_client *c, const void *key, size_t key_len);

/*
 * For a coherence directory's controller (docs/DIRECTORY.md): one request in version 3
 * to a server it names, carrying the extension as the directory would fill it, so
 * that the server applies a write by its version and vouches for what it holds.
 */
struct xkv_client_steer {
	uint32_t server;	  /* which of the list, not the key's ketama server */
	struct xkv_dir_ext ext;	  /* the request's (include/xkv/proto.h) */
	struct xkv_dir_ext reply; /* out: the reply's, also on -ENOENT */
};

/*
 * op is XKV_OP_GET, PUT or DELETE; a GET's value goes to *reply_value (malloc'ed)
 * unless reply_value is NULL. Returns as the calls above.
 */
int xkv_client_steered(struct xkv_client *c, uint8_t op, const void *key, size_t key_len,
		       const void *value, size_t value_len, struct xkv_client_steer *steer,
		       void **reply_value, uint32_t *reply_len);

/* How many servers c spreads keys over; which of them holds key; a server's ketama name. */
uint32_t xkv_client_servers(const struct xkv_client *c);
uint32_t xkv_client_place(const struct xkv_client *c, const void *key, size_t key_len);
const char *xkv_client_server_name(const struct xkv_client *c, uint32_t i);

#endif /* XKV_CLIENT_H */
