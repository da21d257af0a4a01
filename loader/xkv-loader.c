// SPDX-License-Identifier: MIT
/*
 * xkv-loader COMMAND [options]: a command line over userspace/bpfctl, which does
 * the work. docs/LOADER.md is its manual.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/log.h"
#include "xkv/memcached.h"
#include "live.h"
#include "metrics_http.h"
#include "roles_show.h"
#include "snapshot.h"
#include "util/json.h"
#include "util/opts.h"

#define STATUS_MAX 64 /* interfaces listed by `status` without --iface */

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
};

/* Every option has a letter: a command tells its options apart by it. */
struct command {
	const char *name;
	const char *summary;  /* its line in xkv-loader --help */
	const char *synopsis; /* its --help, above the options */
	const struct xkv_opt *opts;
	unsigned n_opts;
	int (*run)(const struct command *cmd, int argc, char **argv);
};

#define IFACE_OPT(help) {"iface", 'i', "IF", help}
#define FORCE_OPT(help) {"force", 'f', NULL, help}
#define JSON_OPT	{"json", 'j', NULL, "print JSON"}
/* Options every command takes, after its own. */
#define VERBOSE_OPT	{"verbose", 'v', NULL, "show debug messages, libbpf's included"}
#define HELP_OPT	{"help", 'h', NULL, "show this help"}

static const struct xkv_opt attach_opts[] = {
	IFACE_OPT("interface to attach to (required)"),
	{"mode", 'm', "MODE", "native (in the driver, default) or skb (generic)"},
	{"port", 'p', "PORT", "UDP port of xkv requests (default 7411)"},
	{"memcached-port", 'M', "PORT",
	 "UDP port of memcached requests, steered as xkv's (default 11211; 0: off)"},
	{"workers", 'w', "N", "worker threads per rx queue, 1..64 (default 1)"},
	{"policy", 'P', "NAME",
	 "xkv (default), erew, crew, minos, dcrew; under minos and xkv a running "
	 "xkv-server writes the roles"},
	{"allow", 'a', "CIDR",
	 "client network allowed to send requests; repeatable. Without any, all xkv requests are "
	 "dropped."},
	{"listen", 'l', "ADDR",
	 "an IP address requests may be sent to besides IF's own (read at each attach); "
	 "repeatable"},
	FORCE_OPT("replace another XDP program attached to IF"),
	VERBOSE_OPT,
	HELP_OPT,
};

static const struct xkv_opt detach_opts[] = {
	IFACE_OPT("interface (required)"),
	FORCE_OPT("also detach a running xkv-server's attachment, or an XDP program not xkv's"),
	VERBOSE_OPT,
	HELP_OPT,
};

static const struct xkv_opt status_opts[] = {
	IFACE_OPT("only this interface"),
	JSON_OPT,
	VERBOSE_OPT,
	HELP_OPT,
};

static const struct xkv_opt stats_opts[] = {
	IFACE_OPT("interface (required)"),
	JSON_OPT,
	{"save", 'S', "FILE", "also save the server's latency histograms to FILE"},
	{"since", 's', "FILE",
	 "latency counted since FILE was saved (--save), not since the server started"},
	VERBOSE_OPT,
	HELP_OPT,
};

static const struct xkv_opt metrics_opts[] = {
	IFACE_OPT("interface (required)"),
	{"listen", 'l', "ADDR:PORT", "where to serve /metrics (default " METRICS_LISTEN_DEFAULT ")"},
	VERBOSE_OPT,
	HELP_OPT,
};

static void print_usage(FILE *f, const struct command *cmd)
{
	fputs(cmd->synopsis, f);
	xkv_opts_usage(f, cmd->opts, cmd->n_opts);
}

__attribute__((format(printf, 2, 3))) static int usage_error(const struct command *cmd,
							     const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xkv-loader: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_usage(stderr, cmd);
	return EXIT_USAGE;
}

/* Takes one option of a command (by its letter) into args; 0 or -EINVAL with p->why. */
typedef int (*take_option_fn)(struct xkv_opts *p, char letter, void *args);

