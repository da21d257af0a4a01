// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "net/tls.h"

struct xkv_tls {
	pthread_mutex_t lock; /* ctx, as a refresh replaces it under new connections */
	SSL_CTX *ctx;
	struct xkv_tls_opts o; /* the files a refresh loads again */
	time_t loaded;
};

struct xkv_tls_conn {
	SSL *ssl;
	BIO *in, *out; /* owned by ssl */
};

/* why: what failed, on which file, and OpenSSL's first reason for it. */
static int failed(char *why, size_t why_len, const char *what, const char *file)
{
	unsigned long e = ERR_peek_error();
	char reason[256] = "no reason given";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	snprintf(why, why_len, "%s%s%s: %s", what, file ? " " : "", file ? file : "", reason);
	ERR_clear_error();
	return -EINVAL;
}

static int min_version(const char *v)
{
	if (!v || !strcmp(v, "1.2"))
		return TLS1_2_VERSION;
	if (!strcmp(v, "1.3"))
		return TLS1_3_VERSION;
	return 0;
}

static int ctx_configure(SSL_CTX *ctx, const struct xkv_tls_opts *o, char *why, size_t why_len)
{
	int version = min_version(o->min_version);
	STACK_OF(X509_NAME) *names;

	if (!version) {
		snprintf(why, why_len, "TLS version %s: 1.2 or 1.3", o->min_version);
		return -EINVAL;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, version))
		return failed(why, why_len, "setting the lowest TLS version", NULL);
	if (o->ciphers && !SSL_CTX_set_cipher_list(ctx, o->ciphers))
		return failed(why, why_len, "the cipher list", o->ciphers);
	if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1)
		return failed(why, why_len, "the certificate", o->cert);
	if (SSL_CTX_use_PrivateKey_file(ctx, o->key ? o->key : o->cert, SSL_FILETYPE_PEM) != 1)
		return failed(why, why_len, "the private key", o->key ? o->key : o->cert);
	if (SSL_CTX_check_private_key(ctx) != 1)
		return failed(why, why_len, "the private key does not match the certificate",
			      o->cert);
	if (o->ca) {
		if (SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1)
			return failed(why, why_len, "the client CA", o->ca);
		names = SSL_load_client_CA_file(o->ca);
		if (!names)
			return failed(why, why_len, "the client CA's names", o->ca);
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	if (o->verify != XKV_TLS_VERIFY_NONE && !o->ca) {
		snprintf(why, why_len, "verifying clients needs the CAs they chain to");
		return -EINVAL;
	}
	SSL_CTX_set_verify(ctx,
			   o->verify == XKV_TLS_VERIFY_NONE	 ? SSL_VERIFY_NONE
			   : o->verify == XKV_TLS_VERIFY_REQUEST ? SSL_VERIFY_PEER
								 : SSL_VERIFY_PEER |
								   SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			   NULL);
	/*
	 * No renegotiation a client could ask for over and over; no server session cache
	 * to lock between workers (TLS 1.3's tickets resume without one); idle
	 * connections give their record buffers back.
	 */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	return 0;
}

/* A context from o's files, or NULL with why written. */
static SSL_CTX *ctx_new(const struct xkv_tls_opts *o, char *why, size_t why_len)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		failed(why, why_len, "a TLS context", NULL);
		return NULL;
	}
	if (ctx_configure(ctx, o, why, why_len)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int xkv_tls_new(const struct xkv_tls_opts *o, struct xkv_tls **out, char *why, size_t why_len)
{
	struct xkv_tls *tls = calloc(1, sizeof(*tls));

	if (!tls) {
		snprintf(why, why_len, "no memory");
		return -ENOMEM;
	}
	tls->ctx = ctx_new(o, why, why_len);
	if (!tls->ctx) {
		free(tls);
		return -EINVAL;
	}
	pthread_mutex_init(&tls->lock, NULL);
	tls->o = *o;
	tls->loaded = time(NULL);
	*out = tls;
	return 0;
}

void xkv_tls_free(struct xkv_tls *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ctx);
	pthread_mutex_destroy(&tls->lock);
	free(tls);
}

