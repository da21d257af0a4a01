// SPDX-License-Identifier: MIT
/*
 * xkv-trace: request traces for replay. `gen` writes a workload as a pcap file of
 * request frames, `record` captures live traffic, `check` judges a capture of the
 * server's replies against the requests (docs/TRACE.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gen.h"
#include "net/packet.h"
#include "pcapio.h"
#include "pcapng.h"
#include "record.h"
#include "util/opts.h"
#include "util/parse.h"

extern char **environ;

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

#define WHY_MAX 256

static const char usage_main[] =
	"usage: xkv-trace COMMAND [options]   (xkv-trace COMMAND --help for each)\n"
	"  gen      write a workload as a pcap file of request frames\n"
	"  check    judge captured replies against the requests (exit 1 when wrong)\n"
	"  record   capture live requests and replies on an interface\n";

static const char usage_gen[] =
	"usage: xkv-trace gen --count N --out FILE [options]\n"
	"Writes N xkv requests as Ethernet/IPv4/UDP frames (pcap), the same for the same seed.\n"
	"\n";

static const char usage_check[] =
	"usage: xkv-trace check [options] REQUESTS.pcap REPLIES.pcapng\n"
	"Checks that each request (UDP to port P) got exactly one reply (UDP from port P,\n"
	"all pieces) with a status its op can have, and, with xkv-lincheck, that the\n"
	"replies are linearizable, timed by the capture of REPLIES: a request from when\n"
	"it was seen leaving, to its reply. REPLIES is best a capture of both directions\n"
	"on the client (xkv-trace record); one may be given twice.\n"
	"Exit 0: all right; 1: a reply missing, duplicate, unexpected or wrong, or not\n"
	"linearizable; 2: error, or a capture that lost frames.\n"
	"\n";

static const char usage_record[] =
	"usage: xkv-trace record --iface IF --out FILE [options]\n"
	"Captures UDP to and from port P on IF until the count or the time is reached, or\n"
	"SIGINT or SIGTERM, and says how many frames it wrote.\n"
	"\n";

#define HELP_OPT {"help", 'h', NULL, "show this help"}

enum {
	GEN_WORKLOAD,
	GEN_COUNT,
	GEN_OUT,
	GEN_SEED,
	GEN_SRC,
	GEN_DST,
	GEN_SRC_MAC,
	GEN_DST_MAC,
	GEN_PPS,
	GEN_HELP,
};

static const struct xkv_opt gen_options[] = {
	[GEN_WORKLOAD] = {"workload", 'w', "SPEC",
			  "keys=1000,key=16,get=0.9,put=0.1,del=0,value=64,zipf=0 (these are "
			  "the defaults; value=MIN-MAX draws sizes uniformly; a value over one "
			  "datagram goes in pieces)"},
	[GEN_COUNT] = {"count", 'n', "N", "requests (a PUT in pieces counts once)"},
	[GEN_OUT] = {"out", 'o', "FILE", "the pcap file to write"},
	[GEN_SEED] = {"seed", 's', "S", "(1)"},
	[GEN_SRC] = {"src", 0, "IP:PORT", "the client (10.0.0.2:40000)"},
	[GEN_DST] = {"dst", 0, "IP:PORT", "the server (10.0.0.1:7411)"},
	[GEN_SRC_MAC] = {"src-mac", 0, "MAC", "(02:00:00:00:00:02)"},
	[GEN_DST_MAC] = {"dst-mac", 0, "MAC", "(02:00:00:00:00:01)"},
	[GEN_PPS] = {"pps", 0, "N", "frames per second the timestamps say (10000)"},
	[GEN_HELP] = HELP_OPT,
};

enum { CHECK_PORT, CHECK_LINCHECK, CHECK_TIMEOUT, CHECK_HISTORY, CHECK_HELP };

static const struct xkv_opt check_options[] = {
	[CHECK_PORT] = {"port", 'p', "P", "the server's UDP port (7411)"},
	[CHECK_LINCHECK] = {"lincheck", 0, "PATH", "the checker (xkv-lincheck beside xkv-trace)"},
	[CHECK_TIMEOUT] = {"timeout", 't', "S",
			   "the checker gives up after S seconds and says unknown: exit 2 (60)"},
	[CHECK_HISTORY] = {"history", 0, "FILE",
			   "keep the history there (else a temporary file, kept only when it "
			   "is not linearizable)"},
	[CHECK_HELP] = HELP_OPT,
};

enum { RECORD_IFACE, RECORD_OUT, RECORD_PORT, RECORD_COUNT, RECORD_SECONDS, RECORD_HELP };

static const struct xkv_opt record_options[] = {
	[RECORD_IFACE] = {"iface", 'i', "IF", "the interface (Ethernet)"},
	[RECORD_OUT] = {"out", 'o', "FILE", "the capture to write (pcapng)"},
	[RECORD_PORT] = {"port", 'p', "P", "the server's UDP port (7411)"},
	[RECORD_COUNT] = {"count", 'c', "N", "stop after N frames"},
	[RECORD_SECONDS] = {"seconds", 't', "S", "stop after S seconds"},
	[RECORD_HELP] = HELP_OPT,
};

/* A command's --help: what it does, then its options. */
static int print_usage(const char *synopsis, const struct xkv_opt *options, unsigned n)
{
	fputs(synopsis, stdout);
	xkv_opts_usage(stdout, options, n);
	return 0;
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("xkv-trace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (--help for usage)\n", stderr);
	return EXIT_USAGE;
}

