// SPDX-License-Identifier: MIT
/*
 * xkv-server: the store, one pinned worker thread per core, and a backend:
 * AF_XDP sockets fed by the XDP program (xdp), or kernel UDP sockets driven by
 * io_uring and steered by an SK_REUSEPORT program (uring).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "bpfctl/bpfctl.h"
#include "server/server.h"
#include "util/pin.h"

#define REASM_MEMORY	 (64u << 20) /* per worker */
#define REASM_MESSAGES	 1024
#define REASM_TIMEOUT_NS 1000000000ULL
#define ITEM_BYTES_GUESS 128 /* sizes the bucket array from --memory */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xkv-server [options]\n"
		"  -b, --backend xdp|uring  AF_XDP sockets fed by the XDP program (default when\n"
		"                           --iface is given), or kernel UDP sockets with io_uring\n"
		"  -i, --iface IF           interface for the XDP backend (the io_uring backend\n"
		"                           listens on every address)\n"
		"  -w, --workers N          worker threads, one per core (default: cores online)\n"
		"  -p, --port P             UDP port (default %d)\n"
		"  -m, --memory SIZE        item memory, e.g. 64M, 2G (default 64M)\n"
		"      --mode cache|store   when full: evict (cache, default) or answer NO_MEMORY\n"
		"  -P, --policy erew|crew   steering (default crew): writes always go to the\n"
		"                           partition's owner; crew balances reads\n"
		"  -a, --allow CIDR         XDP backend: a client network allowed to send\n"
		"                           requests (repeatable; none: every request dropped)\n"
		"      --skb                XDP backend: generic (skb) mode instead of native\n"
		"      --echo               answer without the store (GET: not found, PUT and\n"
		"                           DELETE: ok), through the same path: the ceiling\n"
		"  -h, --help\n"
		"SIGINT or SIGTERM stops it, detaches what it attached and prints its counters.\n",
		XKV_DEFAULT_PORT);
}

/* "64M", "2G", "4096": bytes. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'G':
	case 'g':
		v <<= 10;
		/* fall through */
	case 'M':
	case 'm':
		v <<= 10;
		/* fall through */
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct server_opts *o)
{
	enum { OPT_MODE = 256, OPT_SKB, OPT_ECHO };
	static const struct option opts[] = {
		{"backend", required_argument, NULL, 'b'}, {"iface", required_argument, NULL, 'i'},
		{"workers", required_argument, NULL, 'w'}, {"port", required_argument, NULL, 'p'},
		{"memory", required_argument, NULL, 'm'},  {"mode", required_argument, NULL, OPT_MODE},
		{"policy", required_argument, NULL, 'P'},  {"allow", required_argument, NULL, 'a'},
		{"skb", no_argument, NULL, OPT_SKB},	   {"echo", no_argument, NULL, OPT_ECHO},
		{"help", no_argument, NULL, 'h'},	   {0},
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int opt, policy;

	*o = (struct server_opts){
		.workers = cores > 0 ? (uint32_t)cores : 1,
		.port = XKV_DEFAULT_PORT,
		.memory = 64 << 20,
		.mode = XKV_MODE_CACHE,
		.policy = XKV_POLICY_CREW,
	};
	while ((opt = getopt_long(argc, argv, "b:i:w:p:m:P:a:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (!strcmp(optarg, "xdp"))
				o->backend = &xkv_backend_xdp;
			else if (!strcmp(optarg, "uring"))
				o->backend = &xkv_backend_uring;
			else
				goto bad_value;
			break;
		case 'i':
			o->iface = optarg;
			break;
		case 'w':
			o->workers = strtoul(optarg, NULL, 0);
			if (o->workers < 1 || o->workers > XKV_WORKERS_MAX)
				goto bad_value;
			break;
		case 'p':
			o->port = (uint16_t)strtoul(optarg, NULL, 0);
			if (!o->port)
				goto bad_value;
			break;
		case 'm':
			if (parse_size(optarg, &o->memory))
				goto bad_value;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "cache") && strcmp(optarg, "store"))
				goto bad_value;
			o->mode = strcmp(optarg, "cache") ? XKV_MODE_STORE : XKV_MODE_CACHE;
			break;
		case 'P':
			policy = bpfctl_parse_policy(optarg);
			if (policy < 0)
				goto bad_value;
			o->policy = (enum xkv_policy)policy;
			break;
		case 'a':
			if (o->n_allow == XKV_ALLOW_ARGS_MAX ||
			    bpfctl_parse_cidr(optarg, &o->allow[o->n_allow]))
				goto bad_value;
			o->n_allow++;
			break;
		case OPT_SKB:
			o->skb_mode = true;
			break;
		case OPT_ECHO:
			o->echo = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!o->backend)
		o->backend = o->iface ? &xkv_backend_xdp : &xkv_backend_uring;
	return 0;

bad_value:
	fprintf(stderr, "xkv-server: bad value for %s: %s (see --help)\n", argv[optind - 1],
		optarg);
	return -EINVAL;
}

/* Enough head buckets for the items --memory can hold, at ~5 of 7 slots used. */
static uint32_t bucket_bits_for(size_t memory)
{
	size_t buckets = memory / ITEM_BYTES_GUESS / XKV_PARTITIONS / 5;
	uint32_t bits = 0;

	while (bits < 20 && ((size_t)1 << bits) < buckets)
		bits++;
	return bits;
}

static void *worker_thread(void *arg)
{
	struct server_worker *w = arg;

	xkv_store_thread_online();
	w->srv->o.backend->run(w->srv, w);
	xkv_store_thread_offline();
	return NULL;
}

static int start_workers(struct server *s, uint32_t *started)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = REASM_MEMORY,
		.max_messages = REASM_MESSAGES,
		.timeout_ns = REASM_TIMEOUT_NS,
	};
	const struct backend *be = s->o.backend;
	int err;

	for (; *started < s->o.workers; (*started)++) {
		struct server_worker *w = &s->workers[*started];

		w->id = *started;
		w->srv = s;
		err = xkv_worker_init(&w->proto, w->id, s->o.workers, s->store,
				      be->worker_tx(s, w->id), &reasm);
		if (err)
			return err;
		w->proto.depth = be->worker_depth(s, w->id);
		w->proto.exec.echo = s->o.echo;
		err = -pthread_create(&w->thread, NULL, worker_thread, w);
		if (err) {
			xkv_worker_fini(&w->proto);
			return err;
		}
		xkv_pin_to_cpu(w->thread, w->id);
	}
	return 0;
}

