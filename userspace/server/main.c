// SPDX-License-Identifier: MIT
/*
 * xkv-server: the store, one worker thread per core, and a transport.
 *
 *   xkv-server [--iface IF] [--workers N] [--port P] [--memory SIZE]
 *              [--mode cache|store] [--backend uring] [--policy NAME] [--allow CIDR]...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "net/reuseport.h"
#include "net/udp_uring.h"
#include "server/worker.h"

#define WAIT_MS		  100
#define REASM_MEMORY	  (64u << 20) /* per worker */
#define REASM_MESSAGES	  1024
#define REASM_TIMEOUT_NS  1000000000ULL
#define ITEM_BYTES_GUESS  128 /* sizes the bucket array from --memory */

struct server_opts {
	const char *iface;
	uint32_t workers;
	uint16_t port;
	size_t memory;
	enum xkv_store_mode mode;
	enum xkv_policy policy;
};

struct server_worker {
	pthread_t thread;
	uint32_t id;
	struct xkv_uring net;
	struct xkv_worker proto;
};

static atomic_bool stopping;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xkv-server [options]\n"
		"  -i, --iface IF          interface (for the XDP backend; the io_uring backend\n"
		"                          listens on every address)\n"
		"  -w, --workers N         worker threads, one per core (default: cores online)\n"
		"  -p, --port P            UDP port (default %d)\n"
		"  -m, --memory SIZE       item memory, e.g. 64M, 2G (default 64M)\n"
		"      --mode cache|store  when full: evict (cache, default) or answer NO_MEMORY\n"
		"  -b, --backend uring     transport (io_uring over a kernel UDP socket)\n"
		"  -P, --policy erew|crew  steering (default crew): writes always go to the\n"
		"                          partition's owner; crew balances reads\n"
		"  -h, --help\n"
		"SIGINT or SIGTERM stops it and prints its counters.\n",
		XKV_DEFAULT_PORT);
}

/* "64M", "2G", "4096": bytes. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct server_opts *o)
{
	enum { OPT_MODE = 256 };
	static const struct option opts[] = {
		{"iface", required_argument, NULL, 'i'},   {"workers", required_argument, NULL, 'w'},
		{"port", required_argument, NULL, 'p'},	   {"memory", required_argument, NULL, 'm'},
		{"mode", required_argument, NULL, OPT_MODE}, {"backend", required_argument, NULL, 'b'},
		{"policy", required_argument, NULL, 'P'},  {"help", no_argument, NULL, 'h'},
		{0},
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int opt;

	*o = (struct server_opts){
		.workers = cores > 0 ? (uint32_t)cores : 1,
		.port = XKV_DEFAULT_PORT,
		.memory = 64 << 20,
		.mode = XKV_MODE_CACHE,
		.policy = XKV_POLICY_CREW,
	};
	while ((opt = getopt_long(argc, argv, "i:w:p:m:b:P:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			o->iface = optarg;
			break;
		case 'w':
			o->workers = strtoul(optarg, NULL, 0);
			if (o->workers < 1 || o->workers > XKV_PARTITIONS) {
				fprintf(stderr, "xkv-server: --workers must be 1..%u\n",
					XKV_PARTITIONS);
				return -EINVAL;
			}
			break;
		case 'p':
			o->port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			if (parse_size(optarg, &o->memory)) {
				fprintf(stderr, "xkv-server: --memory %s: not a size like 64M\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_MODE:
			if (strcmp(optarg, "cache") && strcmp(optarg, "store")) {
				fprintf(stderr, "xkv-server: --mode must be cache or store\n");
				return -EINVAL;
			}
			o->mode = strcmp(optarg, "cache") ? XKV_MODE_STORE : XKV_MODE_CACHE;
			break;
		case 'b':
			if (strcmp(optarg, "uring")) {
				fprintf(stderr, "xkv-server: --backend %s: only uring is built yet\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'P':
			if (!strcmp(optarg, "erew")) {
				o->policy = XKV_POLICY_EREW;
			} else if (!strcmp(optarg, "crew")) {
				o->policy = XKV_POLICY_CREW;
			} else {
				fprintf(stderr, "xkv-server: --policy %s: erew or crew\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return 0;
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

static void *worker_run(void *arg)
{
	struct server_worker *w = arg;
	uint64_t next_expiry = 0;

	xkv_store_thread_online();
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		xkv_store_thread_sleep();
		xkv_uring_wait(&w->net, WAIT_MS);
		xkv_store_thread_wake();
		w->proto.now_ns = now_ns();
		xkv_uring_drain(&w->net, xkv_worker_datagram, &w->proto);
		xkv_store_quiescent();
		if (w->proto.now_ns >= next_expiry) {
			xkv_reasm_expire(w->proto.reasm, w->proto.now_ns);
			next_expiry = w->proto.now_ns + REASM_TIMEOUT_NS / 10;
		}
	}
	xkv_store_thread_offline();
	return NULL;
}

/* One counter per line, "worker W name: N", so scripts and tests can read them. */
static void print_stats(struct server_worker *workers, uint32_t n, struct xkv_store *store,
			const struct xkv_reuseport *steer)
{
	struct xkv_store_stats st;

	for (uint32_t i = 0; i < n; i++) {
		const struct xkv_worker_stats *ws = &workers[i].proto.stats;
		const struct xkv_exec_stats *es = &workers[i].proto.exec.stats;
		struct xkv_reasm_stats rs;
		const struct {
			const char *name;
			uint64_t value;
		} counters[] = {
			{"datagrams", ws->datagrams},
			{"get", es->requests[XKV_OP_GET]},
			{"put", es->requests[XKV_OP_PUT]},
			{"delete", es->requests[XKV_OP_DELETE]},
			{"reply_datagrams", es->datagrams},
			{"tx_dropped", es->tx_dropped},
			{"tx_errors", workers[i].net.tx_errors},
			{"rx_truncated", workers[i].net.rx_truncated},
			{"dropped reply_to_server", ws->replies_to_server},
			{"refused_pieces", ws->refused_pieces},
			{"foreign_writes", ws->foreign_writes},
		};

		for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++)
			printf("worker %u %s: %lu\n", i, counters[c].name, counters[c].value);
		for (int r = 1; r < XKV_R_PROTO_END; r++)
			printf("worker %u dropped %s: %lu\n", i, xkv_reason_name(r), ws->dropped[r]);
		for (int st_ = 0; st_ <= XKV_S_MAX; st_++)
			printf("worker %u status %s: %lu\n", i, xkv_status_name(st_),
			       es->replies[st_]);
		xkv_reasm_get_stats(workers[i].proto.reasm, &rs);
		printf("worker %u reassembly_bytes: %lu\nworker %u reassembly_timeouts: %lu\n", i,
		       rs.bytes, i, rs.timeouts);
	}
	for (uint32_t r = 1; r < XKV_R_END; r++)
		printf("steering dropped %s: %lu\n", xkv_reason_name(r),
		       xkv_reuseport_dropped(steer, r));
	xkv_store_get_stats(store, &st);
	printf("store items: %lu\nstore bytes_used: %lu\nstore bytes_limit: %lu\n"
	       "store evictions: %lu\n",
	       st.items, st.bytes_used, st.bytes_limit, st.evictions);
}