/*
 * Parses cmd's options, handing each but --verbose and --help to take. Returns -1 to
 * go on, or the exit code: after --help, a bad option or value, or an operand.
 */
static int parse_options(const struct command *cmd, int argc, char **argv, take_option_fn take,
			 void *args)
{
	struct xkv_opts p;
	int i;

	if (xkv_opts_init(&p, cmd->opts, cmd->n_opts, 0))
		return EXIT_FAILED;
	while ((i = xkv_opts_next(&p, argc, argv)) >= 0) {
		char letter = cmd->opts[i].letter;

		if (letter == 'h') {
			print_usage(stdout, cmd);
			return EXIT_OK;
		}
		if (letter == 'v') {
			bpfctl_log_set_level(BPFCTL_LOG_DEBUG);
		} else if (take(&p, letter, args)) {
			i = -EINVAL;
			break;
		}
	}
	if (i != XKV_OPTS_END)
		return usage_error(cmd, "%s", p.why);
	if (optind != argc)
		return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	return -1;
}

static int need_root(void)
{
	if (geteuid() == 0)
		return 0;
	pr_warn("xkv-loader: must run as root (BPF and XDP need CAP_BPF, CAP_NET_ADMIN)\n");
	return -EPERM;
}

static int parse_mode(const char *text, enum bpfctl_mode *mode)
{
	if (!strcmp(text, "native"))
		*mode = BPFCTL_MODE_NATIVE;
	else if (!strcmp(text, "skb"))
		*mode = BPFCTL_MODE_SKB;
	else
		return -EINVAL;
	return 0;
}

/* What attach takes: the allowlist is filled as --allow comes. */
struct attach_args {
	struct bpfctl_attach_opts opts;
	struct xkv_allow_key allow[XKV_ALLOW_MAX];
	struct bpfctl_local listen;
};

static int take_attach_option(struct xkv_opts *p, char letter, void *args)
{
	struct attach_args *attach = args;
	struct bpfctl_attach_opts *opts = &attach->opts;
	char what[48];
	uint32_t value;
	int policy, err;

	switch (letter) {
	case 'i':
		opts->ifname = p->arg;
		return 0;
	case 'm':
		return parse_mode(p->arg, &opts->mode) ? xkv_opts_bad_value(p, "native or skb") : 0;
	case 'p':
		err = xkv_opts_u32(p, 1, UINT16_MAX, &value);
		if (!err)
			opts->config.port = (__u16)value;
		return err;
	case 'M':
		err = xkv_opts_u32(p, 0, UINT16_MAX, &value);
		if (!err)
			opts->config.memcached_port = (__u16)value;
		return err;
	case 'w':
		return xkv_opts_u32(p, 1, XKV_WORKERS_MAX, &opts->config.workers);
	case 'P':
		policy = bpfctl_parse_policy(p->arg);
		if (policy < 0)
			return xkv_opts_bad_value(p, "erew, crew, minos, dcrew or xkv");
		opts->config.policy = policy;
		return 0;
	case 'a':
		if (opts->n_allow == XKV_ALLOW_MAX) {
			snprintf(what, sizeof(what), "at most %d networks in all", XKV_ALLOW_MAX);
			return xkv_opts_bad_value(p, what);
		}
		if (bpfctl_parse_cidr(p->arg, &attach->allow[opts->n_allow]))
			return xkv_opts_bad_value(p, "a network such as 10.0.0.0/8 or fd00::/8");
		opts->n_allow++;
		return 0;
	case 'l':
		if (bpfctl_parse_local(p->arg, &attach->listen))
			return xkv_opts_bad_value(p, "a unicast IP address such as 10.1.2.3 or fd00::1");
		return 0;
	case 'f':
		opts->force = true;
		return 0;
	}
	return -EINVAL;
}

