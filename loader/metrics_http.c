// SPDX-License-Identifier: MIT
/* `xkv-loader metrics`: Prometheus's /metrics over libmicrohttpd (metrics_http.h). */
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfctl/log.h"
#include "metrics_http.h"
#include "prometheus.h"

#define CONNECTIONS_MAX 16 /* a scraper or two, and a person with curl */
#define IDLE_TIMEOUT_S	10 /* a connection that sends nothing for this long is closed */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(conn, status, body, strlen(body), "text/plain; charset=utf-8")
		    : MHD_NO;
}

/* The snapshot in Prometheus's format into a buffer of its own: 0 or -errno. */
static int metrics_text(const char *ifname, char **text, size_t *len)
{
	struct snapshot *s = malloc(sizeof(*s));
	FILE *out;
	int err;

	*text = NULL;
	if (!s)
		return -ENOMEM;
	out = open_memstream(text, len);
	if (!out) {
		err = -errno;
		goto out_free;
	}
	err = snapshot_read(ifname, s);
	if (!err)
		err = prometheus_write(out, s);
	if (fclose(out) && !err)
		err = -ENOMEM;
	snapshot_free(s);
out_free:
	free(s);
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	const char *ifname = cls;
	char *text;
	size_t len;
	int err;

	(void)version;
	(void)upload;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (*upload_len) /* a GET with a body: nothing of it is wanted */
		return MHD_NO;
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "xkv-loader serves /metrics\n");
	err = metrics_text(ifname, &text, &len);
	if (err) {
		char why[160];

		snprintf(why, sizeof(why), "reading xkv's counters on %s: %s\n", ifname,
			 strerror(-err));
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why);
	}
	return reply(conn, MHD_HTTP_OK, text, len, "text/plain; version=0.0.4; charset=utf-8");
}

/* "ADDR:PORT" or "[ADDR6]:PORT" as an address to bind: 0 or -EINVAL. */
static int listen_parse(const char *listen, struct addrinfo **ai)
{
	const struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	const char *colon = strrchr(listen, ':');
	char host[64];
	size_t n;

	if (!colon || colon == listen)
		return -EINVAL;
	n = (size_t)(colon - listen);
	if (listen[0] == '[' && colon[-1] == ']') {
		listen++;
		n -= 2;
	}
	if (n >= sizeof(host))
		return -EINVAL;
	memcpy(host, listen, n);
	host[n] = '\0';
	return getaddrinfo(host, colon + 1, &hints, ai) ? -EINVAL : 0;
}

int metrics_serve(const char *ifname, const char *listen)
{
	struct MHD_Daemon *d;
	struct addrinfo *ai;
	sigset_t stop;
	int sig, err;

	err = listen_parse(listen, &ai);
	if (err)
		return err;
	/* the daemon's thread inherits this mask: only sigwait below takes them */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, answer, (void *)ifname, MHD_OPTION_SOCK_ADDR,
			     ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX,
			     MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT_S, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!d) {
		pr_warn("xkv-loader: cannot serve on %s (taken, or not an address here)\n", listen);
		return -EADDRNOTAVAIL;
	}
	printf("serving %s's metrics on http://%s/metrics\n", ifname, listen);
	fflush(stdout);
	sigwait(&stop, &sig);
	MHD_stop_daemon(d);
	return 0;
}
