// SPDX-License-Identifier: MIT
/*
 * xkv-dir: the coherence directory's controller (docs/DIRECTORY.md), a command line
 * over userspace/dirctl.
 *
 *   xkv-dir [options] attach IFACE...   load the program onto the directory's interfaces
 *                                       (recovering the keys of a directory lost)
 *   xkv-dir [options] detach IFACE...   take it off, and its pins with it
 *   xkv-dir [options] recover           the keys of a directory lost, back home
 *   xkv-dir [options] add KEY...        replicate each key, its home alone at first
 *   xkv-dir [options] remove KEY...     migrate each back home, then forget it
 *   xkv-dir [options] select STRATEGY   how servers are chosen, from now on
 *   xkv-dir [options] hot               the hot keys the servers report
 *   xkv-dir [options] run               keep the hottest replicated, epoch by epoch
 *   xkv-dir [options] status            the pool, what it knows of each server, the keys
 *   xkv-dir [options] stats             what the program did, counter by counter
 *
 * Exit codes: 0 done, 1 a command failed (on stderr), 2 bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xkv/dir.h>
#include "dirctl/dirctl.h"
#include "util/heavy.h"
#include "util/json.h"
#include "util/opts.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

enum { OPT_PIN, OPT_STATE, OPT_SERVERS, OPT_PORT, OPT_SELECT, OPT_POPULAR, OPT_WRITE_SERVERS,
       OPT_SKB, OPT_WAIT, OPT_TIMEOUT, OPT_EPOCH, OPT_KEYS, OPT_FORCE, OPT_JSON, OPT_HELP };

static const struct xkv_opt options[] = {
	[OPT_PIN] = {"pin", 'p', "DIR", "where the program and its maps are pinned (default "
					 XKV_DIRCTL_PIN ")"},
	[OPT_STATE] = {"state", 'd', "FILE",
		       "the keys replicated, kept for a recovery if the maps are lost (default "
		       XKV_DIRCTL_STATE ")"},
	[OPT_SERVERS] = {"servers", 's', "LIST",
			 "attach: the pool, as the clients have it: HOST:PORT[:WEIGHT][ NAME],... "
			 "(IPv4); keys' homes follow its ketama"},
	[OPT_PORT] = {"port", 'P', "PORT",
		      "attach: xkv's port, a server's when the list leaves it out (default "
		      XKV_OPTS_STR(XKV_DEFAULT_PORT) ")"},
	[OPT_SELECT] = {"select", 'S', "STRATEGY",
			"attach: how a read's server is chosen from its replica set and a "
			"write's from the servers: round-robin (default), least-loaded, "
			"predict, c3 or popularity (docs/DIRECTORY.md)"},
	[OPT_POPULAR] = {"popular", 'o', "PPM",
			 "attach, select: popularity's threshold, a key's share of the reads "
			 "in parts per million (default 10, Hector's)"},
	[OPT_WRITE_SERVERS] = {"write-servers", 'W', "N",
			       "attach: a write goes to as many servers as its key has had reads "
			       "per write, up to N (default 1; Pegasus Sec. 6.4)"},
	[OPT_SKB] = {"skb", 'k', NULL, "attach: generic XDP, for a driver without its own"},
	[OPT_WAIT] = {"wait", 'w', "MS",
		      "remove: how long to wait for writes in flight to be acknowledged "
		      "(default 1000)"},
	[OPT_TIMEOUT] = {"timeout", 't', "MS",
			 "add, remove, recover: per request to a server (default 500)"},
	[OPT_EPOCH] = {"epoch", 'e', "MS",
		       "run: how often the servers' hot keys are asked for and acted on "
		       "(default 1000)"},
	[OPT_KEYS] = {"keys", 'K', "N",
		      "run: the hottest N keys replicated (default n ln n of the n live "
		      "servers, Pegasus's O(n log n))"},
	[OPT_FORCE] = {"force", 'f', NULL,
		       "detach: though keys are replicated (the next attach recovers them)"},
	[OPT_JSON] = {"json", 'j', NULL, "status, stats, hot: print JSON"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

struct args {
	const char *pin, *state;
	struct xkv_dirctl_setup setup;
	uint32_t port, write_max; /* attach's, into setup */
	uint32_t wait_ms, timeout_ms;
	uint32_t epoch_ms, keys; /* run's */
	bool force, json;
};

