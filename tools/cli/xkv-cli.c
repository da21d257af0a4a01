// SPDX-License-Identifier: MIT
/*
 * xkv-cli: one request from the command line.
 *
 *   xkv-cli [--server SERVERS] [--timeout MS] [--retries N] [--dir] get KEY
 *   xkv-cli ... put KEY VALUE | put KEY @FILE | del KEY | where KEY...
 *
 * SERVERS is one server or a list that keys are spread over by ketama, as twemproxy
 * spreads them (userspace/client/client.h); `where` names the server of each key.
 *
 * Exit codes: 0 done (or found), 1 not found, 2 any error (on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/proto.h>
#include "client/client.h"
#include "util/opts.h"

enum { EXIT_FOUND = 0, EXIT_NOT_FOUND = 1, EXIT_ERROR = 2 };

enum { OPT_SERVER, OPT_TIMEOUT, OPT_RETRIES, OPT_DIR, OPT_HELP };

static const struct xkv_opt options[] = {
	[OPT_SERVER] = {"server", 's', "SERVERS",
			"HOST[:PORT], or a list: HOST:PORT[:WEIGHT][ NAME],... spread by ketama "
			"(default 127.0.0.1:" XKV_OPTS_STR(XKV_DEFAULT_PORT) ")"},
	[OPT_TIMEOUT] = {"timeout", 't', "MS", "per attempt (default 500)"},
	[OPT_RETRIES] = {"retries", 'r', "N", "attempts after the first (default 2)"},
	[OPT_DIR] = {"dir", 'd', NULL,
		     "speak version 3, as keys a coherence directory replicates need "
		     "(docs/DIRECTORY.md)"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

static void usage(FILE *f)
{
	fputs("usage: xkv-cli [options] get KEY\n"
	      "       xkv-cli [options] put KEY VALUE\n"
	      "       xkv-cli [options] put KEY @FILE\n"
	      "       xkv-cli [options] del KEY\n"
	      "       xkv-cli [options] where KEY...   (each key's server, by its name)\n"
	      "options:\n",
	      f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
	fputs("exit codes: 0 done or found, 1 not found, 2 error\n", f);
}

/* Reads FILE whole; values are at most 1 MiB, so one more byte tells it is too big. */
static int read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return -errno;
	buf = malloc(XKV_VALUE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, XKV_VALUE_MAX + 1, f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return -EIO;
	}
	fclose(f);
	if (n > XKV_VALUE_MAX) {
		free(buf);
		return -E2BIG;
	}
	*data = buf;
	*len = n;
	return 0;
}

static int run(struct xkv_client *c, int argc, char **argv)
{
	const char *cmd = argv[0], *key = argv[1];
	size_t key_len = strlen(key);
	void *value = NULL;
	uint32_t value_len;
	int err;

	if (!strcmp(cmd, "get") && argc == 2) {
		err = xkv_client_get(c, key, key_len, &value, &value_len);
		if (!err && fwrite(value, 1, value_len, stdout) != value_len)
			err = -EIO;
		free(value);
		return err;
	}
	if (!strcmp(cmd, "del") && argc == 2)
		return xkv_client_delete(c, key, key_len);
	if (!strcmp(cmd, "where")) {
		for (int i = 1; i < argc; i++)
			printf("%s\t%s\n", argv[i],
			       xkv_client_server_name(c, xkv_client_place(c, argv[i],
									strlen(argv[i]))));
		return 0;
	}
	if (!strcmp(cmd, "put") && argc == 3) {
		const char *arg = argv[2];
		char *data = NULL;
		size_t len = strlen(arg);

		if (arg[0] == '@') {
			err = read_file(arg + 1, &data, &len);
			if (err) {
				fprintf(stderr, "xkv-cli: %s: %s\n", arg + 1,
					err == -E2BIG ? "larger than 1 MiB" : strerror(-err));
				return -ECANCELED;
			}
		}
		err = xkv_client_put(c, key, key_len, data ? data : arg, len);
		free(data);
		return err;
	}
	return -ENOTSUP;
}

int main(int argc, char **argv)
{
	struct xkv_client_opts copts = {0};
	const char *server = "127.0.0.1";
	struct xkv_client *c;
	struct xkv_opts p;
	uint32_t value;
	int opt, err;

	/* options end at the command: a key or value may start with a dash */
	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), XKV_OPTS_IN_ORDER);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case OPT_SERVER:
			server = p.arg;
			break;
		case OPT_TIMEOUT:
			err = xkv_opts_u32(&p, 1, 3600000, &value);
			if (!err)
				copts.timeout_ms = (int)value;
			break;
		case OPT_RETRIES:
			err = xkv_opts_u32(&p, 0, 1000, &value);
			if (!err) /* the client's 0 means 2 */
				copts.retries = value ? (int)value : -1;
			break;
		case OPT_DIR:
			copts.dir = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return EXIT_FOUND;
		default:
			err = opt;
		}
	}
	if (err) {
		fprintf(stderr, "xkv-cli: %s (--help for usage)\n", p.why);
		return EXIT_ERROR;
	}
	argc -= optind;
	argv += optind;
	if (argc < 2) {
		usage(stderr);
		return EXIT_ERROR;
	}

	c = xkv_client_open(server, &copts);
	if (!c) {
		fprintf(stderr, "xkv-cli: cannot reach %s: %s\n", server,
			errno == EINVAL ? "not a server or a list of them" : strerror(errno));
		return EXIT_ERROR;
	}
	err = run(c, argc, argv);
	xkv_client_close(c);
	switch (err) {
	case 0:
		return EXIT_FOUND;
	case -ENOENT:
		return EXIT_NOT_FOUND;
	case -ECANCELED: /* already explained */
		return EXIT_ERROR;
	case -ENOTSUP:
		usage(stderr);
		return EXIT_ERROR;
	case -ETIMEDOUT:
		fprintf(stderr, "xkv-cli: %s: no reply from %s\n", argv[0], server);
		return EXIT_ERROR;
	default:
		fprintf(stderr, "xkv-cli: %s: %s\n", argv[0],
			err == -ENOMEM	 ? "server out of memory"
			: err == -EBUSY	 ? "server busy, try again"
			: err == -EAGAIN ? "server refused the token it gave, try again"
			: err == -E2BIG	 ? "value too large (max 1 MiB)"
			: err == -EINVAL ? "bad request (key must be 1..250 bytes)"
					 : strerror(-err));
		return EXIT_ERROR;
	}
}