/* The current option's "PORT" into *port, network order. */
static int take_port(struct xkv_opts *p, uint16_t *port)
{
	uint32_t v;
	int err = xkv_opts_u32(p, 1, UINT16_MAX, &v);

	if (!err)
		*port = htons((uint16_t)v);
	return err;
}

/* "10.0.0.2:40000" */
static int parse_ip_port(const char *s, struct trace_endpoint *ep)
{
	const char *colon = strrchr(s, ':');
	char ip[INET_ADDRSTRLEN];
	uint32_t port;

	if (!colon || (size_t)(colon - s) >= sizeof(ip) ||
	    xkv_parse_u32(colon + 1, 1, UINT16_MAX, &port))
		return -EINVAL;
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = 0;
	if (inet_pton(AF_INET, ip, ep->ip) != 1)
		return -EINVAL;
	ep->port = htons((uint16_t)port);
	return 0;
}

/* "02:00:00:00:00:01" */
static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int end = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &end) != 6 ||
	    end != 17 || s[end])
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int cmd_gen(int argc, char **argv)
{
	struct trace_gen_opts o = {
		.seed = 1,
		.pps = 10000,
		.src = {.mac = {2, 0, 0, 0, 0, 2}, .ip = {10, 0, 0, 2}, .port = htons(40000)},
		.dst = {.mac = {2, 0, 0, 0, 0, 1}, .ip = {10, 0, 0, 1}, .port = htons(7411)},
	};
	const char *spec = "", *out = NULL;
	struct trace_gen_stats stats;
	struct trace_pcap_out file;
	char why[WHY_MAX];
	struct xkv_opts p;
	int opt, ret;

	ret = xkv_opts_init(&p, gen_options, XKV_OPTS_COUNT(gen_options), 0);
	while (!ret && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case GEN_WORKLOAD:
			spec = p.arg;
			break;
		case GEN_COUNT:
			ret = xkv_opts_u64(&p, 1, UINT32_MAX - 1, &o.count);
			break;
		case GEN_OUT:
			out = p.arg;
			break;
		case GEN_SEED:
			ret = xkv_opts_u64(&p, 0, UINT64_MAX, &o.seed);
			break;
		case GEN_SRC:
		case GEN_DST:
			if (parse_ip_port(p.arg, opt == GEN_SRC ? &o.src : &o.dst))
				ret = xkv_opts_bad_value(&p, "IPv4:PORT");
			break;
		case GEN_SRC_MAC:
		case GEN_DST_MAC:
			if (parse_mac(p.arg, opt == GEN_SRC_MAC ? o.src.mac : o.dst.mac))
				ret = xkv_opts_bad_value(&p, "a MAC such as 02:00:00:00:00:01");
			break;
		case GEN_PPS:
			ret = xkv_opts_u32(&p, 1, 1000000000, &o.pps);
			break;
		case GEN_HELP:
			return print_usage(usage_gen, gen_options, XKV_OPTS_COUNT(gen_options));
		default:
			ret = opt;
		}
	}
	if (ret)
		return usage_error("gen: %s", p.why);
	if (optind != argc)
		return usage_error("gen: unexpected argument \"%s\"", argv[optind]);
	if (!o.count || !out)
		return usage_error("gen: --count and --out are required");
	if (trace_spec_parse(spec, &o.spec, why, sizeof(why)))
		return usage_error("--workload: %s", why);

	if (trace_pcap_create(&file, out, NULL, why, sizeof(why))) {
		fprintf(stderr, "xkv-trace: %s\n", why); /* names the file */
		return EXIT_USAGE;
	}
	ret = trace_gen(&o, trace_pcap_write_at, &file, &stats);
	if (trace_pcap_close(&file) && !ret)
		ret = -EIO;
	if (ret) {
		fprintf(stderr, "xkv-trace: writing %s failed: %s\n", out, strerror(-ret));
		return EXIT_USAGE;
	}
	printf("wrote %llu requests (%llu GET, %llu PUT of which %llu in pieces, %llu DELETE) "
	       "in %llu frames to %s\n",
	       (unsigned long long)o.count, (unsigned long long)stats.requests[XKV_OP_GET],
	       (unsigned long long)stats.requests[XKV_OP_PUT], (unsigned long long)stats.split_puts,
	       (unsigned long long)stats.requests[XKV_OP_DELETE], (unsigned long long)stats.frames,
	       out);
	return 0;
}