static void usage(FILE *f)
{
	fputs("usage: xkv-dir [options] attach IFACE...\n"
	      "       xkv-dir [options] detach IFACE...\n"
	      "       xkv-dir [options] recover\n"
	      "       xkv-dir [options] add KEY...\n"
	      "       xkv-dir [options] remove KEY...\n"
	      "       xkv-dir [options] select STRATEGY\n"
	      "       xkv-dir [options] hot\n"
	      "       xkv-dir [options] run\n"
	      "       xkv-dir [options] status\n"
	      "       xkv-dir [options] stats\n"
	      "options:\n",
	      f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
	fputs("exit codes: 0 done, 1 a command failed, 2 bad usage\n", f);
}

/* Sec. 6.7: the keys the state file lists, back home; requests held until then. */
static int recover(const struct args *a, struct xkv_dirctl *d)
{
	struct xkv_client *pool = xkv_dirctl_client(d, (int)a->timeout_ms);
	uint32_t keys, moved;
	int err;

	if (!pool)
		return -errno;
	err = xkv_dirctl_recover(d, pool, &keys, &moved);
	xkv_client_close(pool);
	if (err == -EALREADY) {
		fprintf(stderr, "xkv-dir: the directory is not recovering: nothing to do (%s "
				"lists the keys it replicates)\n", a->state);
		return err;
	}
	if (err) {
		fprintf(stderr, "xkv-dir: recovering %s: %s; requests are held until "
				"`xkv-dir recover` succeeds\n", a->state, strerror(-err));
		return err;
	}
	printf("recovered %u keys, %u of them moved home; requests pass\n", keys, moved);
	return 0;
}

static int cmd_attach(const struct args *a, struct xkv_dirctl *unused, int argc, char **argv)
{
	struct xkv_dirctl_setup setup = a->setup;
	int lost = xkv_dirctl_state_count(a->state), err;
	struct xkv_dirctl d;

	setup.port = (uint16_t)a->port;
	setup.write_max = (uint8_t)a->write_max;
	(void)unused;
	if (!setup.servers) {
		fprintf(stderr, "xkv-dir: attach needs --servers\n");
		return -EINVAL;
	}
	if (lost < 0) {
		fprintf(stderr, "xkv-dir: %s: %s\n", a->state, strerror(-lost));
		return lost;
	}
	/* keys of a directory whose maps were lost: none may be read before they are home */
	setup.hold = lost > 0;
	err = xkv_dirctl_attach(a->pin, &setup, argv, argc);
	if (err || !lost)
		return err;
	printf("%s lists %d keys of a directory lost: recovering them\n", a->state, lost);
	err = xkv_dirctl_open(&d, a->pin, a->state);
	if (err)
		return err;
	err = recover(a, &d);
	xkv_dirctl_close(&d);
	return err;
}

static int count_key(void *ctx, const struct xkv_dirctl_key *k)
{
	(void)k;
	++*(uint32_t *)ctx;
	return 0;
}

static int cmd_detach(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	uint32_t held = 0;
	int err = xkv_dirctl_keys(d, count_key, &held);

	if (err)
		return err;
	if (held && !a->force) {
		fprintf(stderr, "xkv-dir: %u keys are replicated: remove them first, or --force "
				"(the next attach recovers them)\n", held);
		return -EBUSY;
	}
	return xkv_dirctl_detach(a->pin, argv, argc);
}

static int cmd_recover(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return recover(a, d);
}

/* add or remove each key; says what became of each */
static int each_key(const struct args *a, struct xkv_dirctl *d, int argc, char **argv, bool add)
{
	struct xkv_client *pool = xkv_dirctl_client(d, (int)a->timeout_ms);
	int err, failed = 0;

	if (!pool)
		return -errno;
	for (int i = 0; i < argc; i++) {
		size_t len = strlen(argv[i]);
		uint64_t hash;

		err = add ? xkv_dirctl_add(d, pool, argv[i], len, &hash)
			  : xkv_dirctl_remove(d, pool, argv[i], len, (int)a->wait_ms);
		if (!err) {
			if (add)
				printf("added %s (hash %016llx, home %s)\n", argv[i],
				       (unsigned long long)hash,
				       xkv_client_server_name(pool, xkv_client_place(pool, argv[i],
										     len)));
			else
				printf("removed %s\n", argv[i]);
			continue;
		}
		failed = err;
		if (err == -EEXIST)
			fprintf(stderr, "xkv-dir: %s is replicated already\n", argv[i]);
		else if (err == -ENOSPC)
			fprintf(stderr, "xkv-dir: %s: the directory is full (%u keys)\n", argv[i],
				XKV_DIR_KEYS);
		else if (err == -ENOENT)
			fprintf(stderr, "xkv-dir: %s is not replicated\n", argv[i]);
		else if (err == -EBUSY)
			fprintf(stderr, "xkv-dir: %s: the directory is recovering: `xkv-dir "
					"recover` first\n", argv[i]);
		else
			fprintf(stderr, "xkv-dir: %s %s: %s\n", add ? "adding" : "removing", argv[i],
				strerror(-err));
	}
	xkv_client_close(pool);
	return failed;
}

static int cmd_add(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	return each_key(a, d, argc, argv, true);
}

static int cmd_remove(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	return each_key(a, d, argc, argv, false);
}

static const char *select_name(uint8_t select)
{
	const char *name = xkv_dir_select_name(select);

	return name ? name : "unknown";
}

/* The strategy named name: 0, or -EINVAL. */
static int select_find(const char *name, enum xkv_dir_select *select)
{
	for (uint32_t i = 0; i < XKV_DIR_SELECT_MAX; i++) {
		if (!strcmp(name, xkv_dir_select_name(i))) {
			*select = (enum xkv_dir_select)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int cmd_select(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	enum xkv_dir_select select;
	int err;

	if (argc != 1 || select_find(argv[0], &select)) {
		fprintf(stderr, "xkv-dir: select takes one of round-robin, least-loaded, predict, "
				"c3, popularity\n");
		return -EINVAL;
	}
	err = xkv_dirctl_select(d, select, a->setup.popular_ppm);
	if (err) {
		fprintf(stderr, "xkv-dir: choosing %s: %s\n", argv[0], strerror(-err));
		return err;
	}
	printf("servers are chosen by %s\n", select_name(select));
	return 0;
}

struct status {
	struct xkv_json *w; /* NULL: text */
	uint32_t n;
};

static int print_key(void *ctx, const struct xkv_dirctl_key *k)
{
	struct status *st = ctx;
	const struct xkv_dir_entry *e = &k->entry;

	st->n++;
	if (!st->w) {
		printf("  %016llx home %u rset 0x%x ver_curr %llu ver_next %llu reads %llu "
		       "writes %llu%s\n",
		       (unsigned long long)k->hash, e->home, e->rset,
		       (unsigned long long)e->ver_curr, (unsigned long long)e->ver_next,
		       (unsigned long long)e->reads, (unsigned long long)e->writes,
		       k->migrating ? " migrating" : "");
		return 0;
	}
	xkv_json_object_start(st->w);
	xkv_json_uint_field(st->w, "hash", k->hash);
	xkv_json_uint_field(st->w, "home", e->home);
	xkv_json_uint_field(st->w, "rset", e->rset);
	xkv_json_uint_field(st->w, "ver_curr", e->ver_curr);
	xkv_json_uint_field(st->w, "ver_next", e->ver_next);
	xkv_json_uint_field(st->w, "reads", e->reads);
	xkv_json_uint_field(st->w, "writes", e->writes);
	xkv_json_bool_field(st->w, "migrating", k->migrating);
	xkv_json_object_end(st->w);
	return 0;
}

/* How long server t's predicted queue takes to drain from now, ns. */
static uint64_t backlog_ns(const struct xkv_dir_telemetry *t)
{
	struct timespec now;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns's clock */
	ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	return t->backlog_until > ns ? t->backlog_until - ns : 0;
}

/* Each server: where it is, what the directory knows of its load, what it sent there. */
static int print_servers(const struct xkv_dirctl *d, const struct xkv_dir_config *cfg,
			 struct xkv_json *w)
{
	uint64_t chosen[XKV_DIR_CHOICES];
	struct xkv_dir_load load;
	int err;

	if ((err = xkv_dirctl_load(d, &load)) || (err = xkv_dirctl_choices(d, chosen)))
		return err;
	for (uint32_t id = 0; id < cfg->nservers; id++) {
		const struct xkv_dir_telemetry *t = &load.server[id];
		/* racing replies may take it below 0 for a moment */
		uint64_t sent = 0, outstanding = (int64_t)t->outstanding > 0 ? t->outstanding : 0;
		struct xkv_dir_server srv;
		char addr[INET_ADDRSTRLEN];

		err = xkv_dirctl_server(d, id, &srv);
		if (err)
			return err;
		for (uint32_t s = 0; s < XKV_DIR_SELECT_MAX; s++)
			sent += chosen[s * XKV_DIR_SERVERS + id];
		inet_ntop(AF_INET, &srv.addr, addr, sizeof(addr));
		if (!w) {
			printf("  server %u %s:%u%s load %u service %u ns queue %.1f response %llu "
			       "ns outstanding %llu backlog %llu ns sent %llu\n",
			       id, addr, ntohs(srv.port), cfg->live >> id & 1 ? "" : " (not live)",
			       t->load, t->service_ns, (double)t->queue_avg / 16,
			       (unsigned long long)t->response_avg, (unsigned long long)outstanding,
			       (unsigned long long)backlog_ns(t), (unsigned long long)sent);
			continue;
		}
		xkv_json_object_start(w);
		xkv_json_uint_field(w, "id", id);
		xkv_json_string_field(w, "addr", addr);
		xkv_json_uint_field(w, "port", ntohs(srv.port));
		xkv_json_bool_field(w, "live", cfg->live >> id & 1);
		xkv_json_uint_field(w, "load", t->load);
		xkv_json_uint_field(w, "service_ns", t->service_ns);
		xkv_json_double_field(w, "queue_avg", (double)t->queue_avg / 16);
		xkv_json_uint_field(w, "service_avg_ns", t->service_avg);
		xkv_json_uint_field(w, "response_avg_ns", t->response_avg);
		xkv_json_uint_field(w, "outstanding", outstanding);
		xkv_json_uint_field(w, "backlog_ns", backlog_ns(t));
		xkv_json_key(w, "sent");
		xkv_json_object_start(w);
		for (uint32_t s = 0; s < XKV_DIR_SELECT_MAX; s++)
			xkv_json_uint_field(w, xkv_dir_select_name(s),
					    chosen[s * XKV_DIR_SERVERS + id]);
		xkv_json_object_end(w);
		xkv_json_object_end(w);
	}
	return 0;
}

static int cmd_status(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	struct xkv_dir_config cfg;
	struct xkv_json w;
	struct status st = {.w = a->json ? &w : NULL};
	struct xkv_dir_pool pool;
	int err;

	(void)argc;
	(void)argv;
	if ((err = xkv_dirctl_config(d, &cfg)) || (err = xkv_dirctl_pool(d, &pool)))
		return err;
	if (st.w) {
		xkv_json_init(&w, stdout);
		xkv_json_object_start(&w);
		xkv_json_uint_field(&w, "port", cfg.port);
		xkv_json_string_field(&w, "select", select_name(cfg.select));
		xkv_json_uint_field(&w, "popular_ppm", cfg.popular_ppm);
		xkv_json_string_field(&w, "pool", pool.servers);
		xkv_json_key(&w, "servers");
		xkv_json_array_start(&w);
	} else {
		printf("directory on port %u, servers chosen by %s", cfg.port,
		       select_name(cfg.select));
		if (cfg.select == XKV_DIR_SELECT_POPULARITY)
			printf(" (popular from %u ppm)", cfg.popular_ppm);
		printf(", pool %s\n", pool.servers);
	}
	err = print_servers(d, &cfg, st.w);
	if (st.w) {
		xkv_json_array_end(&w);
		xkv_json_key(&w, "keys");
		xkv_json_array_start(&w);
	} else {
		printf("keys:\n");
	}
	if (!err)
		err = xkv_dirctl_keys(d, print_key, &st);
	if (st.w) {
		xkv_json_array_end(&w);
		xkv_json_object_end(&w);
		if (!err)
			err = xkv_json_finish(&w);
	} else {
		printf("%u of %u keys\n", st.n, XKV_DIR_KEYS);
	}
	return err;
}

static int cmd_stats(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	uint64_t counts[XKV_DIR_STAT_MAX], chosen[XKV_DIR_CHOICES], by[XKV_DIR_SELECT_MAX] = {0};
	struct xkv_json w;
	int err;

	(void)argc;
	(void)argv;
	if ((err = xkv_dirctl_stats(d, counts)) || (err = xkv_dirctl_choices(d, chosen)))
		return err;
	for (uint32_t i = 0; i < XKV_DIR_CHOICES; i++)
		by[i / XKV_DIR_SERVERS] += chosen[i];
	if (!a->json) {
		for (uint32_t slot = 0; slot < XKV_DIR_STAT_MAX; slot++)
			printf("%-17s %llu\n", xkv_dir_stat_name(slot),
			       (unsigned long long)counts[slot]);
		for (uint32_t s = 0; s < XKV_DIR_SELECT_MAX; s++)
			printf("sent by %-9s %llu\n", xkv_dir_select_name(s),
			       (unsigned long long)by[s]);
		return 0;
	}
	xkv_json_init(&w, stdout);
	xkv_json_object_start(&w);
	for (uint32_t slot = 0; slot < XKV_DIR_STAT_MAX; slot++)
		xkv_json_uint_field(&w, xkv_dir_stat_name(slot), counts[slot]);
	xkv_json_key(&w, "sent_by");
	xkv_json_object_start(&w);
	for (uint32_t s = 0; s < XKV_DIR_SELECT_MAX; s++)
		xkv_json_uint_field(&w, xkv_dir_select_name(s), by[s]);
	xkv_json_object_end(&w);
	xkv_json_object_end(&w);
	return xkv_json_finish(&w);
}

static int cmd_hot(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	const size_t cap = XKV_DIR_SERVERS * XKV_HEAVY_TOP;
	struct xkv_dirctl_hot *keys = calloc(cap, sizeof(*keys));
	struct xkv_client *pool = xkv_dirctl_client(d, (int)a->timeout_ms);
	uint64_t requests;
	struct xkv_json w;
	size_t n;
	int err = keys && pool ? xkv_dirctl_hot(d, pool, keys, cap, &n, &requests) : -ENOMEM;

	(void)argc;
	(void)argv;
	if (err)
		goto out_free;
	if (a->json) {
		xkv_json_init(&w, stdout);
		xkv_json_object_start(&w);
		xkv_json_uint_field(&w, "requests", requests);
		xkv_json_key(&w, "keys");
		xkv_json_array_start(&w);
	} else {
		printf("%llu requests counted by the servers in their last epoch; the hottest:\n",
		       (unsigned long long)requests);
	}
	for (size_t i = 0; i < n; i++) {
		char key[XKV_KEY_MAX + 1];

		memcpy(key, keys[i].key, keys[i].len);
		key[keys[i].len] = '\0';
		if (!a->json) {
			printf("  %-20s %10llu %5.1f %%%s\n", key, (unsigned long long)keys[i].count,
			       requests ? 100.0 * (double)keys[i].count / (double)requests : 0,
			       xkv_dirctl_held(d, keys[i].hash) ? "  replicated" : "");
			continue;
		}
		xkv_json_object_start(&w);
		xkv_json_string_field(&w, "key", key);
		xkv_json_uint_field(&w, "count", keys[i].count);
		xkv_json_uint_field(&w, "servers", keys[i].servers);
		xkv_json_bool_field(&w, "replicated", xkv_dirctl_held(d, keys[i].hash));
		xkv_json_object_end(&w);
	}
	if (a->json) {
		xkv_json_array_end(&w);
		xkv_json_object_end(&w);
		err = xkv_json_finish(&w);
	}
out_free:
	xkv_client_close(pool);
	free(keys);
	return err;
}

static volatile sig_atomic_t stopping;

static void stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int cmd_run(const struct args *a, struct xkv_dirctl *d, int argc, char **argv)
{
	struct xkv_dirctl_run o = {.epoch_ms = a->epoch_ms, .keys = a->keys,
				   .wait_ms = (int)a->wait_ms, .stop = &stopping};
	struct sigaction sa = {.sa_handler = stop};
	struct xkv_client *pool = xkv_dirctl_client(d, (int)a->timeout_ms);
	int err;

	(void)argc;
	(void)argv;
	if (!pool)
		return -errno;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = xkv_dirctl_run(d, pool, &o);
	xkv_client_close(pool);
	return err;
}

static const struct {
	const char *name;
	int (*run)(const struct args *a, struct xkv_dirctl *d, int argc, char **argv);
	bool operands; /* needs at least one, else takes none */
	bool maps;     /* works on the pinned maps, opened for it */
} commands[] = {
	{"attach", cmd_attach, true, false}, {"detach", cmd_detach, true, true},
	{"recover", cmd_recover, false, true}, {"add", cmd_add, true, true},
	{"remove", cmd_remove, true, true},  {"select", cmd_select, true, true},
	{"status", cmd_status, false, true}, {"stats", cmd_stats, false, true},
	{"hot", cmd_hot, false, true},	     {"run", cmd_run, false, true},
};

static int run(size_t i, const struct args *a, int argc, char **argv)
{
	struct xkv_dirctl d;
	int err;

	if (!commands[i].maps)
		return commands[i].run(a, NULL, argc, argv);
	err = xkv_dirctl_open(&d, a->pin, a->state);
	if (err)
		return err;
	err = commands[i].run(a, &d, argc, argv);
	xkv_dirctl_close(&d);
	return err;
}

static int take_option(struct xkv_opts *p, int opt, struct args *a)
{
	switch (opt) {
	case OPT_PIN:
		a->pin = p->arg;
		return 0;
	case OPT_STATE:
		a->state = p->arg;
		return 0;
	case OPT_FORCE:
		a->force = true;
		return 0;
	case OPT_SERVERS:
		a->setup.servers = p->arg;
		return 0;
	case OPT_PORT:
		return xkv_opts_u32(p, 1, UINT16_MAX, &a->port);
	case OPT_SELECT:
		if (select_find(p->arg, &a->setup.select))
			return xkv_opts_bad_value(p,
						  "round-robin, least-loaded, predict, c3 or popularity");
		return 0;
	case OPT_POPULAR:
		return xkv_opts_u32(p, 0, 1000000, &a->setup.popular_ppm);
	case OPT_WRITE_SERVERS:
		return xkv_opts_u32(p, 1, XKV_DIR_SERVERS, &a->write_max);
	case OPT_SKB:
		a->setup.skb = true;
		return 0;
	case OPT_WAIT:
		return xkv_opts_u32(p, 0, 600000, &a->wait_ms);
	case OPT_TIMEOUT:
		return xkv_opts_u32(p, 1, 600000, &a->timeout_ms);
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_EPOCH:
		return xkv_opts_u32(p, 10, 3600000, &a->epoch_ms);
	case OPT_KEYS:
		return xkv_opts_u32(p, 1, XKV_DIR_KEYS, &a->keys);
	default:
		return opt;
	}
}

int main(int argc, char **argv)
{
	struct args a = {.pin = XKV_DIRCTL_PIN, .state = XKV_DIRCTL_STATE, .wait_ms = 1000,
			 .timeout_ms = 500, .setup.popular_ppm = 10, .epoch_ms = 1000};
	struct xkv_opts p;
	int opt, err;

	/* options end at the command: a key may start with a dash */
	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), XKV_OPTS_IN_ORDER);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		if (opt == OPT_HELP) {
			usage(stdout);
			return 0;
		}
		err = take_option(&p, opt, &a);
	}
	if (err) {
		fprintf(stderr, "xkv-dir: %s (--help for usage)\n", p.why);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	for (size_t i = 0; argc && i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[0], commands[i].name))
			continue;
		if (commands[i].operands ? argc < 2 : argc > 1)
			break;
		return run(i, &a, argc - 1, argv + 1) ? EXIT_FAILED : 0;
	}
	usage(stderr);
	return EXIT_USAGE;
}