int xkv_tls_refresh(struct xkv_tls *tls, char *why, size_t why_len)
{
	SSL_CTX *fresh = ctx_new(&tls->o, why, why_len), *old;

	if (!fresh)
		return -EINVAL;
	pthread_mutex_lock(&tls->lock);
	old = tls->ctx;
	tls->ctx = fresh;
	tls->loaded = time(NULL);
	pthread_mutex_unlock(&tls->lock);
	SSL_CTX_free(old); /* a reference: each connection made from it holds its own */
	return 0;
}

time_t xkv_tls_loaded(struct xkv_tls *tls)
{
	time_t loaded;

	pthread_mutex_lock(&tls->lock);
	loaded = tls->loaded;
	pthread_mutex_unlock(&tls->lock);
	return loaded;
}

struct xkv_tls_conn *xkv_tls_conn_new(struct xkv_tls *tls)
{
	struct xkv_tls_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_lock(&tls->lock);
	c->ssl = SSL_new(tls->ctx);
	pthread_mutex_unlock(&tls->lock);
	c->in = BIO_new(BIO_s_mem());
	c->out = BIO_new(BIO_s_mem());
	if (!c->ssl || !c->in || !c->out) {
		BIO_free(c->in);
		BIO_free(c->out);
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	/* empty is "not yet", never the end: the socket's end comes from the ring */
	BIO_set_mem_eof_return(c->in, -1);
	BIO_set_mem_eof_return(c->out, -1);
	SSL_set_bio(c->ssl, c->in, c->out);
	SSL_set_accept_state(c->ssl);
	return c;
}

void xkv_tls_conn_free(struct xkv_tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl); /* and its BIOs */
	free(c);
}

int xkv_tls_feed(struct xkv_tls_conn *c, const void *data, size_t len)
{
	size_t written;

	return BIO_write_ex(c->in, data, len, &written) && written == len ? 0 : -ENOMEM;
}

ssize_t xkv_tls_read(struct xkv_tls_conn *c, void *buf, size_t cap)
{
	size_t n;
	int ret;

	/* SSL_get_error reads this thread's queue: only this call's errors may be in it */
	ERR_clear_error();
	ret = SSL_read_ex(c->ssl, buf, cap, &n);
	if (ret == 1)
		return (ssize_t)n;
	switch (SSL_get_error(c->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		return -EPIPE;
	default:
		ERR_clear_error();
		return -EPROTO;
	}
}

bool xkv_tls_handshaken(const struct xkv_tls_conn *c)
{
	return SSL_is_init_finished(c->ssl);
}

bool xkv_tls_pending(const struct xkv_tls_conn *c)
{
	/*
	 * Plaintext decrypted and not read, or whole records not yet taken from the
	 * memory buffer (no read-ahead: OpenSSL takes one record at a time). Not
	 * SSL_has_pending: a record begun counts there, and waits for the next receive.
	 */
	return SSL_pending(c->ssl) > 0 || BIO_ctrl_pending(c->in);
}

int xkv_tls_write(struct xkv_tls_conn *c, const void *data, size_t len)
{
	size_t n;

	ERR_clear_error();
	/* into a memory buffer: all of it, as whole records, or a failure */
	if (SSL_write_ex(c->ssl, data, len, &n) == 1 && n == len)
		return 0;
	ERR_clear_error();
	return -EPROTO;
}

void xkv_tls_close_notify(struct xkv_tls_conn *c)
{
	if (!SSL_is_init_finished(c->ssl) || (SSL_get_shutdown(c->ssl) & SSL_SENT_SHUTDOWN))
		return;
	ERR_clear_error();
	SSL_shutdown(c->ssl); /* 0: ours is queued; the client's is not waited for */
	ERR_clear_error();
}

size_t xkv_tls_output(const struct xkv_tls_conn *c)
{
	return BIO_ctrl_pending(c->out);
}

size_t xkv_tls_take(struct xkv_tls_conn *c, void *buf, size_t len)
{
	size_t n = 0;

	return BIO_read_ex(c->out, buf, len, &n) ? n : 0;
}