/* One pass of check over a capture: the requests, or the replies. */
struct check_pass {
	struct trace_check *check;
	const char *path;
	uint16_t port; /* the server's, network order */
	bool replies;
};

/* The address a frame goes to, as the check names clients. */
static void dest_peer(const struct xkv_route *r, struct xkv_peer *peer)
{
	struct xkv_route back = *r;

	memcpy(back.ip_src, r->ip_dst, sizeof(back.ip_src));
	back.port_src = r->port_dst;
	xkv_route_peer(&back, peer);
}

static int check_frame(void *ctx, uint64_t frame, uint64_t ns, const uint8_t *data, uint32_t len)
{
	struct check_pass *pass = ctx;
	struct xkv_peer client;
	uint32_t off, plen;
	struct xkv_route r;
	int ret;

	/* anything but UDP to (requests) or from (replies) the server's port is not ours */
	if (xkv_frame_parse(data, len, &r, &off, &plen))
		return 0;
	if (pass->replies) {
		if (r.port_dst == pass->port) { /* a request leaving: its invocation */
			xkv_route_peer(&r, &client);
			trace_check_sent(pass->check, &client, ns, data + off, plen);
			return 0;
		}
		if (r.port_src != pass->port)
			return 0;
		dest_peer(&r, &client);
		return trace_check_reply(pass->check, &client, frame, ns, data + off, plen);
	}
	if (r.port_dst != pass->port)
		return 0;
	xkv_route_peer(&r, &client);
	ret = trace_check_request(pass->check, &client, frame, data + off, plen);
	if (ret == -EEXIST)
		fprintf(stderr,
			"xkv-trace: %s: frame %llu: the client reuses a request id; check needs "
			"ids unique per client\n",
			pass->path, (unsigned long long)frame);
	return ret == -ENOMSG ? 0 : ret;
}

/*
 * A capture that lost frames cannot be judged: a lost reply would look missing, a
 * lost request unexpected. Returns 0 when path may be checked (a note when it
 * cannot say), else prints why and returns EXIT_USAGE.
 */
static int capture_complete(const char *path, bool replies)
{
	uint64_t dropped;
	int ret = trace_capture_drops(path, &dropped);

	if (!ret && dropped) {
		fprintf(stderr, "xkv-trace: %s: the capture lost %llu frames (isb_ifdrop): it "
				"cannot be checked\n", path, (unsigned long long)dropped);
		return EXIT_USAGE;
	}
	/* a generated requests file is no capture: only the replies' silence is news */
	if (ret == -ENODATA && replies)
		printf("note: %s does not say whether it lost frames (classic pcap, or pcapng "
		       "without isb_ifdrop): a missing reply may be one the capture lost\n", path);
	return 0; /* a file that cannot be read says so when it is read */
}