static int cmd_attach(const struct command *cmd, int argc, char **argv)
{
	struct attach_args args;
	int ret;

	args.opts = (struct bpfctl_attach_opts){
		.mode = BPFCTL_MODE_NATIVE,
		.config = {.port = XKV_DEFAULT_PORT,
			   .memcached_port = XKV_MC_DEFAULT_PORT,
			   .workers = 1,
			   .policy = XKV_POLICY_XKV},
		.allow = args.allow,
		.listen = &args.listen,
	};
	args.listen.n = 0;
	ret = parse_options(cmd, argc, argv, take_attach_option, &args);
	if (ret >= 0)
		return ret;
	if (!args.opts.ifname)
		return usage_error(cmd, "--iface IF is required");
	if (need_root())
		return EXIT_FAILED;
	if (!args.opts.n_allow)
		pr_warn("no --allow given: every xkv request will be dropped (not_allowed)\n");
	return bpfctl_attach(&args.opts) ? EXIT_FAILED : EXIT_OK;
}

/* What detach, status and stats take: an interface and a flag or two. */
struct simple_args {
	const char *ifname;
	bool force;
	bool json;
	const char *save, *since; /* stats: latency snapshots */
	const char *listen;	  /* metrics */
};

static int take_simple_option(struct xkv_opts *p, char letter, void *args)
{
	struct simple_args *simple = args;

	switch (letter) {
	case 'i':
		simple->ifname = p->arg;
		return 0;
	case 'f':
		simple->force = true;
		return 0;
	case 'j':
		simple->json = true;
		return 0;
	case 'S':
		simple->save = p->arg;
		return 0;
	case 's':
		simple->since = p->arg;
		return 0;
	case 'l':
		simple->listen = p->arg;
		return 0;
	}
	return -EINVAL;
}

/* A command on one interface, as root: -1 to go on, or the exit code (parse_options). */
static int parse_iface_command(const struct command *cmd, int argc, char **argv,
			       struct simple_args *args)
{
	int ret = parse_options(cmd, argc, argv, take_simple_option, args);

	if (ret >= 0)
		return ret;
	if (!args->ifname)
		return usage_error(cmd, "--iface IF is required");
	if (need_root())
		return EXIT_FAILED;
	return -1;
}

/* Whether a live xkv-server serves ifname, which detach then leaves alone, saying so. */
static bool server_left_running(const char *ifname)
{
	pid_t pid = 0;
	int err = bpfctl_server_running(ifname, &pid);

	if (err == -EBUSY)
		pr_warn("xkv-server pid %d is serving %s: left attached (stop it, or --force "
			"detaches it under the running server, which then receives nothing)\n",
			(int)pid, ifname);
	else if (err)
		pr_warn("reading %s/%s.lock: %s\n", BPFCTL_LOCK_DIR, ifname, strerror(-err));
	return err != 0;
}

static int cmd_detach(const struct command *cmd, int argc, char **argv)
{
	struct simple_args args = {0};
	int ret = parse_iface_command(cmd, argc, argv, &args);

	if (ret >= 0)
		return ret;
	if (!args.force && server_left_running(args.ifname))
		return EXIT_FAILED;
	return bpfctl_detach(args.ifname, args.force) ? EXIT_FAILED : EXIT_OK;
}

/* The server publishing on an interface, as status shows it (too large for the stack). */
static struct live_counters status_live;
static struct xkv_roles status_roles;

static void print_status_text(const struct bpfctl_status *st)
{
	char mc_port[8] = "off";

	printf("%s:", st->ifname);
	if (!st->ifindex)
		printf(" interface gone");
	else if (!st->prog_id)
		printf(" no XDP program");
	else
		printf(" %s program '%s' id %u, %s mode", st->ours ? "xkv" : "foreign",
		       st->prog_name, st->prog_id, bpfctl_mode_name(st->mode));
	if (st->n_pins && !st->ours)
		printf(" (stale pins: the next attach or detach removes them)");
	printf("\n");
	if (st->has_config) {
		if (st->config.memcached_port)
			snprintf(mc_port, sizeof(mc_port), "%u", st->config.memcached_port);
		printf("  policy %s, workers %u, port %u, memcached port %s, attached by %s\n",
		       xkv_policy_name(st->config.policy), st->config.workers, st->config.port,
		       mc_port, st->config.owner == XKV_OWNER_SERVER ? "xkv-server" : "xkv-loader");
	}
	if (st->n_pins) {
		printf("  pinned under %s/%s:", BPFCTL_PIN_ROOT, st->ifname);
		for (unsigned int i = 0; i < st->n_pins; i++)
			printf(" %s", st->pins[i]);
		printf("\n");
	}
	if (st->ours && live_counters_read(st->ifname, &status_live) == 0)
		live_counters_print_summary(&status_live, stdout);
	if (st->ours && st->has_config && xkv_policy_roles(st->config.policy) &&
	    roles_read(st->ifname, &status_roles) == 0)
		roles_print_text(&status_roles, st->config.workers, stdout);
}

