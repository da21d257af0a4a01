/* SPDX-License-Identifier: MIT */
/*
 * TLS for a stream whose bytes move elsewhere (net/tcp_uring.c's io_uring): OpenSSL on
 * memory buffers, never on the socket. What arrives is fed in ciphertext and read out
 * in plaintext; what is written in plaintext is taken out in ciphertext, handshake and
 * alerts included. A context is shared by every worker (OpenSSL makes connections from
 * one context on any thread), and replaced whole by a refresh; a connection belongs to
 * its worker.
 */
#ifndef XKV_NET_TLS_H
#define XKV_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

enum xkv_tls_verify {
	XKV_TLS_VERIFY_NONE,	/* no client certificate asked for */
	XKV_TLS_VERIFY_REQUEST, /* asked for; one given must verify, none is let in */
	XKV_TLS_VERIFY_REQUIRE, /* one that verifies against ca, or the handshake fails */
};

struct xkv_tls_opts {
	const char *cert;	   /* the server's certificate chain, PEM, leaf first */
	const char *key;	   /* its private key, PEM (NULL: in cert's file) */
	const char *ca;		   /* CAs client certificates must chain to, PEM */
	enum xkv_tls_verify verify;
	const char *min_version;   /* "1.2" or "1.3" */
	const char *ciphers;	   /* OpenSSL's cipher list for TLS 1.2 (NULL: its default) */
};

struct xkv_tls;
struct xkv_tls_conn;

/*
 * A server context from o: its certificate and key loaded and checked against each
 * other. 0, or -errno with why (a line naming the file and OpenSSL's reason) written.
 */
int xkv_tls_new(const struct xkv_tls_opts *o, struct xkv_tls **out, char *why, size_t why_len);
void xkv_tls_free(struct xkv_tls *tls);
/*
 * The certificate, key and CAs loaded again from their files (memcached's
 * refresh_certs): new connections get them, open ones keep theirs. On failure (why
 * written) the old ones stay. 0, or -EINVAL. Any thread.
 */
int xkv_tls_refresh(struct xkv_tls *tls, char *why, size_t why_len);
/* When they were last loaded. */
time_t xkv_tls_loaded(struct xkv_tls *tls);

/* A server side connection waiting for its client's hello, or NULL (no memory). */
struct xkv_tls_conn *xkv_tls_conn_new(struct xkv_tls *tls);
void xkv_tls_conn_free(struct xkv_tls_conn *c);

/* Received ciphertext, kept for xkv_tls_read. 0, or -ENOMEM. */
int xkv_tls_feed(struct xkv_tls_conn *c, const void *data, size_t len);
/*
 * Plaintext into buf[0..cap), after as much handshake as what was fed allows: the
 * bytes read; 0, none until more is fed; -EPIPE, the client closed the session
 * (close_notify); -EPROTO, the handshake or a record failed (its alert waits in the
 * output).
 */
ssize_t xkv_tls_read(struct xkv_tls_conn *c, void *buf, size_t cap);
/* Whether the handshake is done: a failure before it is a handshake error. */
bool xkv_tls_handshaken(const struct xkv_tls_conn *c);
/* Whether fed or decrypted bytes wait for a read: more input is not needed yet. */
bool xkv_tls_pending(const struct xkv_tls_conn *c);
/* Encrypts len bytes of plaintext for xkv_tls_take. 0, or -EPROTO. */
int xkv_tls_write(struct xkv_tls_conn *c, const void *data, size_t len);
/* Queues close_notify once, if the handshake is done (a failed one has its alert). */
void xkv_tls_close_notify(struct xkv_tls_conn *c);
/* Ciphertext waiting to be sent; xkv_tls_take copies up to len of it into buf. */
size_t xkv_tls_output(const struct xkv_tls_conn *c);
size_t xkv_tls_take(struct xkv_tls_conn *c, void *buf, size_t len);

#endif /* XKV_NET_TLS_H */