/* Until SIGINT or SIGTERM, publishes the store's counters every XKV_PUBLISH_NS. */
static void wait_publishing(struct server *s, const sigset_t *stop_signals)
{
	const struct timespec period = {.tv_nsec = XKV_PUBLISH_NS};
	int sig;

	do {
		server_counters_publish_server(s, xkv_now_ns());
		/* main holds no item while it waits: let grace periods pass it */
		xkv_store_thread_sleep();
		sig = sigtimedwait(stop_signals, NULL, &period);
		xkv_store_thread_wake();
	} while (sig < 0);
}

int main(int argc, char **argv)
{
	struct server s = {0};
	struct xkv_store_config scfg;
	uint32_t started = 0;
	sigset_t stop_signals;
	int err;

	if (parse_opts(argc, argv, &s.o))
		return 2;

	/* workers inherit a mask without SIGINT/SIGTERM: only main waits for them */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

	scfg = (struct xkv_store_config){
		.memory_limit = s.o.memory,
		.mode = s.o.mode,
		.bucket_bits = bucket_bits_for(s.o.memory),
		.overflow_buckets = (1u << bucket_bits_for(s.o.memory)) / 8 + 1,
	};
	xkv_store_thread_online();
	s.store = xkv_store_create(&scfg);
	if (!s.store) {
		fprintf(stderr, "xkv-server: creating the store (%zu bytes): %s\n", s.o.memory,
			strerror(errno));
		return 1;
	}
	s.workers = calloc(s.o.workers, sizeof(*s.workers));
	if (!s.workers) {
		err = -ENOMEM;
		goto out_destroy_store;
	}
	err = s.o.backend->open(&s);
	if (err)
		goto out_close_backend;
	err = server_counters_open(&s);
	if (err)
		goto out_close_backend;
	err = start_workers(&s, &started);
	if (err) {
		fprintf(stderr, "xkv-server: starting worker %u: %s\n", started, strerror(-err));
		goto out_stop;
	}
	printf("xkv-server: %u workers on UDP port %u, backend %s, policy %s, %zu MiB %s%s\n",
	       s.o.workers, s.o.port, s.o.backend->name, xkv_policy_name(s.o.policy),
	       s.o.memory >> 20, s.o.mode == XKV_MODE_CACHE ? "cache" : "store",
	       s.o.echo ? ", echo (no store)" : "");
	fflush(stdout);

	wait_publishing(&s, &stop_signals);

out_stop:
	if (s.o.backend->unsteer)
		s.o.backend->unsteer(&s);
	atomic_store(&s.stopping, true);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(s.workers[i].thread, NULL);
	if (!err) {
		server_counters_publish_all(&s, started);
		server_counters_print(&s, started);
	}
	for (uint32_t i = 0; i < started; i++)
		xkv_worker_fini(&s.workers[i].proto);
out_close_backend:
	server_counters_close(&s);
	s.o.backend->close(&s);
	free(s.workers);
out_destroy_store:
	xkv_store_destroy(s.store);
	xkv_store_thread_offline();
	return err ? 1 : 0;
}