static void print_status_json(struct xkv_json *w, const struct bpfctl_status *st)
{
	char pin_dir[sizeof(BPFCTL_PIN_ROOT) + IF_NAMESIZE];

	xkv_json_object_start(w);
	xkv_json_string_field(w, "ifname", st->ifname);
	xkv_json_uint_field(w, "ifindex", st->ifindex);
	xkv_json_uint_field(w, "prog_id", st->prog_id);
	xkv_json_string_field(w, "prog_name", st->prog_name);
	xkv_json_bool_field(w, "xkv", st->ours);
	xkv_json_string_field(w, "mode", bpfctl_mode_name(st->mode));
	if (st->has_config) {
		xkv_json_string_field(w, "policy", xkv_policy_name(st->config.policy));
		xkv_json_uint_field(w, "workers", st->config.workers);
		xkv_json_uint_field(w, "port", st->config.port);
		xkv_json_uint_field(w, "memcached_port", st->config.memcached_port);
		xkv_json_string_field(w, "attached_by",
				      st->config.owner == XKV_OWNER_SERVER ? "server" : "loader");
	}
	snprintf(pin_dir, sizeof(pin_dir), "%s/%s", BPFCTL_PIN_ROOT, st->ifname);
	xkv_json_string_field(w, "pin_dir", pin_dir);
	xkv_json_key(w, "pins");
	xkv_json_array_start(w);
	for (unsigned int i = 0; i < st->n_pins; i++)
		xkv_json_string(w, st->pins[i]);
	xkv_json_array_end(w);
	if (st->ours && live_counters_read(st->ifname, &status_live) == 0)
		live_counters_summary_json(&status_live, w);
	if (st->ours && st->has_config && xkv_policy_roles(st->config.policy) &&
	    roles_read(st->ifname, &status_roles) == 0)
		roles_json(&status_roles, st->config.workers, w);
	xkv_json_object_end(w);
}

static int cmd_status(const struct command *cmd, int argc, char **argv)
{
	struct simple_args args = {0};
	struct bpfctl_status *st;
	struct xkv_json w;
	size_t n = 0;
	int err;

	err = parse_options(cmd, argc, argv, take_simple_option, &args);
	if (err >= 0)
		return err;
	if (need_root())
		return EXIT_FAILED;
	st = calloc(STATUS_MAX, sizeof(*st));
	if (!st)
		return EXIT_FAILED;
	if (args.ifname) {
		err = bpfctl_status(args.ifname, st);
		n = 1;
	} else {
		err = bpfctl_status_all(st, STATUS_MAX, &n);
		if (err)
			pr_warn("list interfaces: %s\n", strerror(-err));
	}
	if (!err && args.json) {
		xkv_json_init(&w, stdout);
		xkv_json_array_start(&w);
		for (size_t i = 0; i < n; i++)
			print_status_json(&w, &st[i]);
		xkv_json_array_end(&w);
		err = xkv_json_finish(&w);
	} else if (!err) {
		for (size_t i = 0; i < n; i++)
			print_status_text(&st[i]);
		if (!n)
			printf("xkv is attached nowhere\n");
	}
	free(st);
	return err ? EXIT_FAILED : EXIT_OK;
}

