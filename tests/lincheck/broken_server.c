// SPDX-License-Identifier: MIT
/*
 * A broken xkv server for the linearizability test's rows that must fail
 * (tests/server/test_linearizable.c). It keeps no store: every key is absent. One mode:
 *   --bad-replies     PUT answered NOT_FOUND, GET answered BAD_REQUEST: replies that
 *                     make no sense to what was asked (xkv-linload must refuse them);
 *   --no-put-replies  PUT never answered: a history of little but unknown outcomes,
 *                     linearizable and worthless (the test's floor must refuse it).
 * GET and DELETE are otherwise answered NOT_FOUND, so a client that checks whether it
 * answers (server_proc.c, a GET of "ping") and one that deletes its keys first get
 * on. Every other option is xkv-server's and left alone but --port. SIGTERM: exit 0.
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/codec.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The status req gets, or -1 for none. */
static int status_for(const struct xkv_msg *req, bool bad_replies, bool no_put_replies)
{
	switch (req->op) {
	case XKV_OP_PUT:
		if (no_put_replies || req->frag_offset + req->frag_len < req->value_len)
			return -1; /* a PUT in pieces is answered at its last */
		return XKV_S_NOT_FOUND; /* --bad-replies */
	case XKV_OP_GET:
		if (bad_replies && !(req->key_len == 4 && !memcmp(req->key, "ping", 4)))
			return XKV_S_BAD_REQUEST;
		return XKV_S_NOT_FOUND;
	default:
		return XKV_S_NOT_FOUND;
	}
}

int main(int argc, char **argv)
{
	const struct sigaction sa = {.sa_handler = on_term};
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
	bool bad_replies = false, no_put_replies = false;
	uint8_t buf[2048], out[128];
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bad-replies"))
			bad_replies = true;
		else if (!strcmp(argv[i], "--no-put-replies"))
			no_put_replies = true;
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			addr.sin_port = htons((uint16_t)atoi(argv[++i]));
	}
	if (bad_replies == no_put_replies || !addr.sin_port) {
		fprintf(stderr, "usage: broken_server --bad-replies|--no-put-replies --port P "
				"[xkv-server's options]\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("broken_server: port");
		return 1;
	}
	/* no SA_RESTART: SIGTERM ends the receive it interrupts */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		struct sockaddr_in from;
		socklen_t from_len = sizeof(from);
		struct xkv_msg req, reply;
		ssize_t len;
		int status;

		len = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &from_len);
		if (len < 0 || xkv_decode(buf, (size_t)len, &req) != XKV_R_OK ||
		    (req.op & XKV_OP_REPLY))
			continue;
		status = status_for(&req, bad_replies, no_put_replies);
		if (status < 0)
			continue;
		reply = (struct xkv_msg){.op = req.op | XKV_OP_REPLY, .status = (uint8_t)status,
					 .request_id = req.request_id, .timestamp = req.timestamp};
		len = xkv_encode(out, sizeof(out), &reply);
		if (len > 0)
			sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, from_len);
	}
	return 0;
}