static void pin(pthread_t t, uint32_t id)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id % (cpus > 0 ? cpus : 1), &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = REASM_MEMORY,
		.max_messages = REASM_MESSAGES,
		.timeout_ns = REASM_TIMEOUT_NS,
	};
	struct server_worker *workers;
	struct xkv_reuseport steer;
	struct xkv_store_config scfg;
	struct xkv_store *store;
	struct server_opts o;
	uint32_t started = 0;
	sigset_t stop_signals;
	int err, sig;

	if (parse_opts(argc, argv, &o))
		return 2;

	/* workers inherit a mask without SIGINT/SIGTERM: only main waits for them */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

	scfg = (struct xkv_store_config){
		.memory_limit = o.memory,
		.mode = o.mode,
		.bucket_bits = bucket_bits_for(o.memory),
		.overflow_buckets = (1u << bucket_bits_for(o.memory)) / 8 + 1,
	};
	xkv_store_thread_online();
	store = xkv_store_create(&scfg);
	if (!store) {
		fprintf(stderr, "xkv-server: creating the store (%zu bytes): %s\n", o.memory,
			strerror(errno));
		return 1;
	}
	workers = calloc(o.workers, sizeof(*workers));
	if (!workers) {
		err = -ENOMEM;
		goto out_destroy_store;
	}
	err = xkv_reuseport_load(&steer, o.port, o.workers, o.policy);
	if (err) {
		fprintf(stderr, "xkv-server: loading the steering program: %s\n", strerror(-err));
		goto out_free_workers;
	}

	for (; started < o.workers; started++) {
		struct server_worker *w = &workers[started];

		w->id = started;
		err = xkv_uring_open(&w->net, o.port);
		if (err) {
			fprintf(stderr, "xkv-server: worker %u: UDP port %u: %s\n", started, o.port,
				strerror(-err));
			goto out_stop;
		}
		err = xkv_reuseport_add(&steer, started, w->net.fd);
		if (err) {
			fprintf(stderr, "xkv-server: worker %u: steering its socket: %s\n", started,
				strerror(-err));
			xkv_uring_close(&w->net);
			goto out_stop;
		}
		err = xkv_worker_init(&w->proto, started, o.workers, store, &w->net.tx, &reasm);
		if (err) {
			xkv_uring_close(&w->net);
			goto out_stop;
		}
		w->proto.depth = (_Atomic uint64_t *)&steer.qdepth[started].depth;
		err = -pthread_create(&w->thread, NULL, worker_run, w);
		if (err) {
			xkv_worker_fini(&w->proto);
			xkv_uring_close(&w->net);
			goto out_stop;
		}
		pin(w->thread, started);
	}
	printf("xkv-server: %u workers on UDP port %u, backend uring, policy %s, %zu MiB %s\n",
	       o.workers, o.port, xkv_policy_name(o.policy), o.memory >> 20,
	       o.mode == XKV_MODE_CACHE ? "cache" : "store");
	fflush(stdout);

	/* main holds no item while it waits: let grace periods pass it */
	xkv_store_thread_sleep();
	sigwait(&stop_signals, &sig);
	xkv_store_thread_wake();
	err = 0;
out_stop:
	atomic_store(&stopping, true);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(workers[i].thread, NULL);
	if (!err)
		print_stats(workers, started, store, &steer);
	for (uint32_t i = 0; i < started; i++) {
		xkv_worker_fini(&workers[i].proto);
		xkv_uring_close(&workers[i].net);
	}
	xkv_reuseport_close(&steer);
out_free_workers:
	free(workers);
out_destroy_store:
	xkv_store_destroy(store);
	xkv_store_thread_offline();
	return err ? 1 : 0;
}