/* xkv-lincheck beside this program: /proc/self/exe's directory. */
static int lincheck_beside(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	char *slash;

	if (n < 0)
		return -errno;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) + sizeof("/xkv-lincheck") > len)
		return -ENAMETOOLONG;
	strcpy(slash, "/xkv-lincheck");
	return 0;
}

/*
 * Runs the checker on history, its report on our stdout. Returns its exit status,
 * or -errno when it could not run or did not exit (said on stderr).
 */
static int lincheck(const char *exe, const char *timeout, const char *history)
{
	char *const argv[] = {(char *)exe, "--timeout", (char *)timeout, (char *)history, NULL};
	int status, ret;
	pid_t pid;

	fflush(stdout);
	ret = posix_spawn(&pid, exe, NULL, NULL, argv, environ);
	if (!ret && waitpid(pid, &status, 0) < 0)
		ret = errno;
	if (ret) {
		fprintf(stderr, "xkv-trace: check: running %s: %s\n", exe, strerror(ret));
		return -ret;
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "xkv-trace: check: %s: %s\n", exe, strsignal(WTERMSIG(status)));
		return -EINTR;
	}
	return WEXITSTATUS(status);
}

static int cmd_check(int argc, char **argv)
{
	struct check_pass pass = {.port = htons(7411)};
	char why[WHY_MAX], exe[PATH_MAX], tmp[] = "/tmp/xkv-check.XXXXXX";
	const char *history = NULL, *timeout = "60";
	struct trace_check_report report;
	bool structure_ok;
	struct xkv_opts p;
	int opt, ret;

	exe[0] = 0;
	ret = xkv_opts_init(&p, check_options, XKV_OPTS_COUNT(check_options), 0);
	while (!ret && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case CHECK_PORT:
			ret = take_port(&p, &pass.port);
			break;
		case CHECK_LINCHECK:
			snprintf(exe, sizeof(exe), "%s", p.arg);
			break;
		case CHECK_TIMEOUT:
			timeout = p.arg;
			ret = xkv_opts_double(&p, 0.001, 1e9, &(double){0});
			break;
		case CHECK_HISTORY:
			history = p.arg;
			break;
		case CHECK_HELP:
			return print_usage(usage_check, check_options,
					   XKV_OPTS_COUNT(check_options));
		default:
			ret = opt;
		}
	}
	if (ret)
		return usage_error("check: %s", p.why);
	if (argc - optind != 2)
		return usage_error("check: give a requests capture and a replies capture");
	if (!exe[0] && lincheck_beside(exe, sizeof(exe)))
		return usage_error("check: cannot find xkv-lincheck: give --lincheck PATH");
	if (access(exe, X_OK))
		return usage_error("check: %s: %s (--lincheck PATH)", exe, strerror(errno));
	for (int i = 0; i < 2; i++)
		if (capture_complete(argv[optind + i], i == 1))
			return EXIT_USAGE;

	pass.check = trace_check_create();
	if (!pass.check) {
		fprintf(stderr, "xkv-trace: check: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++) {
		pass.path = argv[optind + i];
		pass.replies = i == 1;
		why[0] = 0;
		ret = trace_pcap_each(pass.path, check_frame, &pass, why, sizeof(why));
		if (ret) {
			/* -EEXIST was explained where it was found; why names the file */
			if (why[0])
				fprintf(stderr, "xkv-trace: %s\n", why);
			else if (ret == -ENOBUFS)
				fprintf(stderr,
					"xkv-trace: %s: too many values in pieces (over %d) are "
					"incomplete at once; the check gives up\n",
					pass.path, TRACE_PIECED_MAX);
			else if (ret != -EEXIST)
				fprintf(stderr, "xkv-trace: %s: %s\n", pass.path, strerror(-ret));
			trace_check_destroy(pass.check);
			return EXIT_USAGE;
		}
	}
	if (!history) {
		int fd = mkstemp(tmp);

		if (fd < 0) {
			fprintf(stderr, "xkv-trace: check: %s: %s\n", tmp, strerror(errno));
			trace_check_destroy(pass.check);
			return EXIT_USAGE;
		}
		close(fd);
	}
	ret = trace_check_finish(pass.check, history ?: tmp, &report);
	trace_check_destroy(pass.check);
	if (ret) {
		fprintf(stderr, "xkv-trace: check: writing %s: %s\n", history ?: tmp,
			strerror(-ret));
		goto out_unlink;
	}
	/* a check of nothing passes, which is no news: most likely the wrong port */
	if (!report.requests) {
		fprintf(stderr, "xkv-trace: %s: no requests to UDP port %u\n", argv[optind],
			ntohs(pass.port));
		ret = -ENOMSG;
		goto out_unlink;
	}
	trace_check_print(&report, stdout);
	structure_ok = trace_check_passed(&report);
	printf("values: %s %s\n", exe, history ?: tmp);
	ret = lincheck(exe, timeout, history ?: tmp);
	if (ret < 0 || ret > EXIT_FAILED) {
		printf("UNKNOWN: the history could not be judged (kept in %s)\n", history ?: tmp);
		/* a problem found already is an answer: undecided only when nothing else is */
		if (structure_ok)
			return EXIT_USAGE;
		printf("FAIL\n");
		return EXIT_FAILED;
	}
	if (ret == EXIT_FAILED && !history)
		printf("the history is kept in %s\n", tmp);
	printf("%s\n", structure_ok && !ret ? "PASS" : "FAIL");
	if (ret == EXIT_FAILED)
		return EXIT_FAILED;
	ret = structure_ok ? 0 : EXIT_FAILED;
	if (!history)
		unlink(tmp);
	return ret;

out_unlink:
	if (!history)
		unlink(tmp);
	return EXIT_USAGE;
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int cmd_record(int argc, char **argv)
{
	struct trace_record_opts o = {.port = 7411};
	/* no SA_RESTART: a signal must end the wait in the capture at once */
	struct sigaction sa = {.sa_handler = on_stop};
	struct trace_record_stats stats;
	char why[WHY_MAX];
	struct xkv_opts p;
	uint32_t port;
	int opt, ret;

	ret = xkv_opts_init(&p, record_options, XKV_OPTS_COUNT(record_options), 0);
	while (!ret && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case RECORD_IFACE:
			o.iface = p.arg;
			break;
		case RECORD_OUT:
			o.out = p.arg;
			break;
		case RECORD_PORT:
			ret = xkv_opts_u32(&p, 1, UINT16_MAX, &port);
			if (!ret)
				o.port = (uint16_t)port;
			break;
		case RECORD_COUNT:
			ret = xkv_opts_u64(&p, 1, UINT64_MAX, &o.count);
			break;
		case RECORD_SECONDS:
			ret = xkv_opts_double(&p, 0.001, 1e9, &o.seconds);
			break;
		case RECORD_HELP:
			return print_usage(usage_record, record_options,
					   XKV_OPTS_COUNT(record_options));
		default:
			ret = opt;
		}
	}
	if (ret)
		return usage_error("record: %s", p.why);
	if (optind != argc)
		return usage_error("record: unexpected argument \"%s\"", argv[optind]);
	if (!o.iface || !o.out)
		return usage_error("record: --iface and --out are required");

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = trace_record(&o, &stop_requested, stderr, &stats, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "xkv-trace: record on %s: %s\n", o.iface, why);
		return EXIT_USAGE;
	}
	fprintf(stderr, "captured %llu frames to %s (%u dropped by the kernel)\n",
		(unsigned long long)stats.captured, o.out, stats.dropped);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} commands[] = {{"gen", cmd_gen}, {"check", cmd_check}, {"record", cmd_record}};

	if (argc < 2)
		return usage_error("a command is required: gen, check or record");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_main, stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return usage_error("unknown command \"%s\"", argv[1]);
}
