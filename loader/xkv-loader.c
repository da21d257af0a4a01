// SPDX-License-Identifier: MIT
/*
 * xkv-loader COMMAND [options]: a command line over userspace/bpfctl, which does
 * the work. docs/LOADER.md is its manual.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/log.h"
#include "live.h"
#include "util/json.h"

#define STATUS_MAX 64 /* interfaces listed by `status` without --iface */

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
};

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

#define IFACE_OPTION {"iface", required_argument, NULL, 'i'}
#define JSON_OPTION  {"json", no_argument, NULL, 'j'}
/* Options every command takes, after its own. */
#define COMMON_OPTIONS {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}
#define COMMON_USAGE                                                                               \
	"  -v, --verbose        show debug messages, libbpf's included\n"                          \
	"  -h, --help           show this help\n"

static const char attach_usage[] =
	"Usage: xkv-loader attach --iface IF [options]\n"
	"Load the xkv XDP program, pin its maps under " BPFCTL_PIN_ROOT "/IF/ and attach it.\n"
	"Attaching again only updates the port, workers, policy and allowlist.\n"
	"  -i, --iface IF       interface to attach to (required)\n"
	"  -m, --mode MODE      native (in the driver, default) or skb (generic)\n"
	"  -p, --port PORT      UDP port of xkv requests (default 7411)\n"
	"  -w, --workers N      worker threads per rx queue, 1..64 (default 1)\n"
	"  -P, --policy NAME    erew (default) or crew\n"
	"  -a, --allow CIDR     client network allowed to send requests; repeatable.\n"
	"                       Without any, all xkv requests are dropped.\n"
	"  -f, --force          replace another XDP program attached to IF\n" COMMON_USAGE;

static const char detach_usage[] =
	"Usage: xkv-loader detach --iface IF [--force]\n"
	"Detach the xkv XDP program from IF and remove its pinned maps.\n"
	"  -i, --iface IF       interface (required)\n"
	"  -f, --force          also detach an XDP program that is not xkv's\n" COMMON_USAGE;

static const char status_usage[] =
	"Usage: xkv-loader status [--iface IF] [--json]\n"
	"Show the attached program, its mode, policy, workers, port and pinned maps,\n"
	"for IF or for every interface that has xkv attached or pinned.\n"
	"  -i, --iface IF       only this interface\n"
	"  -j, --json           print JSON\n" COMMON_USAGE;

static const char stats_usage[] =
	"Usage: xkv-loader stats --iface IF [--json]\n"
	"Show packets dropped per reason, passed to the stack and steered per worker,\n"
	"then the counters a running xkv-server publishes: per worker (requests by op,\n"
	"replies by status, drops by reason, reassembly, sockets) and the store's.\n"
	"  -i, --iface IF       interface (required)\n"
	"  -j, --json           print JSON\n" COMMON_USAGE;

static const char main_usage[] = "Usage: xkv-loader COMMAND [options]\n"
				 "Commands:\n"
				 "  attach    load, pin and attach the xkv XDP program\n"
				 "  detach    detach it and remove its pins\n"
				 "  status    show what is attached and pinned\n"
				 "  stats     show drop, pass and steering counters\n"
				 "`xkv-loader COMMAND --help` describes each one.\n";

static int usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xkv-loader: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	return EXIT_USAGE;
}

/* Handles the options every command shares; false when getopt's answer was not one. */
static bool common_option(int opt)
{
	if (opt != 'v')
		return false;
	bpfctl_log_set_level(BPFCTL_LOG_DEBUG);
	return true;
}

static int need_root(void)
{
	if (geteuid() == 0)
		return 0;
	pr_warn("xkv-loader: must run as root (BPF and XDP need CAP_BPF, CAP_NET_ADMIN)\n");
	return -EPERM;
}