/* The latency histograms stats shows are counted from this copy; NULL: from the start. */
static void print_stats_text(const struct snapshot *s, const struct xkv_lat_view *since)
{
	const struct xkv_config *cfg = s->cfg;
	const struct bpfctl_stats *stats = &s->stats;
	struct ewt_field fields[EWT_FIELDS_MAX];

	if (cfg && cfg->memcached_port)
		printf("port %u, memcached port %u\n", cfg->port, cfg->memcached_port);
	else if (cfg)
		printf("port %u, memcached port off\n", cfg->port);
	printf("passed %llu\ndropped:\n", (unsigned long long)stats->slots[XKV_STAT_PASSED]);
	for (__u32 r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
		printf("  %-16s %llu\n", xkv_reason_name(r), (unsigned long long)stats->slots[r]);
	printf("steered:\n");
	for (__u32 w = 0; w < s->workers; w++)
		printf("  worker %-9u %llu\n", w, (unsigned long long)stats->steered[w]);
	if (s->has_ewt) {
		printf("ewt:\n");
		for (size_t i = 0, n = ewt_fields(s, fields); i < n; i++)
			printf("  %-16s %llu\n", fields[i].name,
			       (unsigned long long)fields[i].value);
	}
	if (!s->has_live) {
		printf("no server has published counters here\n");
		return;
	}
	live_counters_print_text(&s->live, stdout);
	xkv_lat_print(stdout, &s->lat, since);
}

static int print_stats_json(const struct snapshot *s, const struct xkv_lat_view *since)
{
	const struct xkv_config *cfg = s->cfg;
	const struct bpfctl_stats *stats = &s->stats;
	struct ewt_field fields[EWT_FIELDS_MAX];
	struct xkv_json w;

	xkv_json_init(&w, stdout);
	xkv_json_object_start(&w);
	if (cfg) {
		xkv_json_uint_field(&w, "port", cfg->port);
		xkv_json_uint_field(&w, "memcached_port", cfg->memcached_port);
	}
	xkv_json_uint_field(&w, "passed", stats->slots[XKV_STAT_PASSED]);
	xkv_json_key(&w, "drops");
	xkv_json_object_start(&w);
	for (__u32 r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
		xkv_json_uint_field(&w, xkv_reason_name(r), stats->slots[r]);
	xkv_json_object_end(&w);
	xkv_json_key(&w, "steered");
	xkv_json_array_start(&w);
	for (__u32 i = 0; i < s->workers; i++)
		xkv_json_uint(&w, stats->steered[i]);
	xkv_json_array_end(&w);
	if (s->has_ewt) {
		xkv_json_key(&w, "ewt");
		xkv_json_object_start(&w);
		for (size_t i = 0, n = ewt_fields(s, fields); i < n; i++)
			xkv_json_uint_field(&w, fields[i].name, fields[i].value);
		xkv_json_object_end(&w);
	}
	if (s->has_live) {
		live_counters_json(&s->live, &w);
		live_latency_json(&s->lat, since, &w);
	}
	xkv_json_object_end(&w);
	return xkv_json_finish(&w);
}

/* --save and --since: 0, or -errno said why. since is loaded when --since is given. */
static int stats_latency_files(const struct simple_args *args, const struct snapshot *s,
			       struct xkv_lat_view *since)
{
	int err;

	if (args->since) {
		err = xkv_lat_view_load(args->since, since);
		if (err) {
			pr_warn("xkv-loader: --since %s: %s\n", args->since,
				err == -EINVAL ? "not a latency snapshot of this build" : strerror(-err));
			return err;
		}
	}
	if (args->save) {
		err = xkv_lat_view_save(&s->lat, args->save);
		if (err) {
			pr_warn("xkv-loader: --save %s: %s\n", args->save, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int cmd_stats(const struct command *cmd, int argc, char **argv)
{
	struct xkv_lat_view since = {0};
	struct simple_args args = {0};
	struct snapshot *s;
	int ret;

	ret = parse_iface_command(cmd, argc, argv, &args);
	if (ret >= 0)
		return ret;
	s = malloc(sizeof(*s));
	if (!s)
		return EXIT_FAILED;
	ret = EXIT_FAILED;
	if (snapshot_read(args.ifname, s) ||
	    (s->has_live && stats_latency_files(&args, s, &since)))
		goto out_free;
	if (args.json)
		ret = print_stats_json(s, args.since ? &since : NULL) ? EXIT_FAILED : EXIT_OK;
	else {
		print_stats_text(s, args.since ? &since : NULL);
		ret = EXIT_OK;
	}
out_free:
	xkv_lat_view_free(&since);
	snapshot_free(s);
	free(s);
	return ret;
}

static int cmd_metrics(const struct command *cmd, int argc, char **argv)
{
	struct simple_args args = {.listen = METRICS_LISTEN_DEFAULT};
	int ret = parse_iface_command(cmd, argc, argv, &args);

	if (ret >= 0)
		return ret;
	ret = metrics_serve(args.ifname, args.listen);
	return ret == -EINVAL ? usage_error(cmd, "--listen %s: not ADDR:PORT", args.listen)
	       : ret	      ? EXIT_FAILED
			      : EXIT_OK;
}

static const struct command commands[] = {
	{
		.name = "attach",
		.summary = "load, pin and attach the xkv XDP program",
		.synopsis = "Usage: xkv-loader attach --iface IF [options]\n"
			    "Load the xkv XDP program, pin its maps under " BPFCTL_PIN_ROOT
			    "/IF/ and attach it.\n"
			    "Attaching again only updates the ports, workers, policy and "
			    "allowlist.\n",
		.opts = attach_opts,
		.n_opts = XKV_OPTS_COUNT(attach_opts),
		.run = cmd_attach,
	},
	{
		.name = "detach",
		.summary = "detach it and remove its pins",
		.synopsis = "Usage: xkv-loader detach --iface IF [--force]\n"
			    "Detach the xkv XDP program from IF and remove its pinned maps.\n",
		.opts = detach_opts,
		.n_opts = XKV_OPTS_COUNT(detach_opts),
		.run = cmd_detach,
	},
	{
		.name = "status",
		.summary = "show what is attached and pinned",
		.synopsis = "Usage: xkv-loader status [--iface IF] [--json]\n"
			    "Show the attached program, its mode, policy, workers, ports and "
			    "pinned maps,\n"
			    "for IF or for every interface that has xkv attached or pinned.\n",
		.opts = status_opts,
		.n_opts = XKV_OPTS_COUNT(status_opts),
		.run = cmd_status,
	},
	{
		.name = "stats",
		.summary = "show the program's and a running server's counters",
		.synopsis = "Usage: xkv-loader stats --iface IF [--json] [--save FILE] "
			    "[--since FILE]\n"
			    "Show the ports, packets dropped per reason (xkv and memcached "
			    "alike), passed to\nthe stack and steered per worker, under dcrew "
			    "the Exclusive Writer Table's slots\nand counters, then the counters "
			    "a running xkv-server publishes: per worker\n(requests by op, "
			    "replies by status, drops by reason, reassembly, sockets) and\nthe "
			    "store's, then each worker's latency histograms (queued, served, total\nby op "
			    "and size class: count, p50, p99, p99.9, max) and every worker's "
			    "merged.\n",
		.opts = stats_opts,
		.n_opts = XKV_OPTS_COUNT(stats_opts),
		.run = cmd_stats,
	},
	{
		.name = "metrics",
		.summary = "serve the same counters to Prometheus",
		.synopsis = "Usage: xkv-loader metrics --iface IF [--listen ADDR:PORT]\n"
			    "Serve what stats shows, read afresh at each request, at "
			    "http://ADDR:PORT/metrics\nin Prometheus's text format, until "
			    "SIGINT or SIGTERM.\n",
		.opts = metrics_opts,
		.n_opts = XKV_OPTS_COUNT(metrics_opts),
		.run = cmd_metrics,
	},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_main_usage(FILE *f)
{
	fputs("Usage: xkv-loader COMMAND [options]\nCommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("`xkv-loader COMMAND --help` describes each one.\n", f);
}

int main(int argc, char **argv)
{
	bpfctl_log_set_level(BPFCTL_LOG_INFO);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_main_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(&commands[i], argc - 1, argv + 1);
	fprintf(stderr, "xkv-loader: unknown command '%s'\n", argv[1]);
	print_main_usage(stderr);
	return EXIT_USAGE;
}
