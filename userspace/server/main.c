// SPDX-License-Identifier: MIT
/*
 * xkv-server: the store, one pinned worker thread per core, and a backend:
 * AF_XDP sockets fed by the XDP program (xdp), or kernel UDP sockets driven by
 * io_uring and steered by an SK_REUSEPORT program (uring).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include <xkv/hash.h>
#include <xkv/memcached.h>
#include "bpfctl/bpfctl.h"
#include "engine/hot.h"
#include "engine/replicas.h"
#include "server/server.h"
#include "util/opts.h"
#include "util/pin.h"

#define REASM_MEMORY	 (64u << 20) /* per worker */
#define REASM_MESSAGES	 1024
#define REASM_TIMEOUT_NS 1000000000ULL
#define ITEM_BYTES_GUESS 128 /* sizes the bucket array from --memory */
#define CHECK_NS	 1000000000ULL /* how often the backend looks at the interface */
#define EWT_SAMPLE_NS	 1000000ULL /* dcrew: how often main counts the EWT's held slots */

enum {
	OPT_BACKEND,
	OPT_IFACE,
	OPT_WORKERS,
	OPT_PORT,
	OPT_MEMCACHED_PORT,
	OPT_MAX_CONNS,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_CA,
	OPT_TLS_VERIFY,
	OPT_TLS_MIN_VERSION,
	OPT_TLS_CIPHERS,
	OPT_MEMORY,
	OPT_MODE,
	OPT_POLICY,
	OPT_MINOS_PERCENTILE,
	OPT_MINOS_EPOCH,
	OPT_HOT_EPOCH,
	OPT_ALLOW,
	OPT_LISTEN,
	OPT_TRUST,
	OPT_SKB,
	OPT_ECHO,
	OPT_COMPACTION,
	OPT_COMPACT_SLO,
	OPT_LATENCY,
	OPT_LOCAL_ORDER,
	OPT_HELP,
};