static int parse_uint(const char *text, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(text, &end, 10);
	return errno || end == text || *end || *out > max || text[0] == '-' ? -EINVAL : 0;
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

static int cmd_attach(int argc, char **argv)
{
	static const struct option options[] = {
		IFACE_OPTION,				   {"mode", required_argument, NULL, 'm'},
		{"port", required_argument, NULL, 'p'},
		{"workers", required_argument, NULL, 'w'},
		{"policy", required_argument, NULL, 'P'},  {"allow", required_argument, NULL, 'a'},
		{"force", no_argument, NULL, 'f'},	   COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct xkv_allow_key allow[XKV_ALLOW_MAX];
	struct bpfctl_attach_opts opts = {
		.mode = BPFCTL_MODE_NATIVE,
		.config = {.port = XKV_DEFAULT_PORT, .workers = 1, .policy = XKV_POLICY_EREW},
		.allow = allow,
	};
	unsigned long value;
	int opt, policy;

	while ((opt = getopt_long(argc, argv, "i:m:p:w:P:a:fvh", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			opts.ifname = optarg;
			break;
		case 'm':
			if (parse_mode(optarg, &opts.mode))
				return usage_error(attach_usage, "attach: bad mode '%s'", optarg);
			break;
		case 'p':
			if (parse_uint(optarg, 65535, &value) || !value)
				return usage_error(attach_usage, "attach: bad port '%s'", optarg);
			opts.config.port = value;
			break;
		case 'w':
			if (parse_uint(optarg, XKV_WORKERS_MAX, &value) || !value)
				return usage_error(attach_usage, "attach: bad count '%s'", optarg);
			opts.config.workers = value;
			break;
		case 'P':
			policy = bpfctl_parse_policy(optarg);
			if (policy < 0)
				return usage_error(attach_usage, "attach: bad policy '%s'", optarg);
			opts.config.policy = policy;
			break;
		case 'a':
			if (opts.n_allow == XKV_ALLOW_MAX ||
			    bpfctl_parse_cidr(optarg, &allow[opts.n_allow]))
				return usage_error(attach_usage, "attach: bad CIDR '%s'", optarg);
			opts.n_allow++;
			break;
		case 'f':
			opts.force = true;
			break;
		case 'h':
			fputs(attach_usage, stdout);
			return EXIT_OK;
		default:
			if (!common_option(opt))
				return fputs(attach_usage, stderr), EXIT_USAGE;
		}
	}
	if (!opts.ifname || optind != argc)
		return usage_error(attach_usage, "attach: --iface IF is required, nothing else");
	if (need_root())
		return EXIT_FAILED;
	if (!opts.n_allow)
		pr_warn("no --allow given: every xkv request will be dropped (not_allowed)\n");
	return bpfctl_attach(&opts) ? EXIT_FAILED : EXIT_OK;
}

/* The options of status and stats, which report. */
static const struct option report_options[] = {
	IFACE_OPTION,
	JSON_OPTION,
	COMMON_OPTIONS,
	{NULL, 0, NULL, 0},
};

/* What detach, status and stats take: an interface and a flag or two. */
struct simple_args {
	const char *ifname;
	bool force;
	bool json;
};

/* Parses the options of a simple command: -1 to go on, else the exit code. */
static int parse_simple(int argc, char **argv, const char *shortopts, const struct option *options,
			const char *usage, struct simple_args *args)
{
	int opt;

	while ((opt = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			args->ifname = optarg;
			break;
		case 'f':
			args->force = true;
			break;
		case 'j':
			args->json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			if (!common_option(opt))
				return fputs(usage, stderr), EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error(usage, "unexpected argument '%s'", argv[optind]);
	return -1;
}

static int cmd_detach(int argc, char **argv)
{
	static const struct option options[] = {
		IFACE_OPTION,
		{"force", no_argument, NULL, 'f'},
		COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct simple_args args = {0};
	int ret = parse_simple(argc, argv, "i:fvh", options, detach_usage, &args);

	if (ret >= 0)
		return ret;
	if (!args.ifname)
		return usage_error(detach_usage, "detach: --iface IF is required");
	return need_root() || bpfctl_detach(args.ifname, args.force) ? EXIT_FAILED : EXIT_OK;
}

static void print_status_text(const struct bpfctl_status *st)
{
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
	if (st->has_config)
		printf("  policy %s, workers %u, port %u, attached by %s\n",
		       xkv_policy_name(st->config.policy), st->config.workers, st->config.port,
		       st->config.owner == XKV_OWNER_SERVER ? "xkv-server" : "xkv-loader");
	if (st->n_pins) {
		printf("  pinned under %s/%s:", BPFCTL_PIN_ROOT, st->ifname);
		for (unsigned int i = 0; i < st->n_pins; i++)
			printf(" %s", st->pins[i]);
		printf("\n");
	}
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
	xkv_json_object_end(w);
}

static int cmd_status(int argc, char **argv)
{
	struct simple_args args = {0};
	struct bpfctl_status *st;
	struct xkv_json w;
	size_t n = 0;
	int err;

	err = parse_simple(argc, argv, "i:jvh", report_options, status_usage, &args);
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

static void print_stats_text(const struct bpfctl_stats *stats, __u32 workers,
			     const struct live_counters *live)
{
	printf("passed %llu\ndropped:\n", (unsigned long long)stats->slots[XKV_STAT_PASSED]);
	for (__u32 r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
		printf("  %-16s %llu\n", xkv_reason_name(r), (unsigned long long)stats->slots[r]);
	printf("steered:\n");
	for (__u32 w = 0; w < workers; w++)
		printf("  worker %-9u %llu\n", w, (unsigned long long)stats->steered[w]);
	if (live)
		live_counters_print_text(live, stdout);
	else
		printf("no server has published counters here\n");
}

static int print_stats_json(const struct bpfctl_stats *stats, __u32 workers,
			    const struct live_counters *live)
{
	struct xkv_json w;

	xkv_json_init(&w, stdout);
	xkv_json_object_start(&w);
	xkv_json_uint_field(&w, "passed", stats->slots[XKV_STAT_PASSED]);
	xkv_json_key(&w, "drops");
	xkv_json_object_start(&w);
	for (__u32 r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
		xkv_json_uint_field(&w, xkv_reason_name(r), stats->slots[r]);
	xkv_json_object_end(&w);
	xkv_json_key(&w, "steered");
	xkv_json_array_start(&w);
	for (__u32 i = 0; i < workers; i++)
		xkv_json_uint(&w, stats->steered[i]);
	xkv_json_array_end(&w);
	if (live)
		live_counters_json(live, &w);
	xkv_json_object_end(&w);
	return xkv_json_finish(&w);
}

static int cmd_stats(int argc, char **argv)
{
	struct simple_args args = {0};
	static struct live_counters live;
	struct bpfctl_stats stats;
	struct bpfctl_status st;
	bool have_live;
	__u32 workers;
	int ret;

	ret = parse_simple(argc, argv, "i:jvh", report_options, stats_usage, &args);
	if (ret >= 0)
		return ret;
	if (!args.ifname)
		return usage_error(stats_usage, "stats: --iface IF is required");
	if (need_root() || bpfctl_status(args.ifname, &st) || bpfctl_stats(args.ifname, &stats))
		return EXIT_FAILED;
	/* every worker slot when the config is unreadable, so no count hides */
	workers = st.has_config ? st.config.workers : XKV_WORKERS_MAX;
	/* a server publishes its own counters beside the maps; an attachment alone has none */
	ret = live_counters_read(args.ifname, &live);
	have_live = ret == 0;
	if (ret && ret != -ENODATA)
		pr_warn("xkv-loader: reading the server's counters: %s\n", strerror(-ret));
	if (args.json)
		return print_stats_json(&stats, workers, have_live ? &live : NULL) ? EXIT_FAILED
										   : EXIT_OK;
	print_stats_text(&stats, workers, have_live ? &live : NULL);
	return EXIT_OK;
}

static const struct command commands[] = {
	{"attach", cmd_attach},
	{"detach", cmd_detach},
	{"status", cmd_status},
	{"stats", cmd_stats},
};

int main(int argc, char **argv)
{
	bpfctl_log_set_level(BPFCTL_LOG_INFO);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(main_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return usage_error(main_usage, "unknown command '%s'", argv[1]);
}