static const struct xkv_opt options[] = {
	[OPT_BACKEND] = {"backend", 'b', "xdp|uring",
			 "AF_XDP sockets fed by the XDP program (default when --iface is given), "
			 "or kernel UDP sockets with io_uring"},
	[OPT_IFACE] = {"iface", 'i', "IF",
		       "interface for the XDP backend (the io_uring backend listens on every "
		       "address, and serves the --allow networks)"},
	[OPT_WORKERS] = {"workers", 'w', "N",
			 "worker threads, one per core (default: cores online)"},
	[OPT_PORT] = {"port", 'p', "P", "UDP port (default " XKV_OPTS_STR(XKV_DEFAULT_PORT) ")"},
	[OPT_MEMCACHED_PORT] = {"memcached-port", 'M', "P",
				"memcached's port: its text and meta protocol over TCP, served by "
				"the workers, from the --allow networks (on the XDP backend also "
				"memcached over UDP, steered by XDP); 0: off (default "
				XKV_OPTS_STR(XKV_MC_DEFAULT_PORT) ", off when taken)"},
	[OPT_MAX_CONNS] = {"max-conns", 'c', "N",
			   "memcached over TCP: connections at once, over the workers (1024, "
			   "memcached's -c); at the limit one idle for a second gives way"},
	[OPT_TLS_CERT] = {"tls-cert", 0, "FILE",
			  "memcached over TCP in TLS only (memcached's -Z ssl_chain_cert): the "
			  "server's certificate chain, PEM, its own first"},
	[OPT_TLS_KEY] = {"tls-key", 0, "FILE",
			 "TLS: the certificate's private key, PEM (default: in --tls-cert's file)"},
	[OPT_TLS_CA] = {"tls-ca", 0, "FILE",
			"TLS: the CAs client certificates must chain to, PEM; given, a client "
			"without one that verifies is refused (see --tls-verify)"},
	[OPT_TLS_VERIFY] = {"tls-verify", 0, "none|request|require",
			    "TLS: client certificates not asked for, asked for (one given must "
			    "verify), or required (default: require with --tls-ca, else none)"},
	[OPT_TLS_MIN_VERSION] = {"tls-min-version", 0, "1.2|1.3",
				 "TLS: the oldest version a client may use (1.2)"},
	[OPT_TLS_CIPHERS] = {"tls-ciphers", 0, "LIST",
			     "TLS 1.2: OpenSSL's cipher list (default: OpenSSL's)"},
	[OPT_MEMORY] = {"memory", 'm', "SIZE", "item memory, e.g. 64M, 2G (default 64M)"},
	[OPT_MODE] = {"mode", 0, "cache|store",
		      "when full: evict (cache, default) or answer NO_MEMORY"},
	[OPT_POLICY] = {"policy", 'P', "xkv|erew|crew|minos|dcrew",
			"steering (default xkv; crew on the uring backend): erew sends every "
			"request to the partition's owner; crew balances reads; minos serves small "
			"and large values on different workers; dcrew balances writes too, unless "
			"their partition has one outstanding; xkv is minos and dcrew together, "
			"with compaction (XDP backend for minos, dcrew and xkv)"},
	[OPT_MINOS_PERCENTILE] = {"minos-percentile", 0, "P",
				  "minos: values up to the size class of this percentile of "
				  "requests are small (99)"},
	[OPT_MINOS_EPOCH] = {"minos-epoch-ms", 0, "MS",
			     "minos: how often the roles are recomputed (1000)"},
	[OPT_HOT_EPOCH] = {"hot-epoch-ms", 0, "MS",
			   "how long the hot keys a directory's controller asks for are counted "
			   "before they are reported and counted afresh (1000; 0: not counted)"},
	[OPT_ALLOW] = {"allow", 'a', "CIDR",
		       "a client network allowed to send requests (repeatable; none: the XDP "
		       "backend drops every request, the io_uring backend serves loopback only, "
		       "127.0.0.0/8 and ::1)"},
	[OPT_LISTEN] = {"listen", 'l', "ADDR",
			"XDP backend: an IP address requests may be sent to besides the "
			"interface's own (repeatable)"},
	[OPT_TRUST] = {"trust", 0, "CIDR",
		       "a network whose sources cannot be spoofed (a benchmark or replay link): "
		       "its replies are not bound to 3x the request before a token (repeatable)"},
	[OPT_SKB] = {"skb", 0, NULL, "XDP backend: generic (skb) mode instead of native"},
	[OPT_ECHO] = {"echo", 0, NULL,
		      "answer without the store (GET: not found, PUT and DELETE: ok), through the "
		      "same path: the ceiling"},
	[OPT_COMPACTION] = {"compaction", 0, "on|off",
			    "write compaction: PUTs to one key that queue up on its writer are "
			    "applied once and answered together (default on under xkv, else off)"},
	[OPT_COMPACT_SLO] = {"compact-slo", 0, "N",
			     "compaction: a window stays open up to (N - 1) mean service times, "
			     "the SLO in service times (default " XKV_OPTS_STR(XKV_COMPACT_SLO) ")"},
	[OPT_LATENCY] = {"latency", 0, "on|off",
			 "time every request in the server, from the kernel's arrival stamp to its "
			 "reply, into histograms xkv-loader stats shows (default on)"},
	[OPT_LOCAL_ORDER] = {"local-order", 0, "fifo|rml",
			     "the order a worker serves each batch in: fifo, as it came; rml, "
			     "Hector's Random Multi-Level, smaller values first and none starving "
			     "(default fifo)"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

static void usage(FILE *f)
{
	fputs("usage: xkv-server [options]\n", f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
	fputs("SIGINT or SIGTERM stops it, detaches what it attached and prints its counters.\n"
	      "Exit status: 0 stopped by a signal, 1 error, 2 bad command line, 3 the interface\n"
	      "changed under it (rx queue count, or removed): it stopped, start it again.\n",
	      f);
}

/* One option's argument into o; 0, or -EINVAL or -ERANGE with p->why written. */
static int take_option(struct xkv_opts *p, int opt, struct server_opts *o)
{
	uint64_t value;
	int err, policy;

	switch (opt) {
	case OPT_BACKEND:
		if (!strcmp(p->arg, "xdp"))
			o->backend = &xkv_backend_xdp;
		else if (!strcmp(p->arg, "uring"))
			o->backend = &xkv_backend_uring;
		else
			return xkv_opts_bad_value(p, "xdp or uring");
		return 0;
	case OPT_IFACE:
		o->iface = p->arg;
		return 0;
	case OPT_WORKERS:
		return xkv_opts_u32(p, 1, XKV_WORKERS_MAX, &o->workers);
	case OPT_PORT:
		err = xkv_opts_u64(p, 1, UINT16_MAX, &value);
		if (!err)
			o->port = (uint16_t)value;
		return err;
	case OPT_MEMCACHED_PORT:
		err = xkv_opts_u64(p, 0, UINT16_MAX, &value);
		if (!err)
			o->memcached_port = (uint16_t)value;
		o->memcached_port_given = true;
		return err;
	case OPT_MAX_CONNS:
		return xkv_opts_u32(p, 1, 1u << 20, &o->max_conns);
	case OPT_TLS_CERT:
		o->tls.cert = p->arg;
		return 0;
	case OPT_TLS_KEY:
		o->tls.key = p->arg;
		return 0;
	case OPT_TLS_CA:
		o->tls.ca = p->arg;
		return 0;
	case OPT_TLS_VERIFY:
		if (!strcmp(p->arg, "none"))
			o->tls.verify = XKV_TLS_VERIFY_NONE;
		else if (!strcmp(p->arg, "request"))
			o->tls.verify = XKV_TLS_VERIFY_REQUEST;
		else if (!strcmp(p->arg, "require"))
			o->tls.verify = XKV_TLS_VERIFY_REQUIRE;
		else
			return xkv_opts_bad_value(p, "none, request or require");
		o->tls_verify_given = true;
		return 0;
	case OPT_TLS_MIN_VERSION:
		if (strcmp(p->arg, "1.2") && strcmp(p->arg, "1.3"))
			return xkv_opts_bad_value(p, "1.2 or 1.3");
		o->tls.min_version = p->arg;
		return 0;
	case OPT_TLS_CIPHERS:
		o->tls.ciphers = p->arg;
		return 0;
	case OPT_MEMORY:
		err = xkv_opts_size(p, 1, SIZE_MAX, &value);
		if (!err)
			o->memory = (size_t)value;
		return err;
	case OPT_MODE:
		if (strcmp(p->arg, "cache") && strcmp(p->arg, "store"))
			return xkv_opts_bad_value(p, "cache or store");
		o->mode = strcmp(p->arg, "cache") ? XKV_MODE_STORE : XKV_MODE_CACHE;
		return 0;
	case OPT_POLICY:
		policy = bpfctl_parse_policy(p->arg);
		if (policy < 0)
			return xkv_opts_bad_value(p, "erew, crew, minos, dcrew or xkv");
		o->policy = (enum xkv_policy)policy;
		o->policy_given = true;
		return 0;
	case OPT_MINOS_PERCENTILE:
		return xkv_opts_double(p, 1, 100, &o->minos_percentile);
	case OPT_MINOS_EPOCH:
		return xkv_opts_u32(p, 10, 3600000, &o->minos_epoch_ms);
	case OPT_HOT_EPOCH:
		return xkv_opts_u32(p, 0, 3600000, &o->hot_epoch_ms);
	case OPT_ALLOW:
		if (o->n_allow == XKV_ALLOW_MAX)
			return xkv_opts_bad_value(p, "no more than " XKV_OPTS_STR(XKV_ALLOW_MAX));
		if (bpfctl_parse_cidr(p->arg, &o->allow[o->n_allow]))
			return xkv_opts_bad_value(p, "a network such as 10.0.0.0/8 or fd00::/8");
		o->n_allow++;
		return 0;
	case OPT_LISTEN:
		if (bpfctl_parse_local(p->arg, &o->listen))
			return xkv_opts_bad_value(p, "a unicast IP address such as 10.1.2.3 or fd00::1");
		return 0;
	case OPT_TRUST:
		if (o->validate.ntrusted == XKV_TRUST_MAX)
			return xkv_opts_bad_value(p, "no more than " XKV_OPTS_STR(XKV_TRUST_MAX));
		if (bpfctl_parse_cidr(p->arg, &o->validate.trusted[o->validate.ntrusted]))
			return xkv_opts_bad_value(p, "a network such as 10.0.0.0/8 or fd00::/8");
		o->validate.ntrusted++;
		return 0;
	case OPT_SKB:
		o->skb_mode = true;
		return 0;
	case OPT_ECHO:
		o->echo = true;
		return 0;
	case OPT_COMPACTION:
		if (strcmp(p->arg, "on") && strcmp(p->arg, "off"))
			return xkv_opts_bad_value(p, "on or off");
		o->compaction = !strcmp(p->arg, "on");
		o->compaction_given = true;
		return 0;
	case OPT_COMPACT_SLO:
		return xkv_opts_u32(p, 2, 100000, &o->compact_slo);
	case OPT_LATENCY:
		if (strcmp(p->arg, "on") && strcmp(p->arg, "off"))
			return xkv_opts_bad_value(p, "on or off");
		o->latency = !strcmp(p->arg, "on");
		return 0;
	case OPT_LOCAL_ORDER:
		if (!xkv_order_find(p->arg))
			return xkv_opts_bad_value(p, "fifo or rml");
		o->local_order = p->arg;
		return 0;
	}
	return -EINVAL;
}

/* The TLS options together: each needs a certificate, and the certificate a TCP port. */
static int tls_opts_check(struct server_opts *o)
{
	const struct xkv_tls_opts *t = &o->tls;

	if (!t->cert && (t->key || t->ca || o->tls_verify_given || t->min_version || t->ciphers)) {
		fprintf(stderr, "xkv-server: the TLS options need --tls-cert\n");
		return -EINVAL;
	}
	if (t->cert && !o->memcached_port) {
		fprintf(stderr, "xkv-server: --tls-cert needs memcached's TCP port "
				"(--memcached-port is 0)\n");
		return -EINVAL;
	}
	if (!o->tls_verify_given && t->ca)
		o->tls.verify = XKV_TLS_VERIFY_REQUIRE;
	if (t->verify != XKV_TLS_VERIFY_NONE && !t->ca) {
		fprintf(stderr, "xkv-server: --tls-verify %s needs --tls-ca\n",
			t->verify == XKV_TLS_VERIFY_REQUEST ? "request" : "require");
		return -EINVAL;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct server_opts *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct xkv_opts p;
	int opt, err = 0;

	*o = (struct server_opts){
		.workers = cores > 0 ? (uint32_t)cores : 1,
		.port = XKV_DEFAULT_PORT,
		.memcached_port = XKV_MC_DEFAULT_PORT,
		.memory = 64 << 20,
		.mode = XKV_MODE_CACHE,
		.minos_percentile = 99,
		.minos_epoch_ms = 1000,
		.max_conns = 1024,
		.hot_epoch_ms = 1000,
		.compact_slo = XKV_COMPACT_SLO,
		.latency = true,
	};
	err = xkv_validate_init(&o->validate);
	if (err) {
		fprintf(stderr, "xkv-server: no random key for tokens: %s\n", strerror(-err));
		return err;
	}
	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		if (opt == OPT_HELP) {
			usage(stdout);
			exit(0);
		}
		err = opt < 0 ? opt : take_option(&p, opt, o);
	}
	if (err) {
		fprintf(stderr, "xkv-server: %s (see --help)\n", p.why);
		return err;
	}
	if (optind < argc) {
		fprintf(stderr, "xkv-server: unexpected argument %s (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->backend)
		o->backend = o->iface ? &xkv_backend_xdp : &xkv_backend_uring;
	if (o->listen.n && o->backend != &xkv_backend_xdp) {
		fprintf(stderr, "xkv-server: --listen needs the xdp backend\n");
		return -EINVAL;
	}
	/* the SK_REUSEPORT program can steer by partition only: crew is its best */
	if (!o->policy_given)
		o->policy = o->backend == &xkv_backend_xdp ? XKV_POLICY_XKV : XKV_POLICY_CREW;
	if (!o->compaction_given)
		o->compaction = o->policy == XKV_POLICY_XKV;
	/* listening on every address, uring must not serve the world by default */
	if (o->backend == &xkv_backend_uring && !o->n_allow) {
		bpfctl_parse_cidr("127.0.0.0/8", &o->allow[o->n_allow++]);
		bpfctl_parse_cidr("::1", &o->allow[o->n_allow++]);
	}
	err = tls_opts_check(o);
	if (err)
		return err;
	/* the SK_REUSEPORT program has neither the roles, nor the EWT, nor hand-offs */
	if ((xkv_policy_roles(o->policy) || xkv_policy_ewt(o->policy)) &&
	    o->backend != &xkv_backend_xdp) {
		fprintf(stderr, "xkv-server: --policy %s needs the xdp backend\n",
			xkv_policy_name(o->policy));
		return -EINVAL;
	}
	return 0;
}

/* The start line's end: which sources the server answers. */
static void print_allowed(const struct server_opts *o)
{
	char net[INET6_ADDRSTRLEN + 5];

	printf("xkv-server: serving clients from");
	for (size_t i = 0; i < o->n_allow; i++)
		if (!bpfctl_format_cidr(&o->allow[i], net, sizeof(net)))
			printf("%s %s", i ? "," : "", net);
	printf("%s\n", o->n_allow ? "" : " nowhere: every request dropped (see --allow)");
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
	xkv_worker_sleep(&w->proto); /* for good: nobody waits for this worker any more */
	xkv_store_thread_offline();
	return NULL;
}

static int start_workers(struct server *s, uint32_t *started)
{
	const struct backend *be = s->o.backend;
	struct xkv_worker_config cfg = {
		.nworkers = s->o.workers,
		.policy = s->o.policy,
		.store = s->store,
		.validate = &s->o.validate,
		.order = s->o.local_order,
		.replicas = s->replicas,
		.hot = s->hot,
		.reasm = {.memory_limit = REASM_MEMORY, .max_messages = REASM_MESSAGES,
			  .timeout_ns = REASM_TIMEOUT_NS},
	};
	int err;

	for (; *started < s->o.workers; (*started)++) {
		struct server_worker *w = &s->workers[*started];

		w->id = cfg.id = *started;
		w->srv = s;
		cfg.tx = be->worker_tx(s, w->id);
		err = xkv_worker_init(&w->proto, &cfg);
		if (err)
			return err;
		w->proto.depth = be->worker_depth(s, w->id);
		w->proto.exec.echo = s->o.echo;
		server_counters_latency(s, w);
		if (s->minos)
			server_minos_worker(s, w);
		if (s->ewt)
			xkv_worker_dcrew(&w->proto, s->ewt, s->holds, be->rings_read, w);
		if (s->mc)
			server_mc_worker(s, w);
		err = s->o.compaction ? xkv_worker_compaction(&w->proto, s->o.compact_slo) : 0;
		if (!err)
			err = -pthread_create(&w->thread, NULL, worker_thread, w);
		if (err) {
			xkv_worker_fini(&w->proto);
			return err;
		}
		xkv_pin_to_cpu(w->thread, w->id);
	}
	return 0;
}

/* dcrew: how many EWT slots are held now; the most seen is published. */
static void ewt_sample(struct server *s)
{
	uint32_t active = 0;

	for (uint32_t p = 0; p < XKV_PARTITIONS; p++)
		active += xkv_ewt_writes(__atomic_load_n(xkv_ewt_word_of(s->ewt, p),
							 __ATOMIC_RELAXED)) != 0;
	if (active > s->ewt_active_max)
		s->ewt_active_max = active;
}

/* Whether the kernel is PREEMPT_RT, whose bottom halves a thread may preempt. */
static bool kernel_realtime(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "r");
	int rt = 0;

	if (f) {
		if (fscanf(f, "%d", &rt) != 1)
			rt = 0;
		fclose(f);
	}
	return rt == 1;
}

/*
 * The holds that heal need a grace period (engine/holds.h): MEMBARRIER_CMD_GLOBAL
 * waits for one (synchronize_rcu), and every XDP program run is inside an RCU
 * read-side section, its redirects flushed to the rings before it ends. Without it
 * (nohz_full CPUs refuse it) holds do not heal, and the server says so. With one CPU
 * online it waits for nothing: safe only where no thread can preempt a bottom half.
 */
static int holds_open(struct server *s)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL) ||
	    (sysconf(_SC_NPROCESSORS_ONLN) < 2 && kernel_realtime())) {
		fprintf(stderr, "xkv-server: no grace period to be had here (membarrier's "
				"MEMBARRIER_CMD_GLOBAL): EWT holds whose writes the kernel drops "
				"will not heal\n");
		return 0;
	}
	s->holds = aligned_alloc(64, sizeof(*s->holds));
	if (!s->holds)
		return -ENOMEM;
	memset(s->holds, 0, sizeof(*s->holds));
	s->holds->nworkers = s->o.workers;
	return 0;
}

/* The fences workers asked for, once: a grace period, then the rings' marks. */
static void holds_fence(struct server *s)
{
	uint64_t asked[XKV_WORKERS_MAX];
	int err;

	if (!s->holds || !xkv_holds_fences_asked(s->holds, asked))
		return;
	/* offline: a writer growing a table must not wait for our grace period */
	xkv_store_thread_sleep();
	err = syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
	xkv_store_thread_wake();
	if (err) { /* no fence made: the frozen slots wait for the next try */
		if (!s->holds_failed++)
			fprintf(stderr, "xkv-server: membarrier: %s (EWT holds wait to heal)\n",
				strerror(-err));
		return;
	}
	s->o.backend->mark_rings(s);
	xkv_holds_fences_made(s->holds, asked);
}

/*
 * Until SIGINT or SIGTERM, publishes the store's counters every XKV_PUBLISH_NS, and asks
 * the backend about the interface every CHECK_NS; under dcrew, samples the EWT every
 * EWT_SAMPLE_NS. Returns the exit status: 0 for a signal, XKV_SERVER_EXIT_RESTART when
 * the interface changed under the server.
 */
static int wait_publishing(struct server *s, const sigset_t *stop_signals)
{
	const struct timespec period = {.tv_nsec = s->ewt ? EWT_SAMPLE_NS : XKV_PUBLISH_NS};
	uint64_t next_check = xkv_now_ns() + CHECK_NS, next_publish = 0;
	int sig;

	do {
		uint64_t now = xkv_now_ns();

		if (s->ewt) {
			ewt_sample(s);
			holds_fence(s);
		}
		if (now >= next_publish) {
			next_publish = now + XKV_PUBLISH_NS;
			server_counters_publish_server(s, now);
		}
		server_mc_tick(s);
		if (s->o.backend->changed && now >= next_check) {
			next_check = now + CHECK_NS;
			if (s->o.backend->changed(s))
				return XKV_SERVER_EXIT_RESTART;
		}
		/* main holds no item while it waits: let grace periods pass it */
		xkv_store_thread_sleep();
		sig = sigtimedwait(stop_signals, NULL, &period);
		xkv_store_thread_wake();
	} while (sig < 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct server s = {0};
	struct xkv_store_config scfg;
	uint32_t started = 0;
	sigset_t stop_signals;
	int err, status = 0;

	if (parse_opts(argc, argv, &s.o))
		return 2;

	/* workers inherit a mask without SIGINT/SIGTERM: only main waits for them */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

	/*
	 * Items of 128 KiB and more get a mapping each, given back when they are freed.
	 * glibc's default raises that threshold to the largest block freed so far, after
	 * which large values come from the heap, whose holes stay resident: replacing 500
	 * KB values, RSS grew 10-15 % a minute with the store's bytes flat (tests/soak).
	 * Setting the threshold keeps it where it starts.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
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
	s.replicas = xkv_replicas_create();
	s.hot = s.o.hot_epoch_ms ? xkv_hot_create(s.o.workers, s.o.hot_epoch_ms * 1000000ull) : NULL;
	s.workers = s.replicas && (s.hot || !s.o.hot_epoch_ms)
			    ? calloc(s.o.workers, sizeof(*s.workers))
			    : NULL;
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
	if (xkv_policy_roles(s.o.policy)) {
		err = server_minos_open(&s);
		if (err)
			goto out_close_backend;
	}
	if (xkv_policy_ewt(s.o.policy)) {
		s.ewt = s.o.backend->ewt(&s);
		err = holds_open(&s);
		if (err)
			goto out_close_backend;
	}
	if (s.o.memcached_port) {
		err = server_mc_open(&s);
		/* memcached's default port taken (by a system's memcached): xkv goes on alone */
		if (err == -EADDRINUSE && !s.o.memcached_port_given && !s.o.tls.cert) {
			fprintf(stderr, "xkv-server: memcached over TCP is off (see --memcached-port)\n");
			server_mc_close(&s);
			err = 0;
		}
		if (err)
			goto out_close_backend;
	}
	/* said before the first request is answered: a client may read it as soon as one is */
	printf("xkv-server: %u workers on UDP port %u, backend %s, policy %s, %zu MiB %s%s%s\n",
	       s.o.workers, s.o.port, s.o.backend->name, xkv_policy_name(s.o.policy),
	       s.o.memory >> 20, s.o.mode == XKV_MODE_CACHE ? "cache" : "store",
	       s.o.compaction ? ", compaction" : "", s.o.echo ? ", echo (no store)" : "");
	if (s.mc)
		printf("xkv-server: memcached on TCP port %u%s\n", s.o.memcached_port,
		       s.o.tls.cert ? " in TLS" : "");
	print_allowed(&s.o);
	fflush(stdout);
	err = start_workers(&s, &started);
	if (err) {
		fprintf(stderr, "xkv-server: starting worker %u: %s\n", started, strerror(-err));
		goto out_stop;
	}
	if (s.minos) {
		err = server_minos_start(&s);
		if (err) {
			fprintf(stderr, "xkv-server: starting minos's control loop: %s\n",
				strerror(-err));
			goto out_stop;
		}
	}

	status = wait_publishing(&s, &stop_signals);

out_stop:
	if (s.o.backend->unsteer)
		s.o.backend->unsteer(&s);
	atomic_store(&s.stopping, true);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(s.workers[i].thread, NULL);
	server_minos_close(&s);
	if (!err) {
		server_counters_final(&s, started);
	}
	for (uint32_t i = 0; i < started; i++)
		xkv_worker_fini(&s.workers[i].proto);
out_close_backend:
	server_mc_close(&s);
	server_minos_close(&s);
	server_counters_close(&s);
	s.o.backend->close(&s);
	free(s.holds);
	free(s.workers);
out_destroy_store:
	xkv_hot_destroy(s.hot);
	xkv_replicas_destroy(s.replicas);
	xkv_store_destroy(s.store);
	xkv_store_thread_offline();
	return err ? 1 : status;
}
