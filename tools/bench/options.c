// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "afxdp.h"
#include "loop.h"
#include "options.h"
#include "util/opts.h"

#define THREADS_MAX	 256
#define QUEUE_MAX	 1023 /* the highest rx queue --queue and --queues reach */
#define CLOSED_DEPTH	 16
#define OPEN_DEPTH	 1024 /* open loop: the most outstanding per thread */
#define SWEEP_START	 1000 /* requests per second of a sweep's first step */
#define SWEEP_MAX	 1e7
#define SWEEP_PERCENTILE 99
#define SWEEP_STEP_S	 1 /* a sweep step's length, unless --duration */
#define SWEEP_RETRIES	 1 /* a rate fails after two misses in a row */
#define STEP_SECONDS	 5 /* a --large-pct-steps step's length, unless --step-seconds */

enum {
	OPT_SERVER,
	OPT_PROTOCOL,
	OPT_TRANSPORT,
	OPT_IFACE,
	OPT_QUEUE,
	OPT_QUEUES,
	OPT_THREADS,
	OPT_DEPTH,
	OPT_RATE,
	OPT_DURATION,
	OPT_SWEEP,
	OPT_SLO_US,
	OPT_SLO_MULT,
	OPT_SLO_PCT,
	OPT_SWEEP_MAX,
	OPT_SWEEP_RETRIES,
	OPT_CSV,
	OPT_INTERVAL_CSV,
	OPT_KEYS,
	OPT_WARMUP_KEYS,
	OPT_NO_LOAD,
	OPT_GET_RATIO,
	OPT_KEY_SIZE,
	OPT_VALUE_SIZE,
	OPT_VALUE_PROFILE,
	OPT_LARGE_PCT,
	OPT_LARGE_SIZE,
	OPT_LARGE_KEYS,
	OPT_LARGE_PCT_STEPS,
	OPT_STEP_SECONDS,
	OPT_ZIPF,
	OPT_SHUFFLE,
	OPT_HOT_IN,
	OPT_SEED,
	OPT_TIMEOUT_MS,
	OPT_LABEL,
	OPT_JSON,
	OPT_HELP,
};

static const struct xkv_opt options[] = {
	[OPT_SERVER] = {"server", 's', "SERVERS",
			"the server, HOST[:PORT] (port 7411 by default), or a list the keys are "
			"spread over by ketama as twemproxy spreads them (xkv-cli's form; udp)"},
	[OPT_PROTOCOL] = {"protocol", 0, "NAME",
			  "what the server speaks (xkv): xkv; xkv-dir, its version 3, through a "
			  "coherence directory; memcached, its UDP frame and the ASCII protocol; "
			  "memcached-binary, its UDP frame and the binary protocol"},
	[OPT_TRANSPORT] = {"transport", 0, "udp|xdp",
			   "kernel UDP sockets, or AF_XDP sockets on --iface (udp)"},
	[OPT_IFACE] = {"iface", 0, "IF", "xdp: the client interface (an XDP program is attached)"},
	[OPT_QUEUE] = {"queue", 0, "Q",
		       "xdp: the rx queue the sockets bind to, the first of --queues (0)"},
	[OPT_QUEUES] = {"queues", 0, "N",
			"xdp: spread the threads over rx queues Q..Q+N-1, thread t on Q + t % N, "
			"a UMEM each; at least N threads (1)"},
	[OPT_THREADS] = {"threads", 't', "N", "threads, one socket each (1; xdp: at most 16)"},
	[OPT_DEPTH] = {"depth", 'd', "D",
		       "closed loop: requests outstanding per thread (16); open loop: the most "
		       "outstanding per thread (1024)"},
	[OPT_RATE] = {"rate", 'r', "R", "open loop: R requests per second in all, R/threads each"},
	[OPT_DURATION] = {"duration", 'D', "S", "seconds measured (5; a sweep: per step, 1)"},
	[OPT_SWEEP] = {"sweep", 0, NULL,
		       "find the highest --rate whose p99 meets the SLO, starting at --rate "
		       "(1000); a line per step on stderr"},
	[OPT_SLO_US] = {"slo-us", 0, "X", "sweep: p99 SLO in microseconds, or"},
	[OPT_SLO_MULT] = {"slo-mult", 0, "M",
			  "sweep: p99 SLO as M x the first step's mean latency"},
	[OPT_SLO_PCT] = {"slo-percentile", 0, "P", "sweep: the percentile the SLO bounds (99)"},
	[OPT_SWEEP_MAX] = {"sweep-max", 0, "R", "sweep: highest rate tried (10000000)"},
	[OPT_SWEEP_RETRIES] = {"sweep-retries", 0, "N",
			       "sweep: steps run again at a rate that missed the SLO before it "
			       "counts as failed (1)"},
	[OPT_CSV] = {"csv", 0, "FILE", "sweep: every step as CSV (plot_latency.py reads it)"},
	[OPT_INTERVAL_CSV] = {"interval-csv", 0, "FILE",
			      "not a sweep: every second of the run as a CSV row (ops/s, "
			      "latencies of all, small and large requests, lost; at most 3600 "
			      "s)"},
	[OPT_KEYS] = {"keys", 'k', "K", "key space (100000)"},
	[OPT_WARMUP_KEYS] = {"warmup-keys", 0, "N",
			     "PUT the first N keys before measuring (all K)"},
	[OPT_NO_LOAD] = {"no-load", 0, NULL, "PUT nothing before measuring"},
	[OPT_GET_RATIO] = {"get-ratio", 0, "R", "fraction of GETs, the rest PUTs (0.95)"},
	[OPT_KEY_SIZE] = {"key-size", 0, "B", "bytes per key: \"k\" + zero-padded index (16)"},
	[OPT_VALUE_SIZE] = {"value-size", 0, "B",
			    "bytes per value (64); over one datagram it goes in pieces (xkv)"},
	[OPT_VALUE_PROFILE] = {"value-profile", 0, "P",
			       "value sizes: fixed (--value-size), bimodal (small of "
			       "--value-size, large of --large-size) or etc (Minos's trimodal ETC: "
			       "tiny 1-13 B, small 14-1400 B, large 1500 B to --large-size) "
			       "(fixed)"},
	[OPT_LARGE_PCT] = {"large-pct", 0, "P",
			   "bimodal, etc: percent of requests for large values (0.125)"},
	[OPT_LARGE_SIZE] = {"large-size", 0, "B",
			    "bimodal: a large value's bytes; etc: the largest (512000)"},
	[OPT_LARGE_KEYS] = {"large-keys", 0, "N",
			    "bimodal, etc: keys holding large values, the last ones (Minos's "
			    "share, 10 K in 16 M, at least 1)"},
	[OPT_LARGE_PCT_STEPS] = {"large-pct-steps", 0, "P,P,...",
				 "bimodal, etc: --large-pct changes over the run, each P for "
				 "--step-seconds; the run lasts them all (not a sweep)"},
	[OPT_STEP_SECONDS] = {"step-seconds", 0, "S", "large-pct-steps: seconds of each step (5)"},
	[OPT_ZIPF] = {"zipf", 0, "GAMMA", "key popularity exponent, 0 for uniform (0)"},
	[OPT_SHUFFLE] = {"shuffle", 0, "S",
			 "every S seconds the zipf ranks move to other keys (a rotation by an "
			 "offset drawn afresh), the hot set with them; 0: never (0)"},
	[OPT_HOT_IN] = {"hot-in", 0, "S",
			"after S seconds the coldest key becomes the hottest at once, as the "
			"hottest goes cold; 0: never (0)"},
	[OPT_SEED] = {"seed", 0, "N", "fixes every thread's requests and schedule (1)"},
	[OPT_TIMEOUT_MS] = {"timeout-ms", 0, "MS",
			    "a request without a reply by then is lost (100)"},
	[OPT_LABEL] = {"label", 0, "NAME", "names the run in the output (xkv-bench)"},
	[OPT_JSON] = {"json", 0, NULL, "one JSON object on stdout instead of a table"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

void bench_options_usage(FILE *f)
{
	fputs(
	    "usage: xkv-bench --server SERVERS [options]\n"
	    "Load on an xkv server: each thread first PUTs its share of the keys (not measured),\n"
	    "then runs the GET/PUT mix in a closed loop (--depth outstanding), an open loop\n"
	    "(--rate, Poisson arrivals), or a sweep of open-loop steps (--sweep).\n"
	    "\n",
	    f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
	fputs("\n"
	      "JSON fields: label server transport threads depth rate duration_s seed timeout_ms\n"
	      "keys key_size value_size value_profile large_pct (with --large-pct-steps, the\n"
	      "largest) large_size large_keys get_ratio zipf shuffle_s hot_in_s; xdp {iface\n"
	      "queue mode redirected wrong_queue no_socket rx_dropped rx_ring_full fill_empty\n"
	      "queues [{queue sent received}]} with --transport xdp; load {keys seconds ok lost\n"
	      "errors};\n"
	      "all, get, put and, with a bimodal or etc profile, each size class that had\n"
	      "requests (tiny <= 13 B, small <= 1400 B, large) {ops ops_per_s p50_us p90_us\n"
	      "p99_us p999_us mean_us max_us misses errors lost};\n"
	      "open_loop {scheduled_per_s send_lag_p50_us send_lag_p99_us\n"
	      "send_lag_max_us unsent behind_ms slot_waits} with --rate; late invalid\n"
	      "validations (GETs asked again with the server's token, docs/PROTOCOL.md).\n"
	      "A sweep: the run fields, then sweep slo_us slo_percentile service_us retries\n"
	      "rate_found bracketed steps [{offered_per_s scheduled_per_s achieved_per_s p50_us\n"
	      "p99_us tail_us mean_us send_lag_p99_us lost errors unsent meets_slo retry}].\n"
	      "--interval-csv columns: second ops_per_s p50_us p99_us p99_small_us (not large)\n"
	      "p99_large_us lost large_pct unix_s (the second's start); a latency is empty when\n"
	      "no such request was answered in that second.\n"
	      "Exit status: 0 measured, 1 the run failed or got no reply, 2 bad options.\n",
	      f);
}

__attribute__((format(printf, 3, 4))) static int refuse(char *why, size_t why_len, const char *fmt,
							...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* What the parse needs beyond the options themselves: which were given. */
struct given {
	bool depth, duration, warmup_keys, no_load, step_seconds, queues;
	const char *large_pct_steps;
	double step_s;
};

/* One option's argument into o; 0, or -EINVAL or -ERANGE with p->why written. */
static int take_option(struct xkv_opts *p, int opt, struct bench_opts *o, struct given *given)
{
	struct workload_config *w = &o->workload;

	switch (opt) {
	case OPT_SERVER:
		o->server = p->arg;
		return 0;
	case OPT_PROTOCOL:
		o->proto = bench_proto_find(p->arg);
		return o->proto ? 0
				: xkv_opts_bad_value(p, "xkv, xkv-dir, memcached or memcached-binary");
	case OPT_TRANSPORT:
		if (strcmp(p->arg, "udp") && strcmp(p->arg, "xdp"))
			return xkv_opts_bad_value(p, "udp or xdp");
		o->transport = p->arg[0] == 'x' ? TRANSPORT_XDP : TRANSPORT_UDP;
		return 0;
	case OPT_IFACE:
		o->iface = p->arg;
		return 0;
	case OPT_QUEUE:
		return xkv_opts_u32(p, 0, QUEUE_MAX, &o->queue);
	case OPT_QUEUES:
		given->queues = true;
		return xkv_opts_u32(p, 1, AFXDP_QUEUES_MAX, &o->queues);
	case OPT_THREADS:
		return xkv_opts_u32(p, 1, THREADS_MAX, &o->threads);
	case OPT_DEPTH:
		given->depth = true;
		return xkv_opts_u32(p, 1, LOOP_DEPTH_MAX, &o->depth);
	case OPT_RATE:
		return xkv_opts_double(p, 1, 1e9, &o->rate);
	case OPT_DURATION:
		given->duration = true;
		return xkv_opts_double(p, 0.001, 86400, &o->duration_s);
	case OPT_SWEEP:
		o->sweep = true;
		return 0;
	case OPT_SLO_US:
		return xkv_opts_double(p, 0.001, 1e9, &o->slo_us);
	case OPT_SLO_MULT:
		return xkv_opts_double(p, 1, 1e6, &o->slo_mult);
	case OPT_SLO_PCT:
		return xkv_opts_double(p, 1, 99.999, &o->slo_pct);
	case OPT_SWEEP_MAX:
		return xkv_opts_double(p, 1, 1e9, &o->sweep_max);
	case OPT_SWEEP_RETRIES:
		return xkv_opts_u32(p, 0, 5, &o->sweep_retries);
	case OPT_CSV:
		o->csv = p->arg;
		return 0;
	case OPT_KEYS:
		return xkv_opts_u32(p, 1, WORKLOAD_KEYS_MAX, &w->keys);
	case OPT_WARMUP_KEYS:
		given->warmup_keys = true;
		return xkv_opts_u32(p, 0, WORKLOAD_KEYS_MAX, &o->warmup_keys);
	case OPT_NO_LOAD:
		given->no_load = true;
		return 0;
	case OPT_GET_RATIO:
		return xkv_opts_double(p, 0, 1, &w->get_ratio);
	case OPT_KEY_SIZE:
		return xkv_opts_u32(p, XKV_KEY_MIN, XKV_KEY_MAX, &w->key_size);
	case OPT_VALUE_SIZE:
		return xkv_opts_u32(p, 0, XKV_VALUE_MAX, &w->value_size);
	case OPT_VALUE_PROFILE:
		for (enum workload_profile v = WORKLOAD_FIXED; v <= WORKLOAD_ETC; v++) {
			if (!strcmp(p->arg, workload_profile_name(v))) {
				w->profile = v;
				return 0;
			}
		}
		return xkv_opts_bad_value(p, "fixed, bimodal or etc");
	case OPT_LARGE_PCT:
		return xkv_opts_double(p, 0, 99.999, &w->large_pct);
	case OPT_LARGE_SIZE:
		return xkv_opts_u32(p, 1, XKV_VALUE_MAX, &w->large_size);
	case OPT_LARGE_KEYS:
		return xkv_opts_u32(p, 1, WORKLOAD_KEYS_MAX, &w->large_keys);
	case OPT_LARGE_PCT_STEPS:
		given->large_pct_steps = p->arg;
		return 0;
	case OPT_STEP_SECONDS:
		given->step_seconds = true;
		return xkv_opts_double(p, 0.001, 86400, &given->step_s);
	case OPT_INTERVAL_CSV:
		o->interval_csv = p->arg;
		return 0;
	case OPT_ZIPF:
		return xkv_opts_double(p, 0, 100, &w->zipf);
	case OPT_SHUFFLE:
		return xkv_opts_double(p, 0, WORKLOAD_MOVE_MAX_S, &w->shuffle_s);
	case OPT_HOT_IN:
		return xkv_opts_double(p, 0, WORKLOAD_MOVE_MAX_S, &w->hot_in_s);
	case OPT_SEED:
		return xkv_opts_u64(p, 0, UINT64_MAX, &o->seed);
	case OPT_TIMEOUT_MS:
		return xkv_opts_u64(p, 1, 60000, &o->timeout_ms);
	case OPT_LABEL:
		o->label = p->arg;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	}
	return -EINVAL;
}

/* What --sweep, --transport and --rate imply, and what they refuse. */
static int check_modes(struct bench_opts *o, const struct given *given, char *why, size_t len)
{
	if (o->transport == TRANSPORT_XDP && !o->iface)
		return refuse(why, len, "--transport xdp needs --iface");
	if (o->transport != TRANSPORT_XDP && o->iface)
		return refuse(why, len, "--iface is for --transport xdp");
	if (o->transport == TRANSPORT_XDP && o->threads > AFXDP_THREADS_MAX)
		return refuse(why, len, "--transport xdp: at most %d threads", AFXDP_THREADS_MAX);
	if (o->transport != TRANSPORT_XDP && given->queues)
		return refuse(why, len, "--queues is for --transport xdp");
	if (o->threads < o->queues)
		return refuse(why, len, "--queues %u needs at least %u threads, one per queue",
			      o->queues, o->queues);
	if (o->queue + o->queues - 1 > QUEUE_MAX)
		return refuse(why, len, "--queue %u --queues %u: queues above %d", o->queue,
			      o->queues, QUEUE_MAX);
	if (!o->sweep && (o->slo_us || o->slo_mult || o->slo_pct || o->csv || o->sweep_max))
		return refuse(why, len,
			      "--slo-us, --slo-mult, --slo-percentile, --sweep-max and --csv are "
			      "for --sweep");
	if (o->sweep && o->interval_csv)
		return refuse(why, len, "--interval-csv is not for --sweep (--csv is)");
	if (o->interval_csv && ceil(o->duration_s) > INTERVALS_MAX)
		return refuse(why, len, "--interval-csv: a run of at most %d s", INTERVALS_MAX);
	if (o->sweep && !o->slo_us == !o->slo_mult)
		return refuse(why, len, "--sweep needs one of --slo-us and --slo-mult");
	if (o->sweep) {
		if (!o->rate)
			o->rate = SWEEP_START;
		if (!o->sweep_max)
			o->sweep_max = SWEEP_MAX;
		if (!o->slo_pct)
			o->slo_pct = SWEEP_PERCENTILE;
		if (!given->duration)
			o->duration_s = SWEEP_STEP_S;
		if (o->sweep_max < o->rate)
			return refuse(why, len, "--sweep-max %g is below the first rate %g",
				      o->sweep_max, o->rate);
	}
	if (!given->depth)
		o->depth = o->rate > 0 ? OPEN_DEPTH : CLOSED_DEPTH;
	return 0;
}

/*
 * --large-pct-steps: the schedule, the run's length, and --large-pct as its largest
 * step (the large keys and the size checks are those of the largest share).
 */
static int check_schedule(struct bench_opts *o, const struct given *given, char *why, size_t len)
{
	struct workload_config *w = &o->workload;
	double step_s = given->step_seconds ? given->step_s : STEP_SECONDS;

	if (!given->large_pct_steps)
		return given->step_seconds
			   ? refuse(why, len, "--step-seconds is for --large-pct-steps")
			   : 0;
	if (w->profile == WORKLOAD_FIXED)
		return refuse(why, len, "--large-pct-steps: for --value-profile bimodal or etc");
	if (o->sweep)
		return refuse(why, len, "--large-pct-steps: not with --sweep");
	if (given->duration)
		return refuse(why, len,
			      "--large-pct-steps: the run lasts the steps; no --duration");
	if (large_schedule_parse(given->large_pct_steps, (uint64_t)(step_s * 1e9), &o->schedule,
				 why, len))
		return -EINVAL;
	o->duration_s = o->schedule.n * step_s;
	w->large_pct = large_schedule_max(&o->schedule);
	return 0;
}

/* The checks of the workload and its keys' loading. */
static int check_workload(struct bench_opts *o, const struct given *given, char *why, size_t len)
{
	const struct workload_config *w = &o->workload;
	uint32_t value_max;

	if (check_schedule(o, given, why, len))
		return -EINVAL;
	if (given->warmup_keys && given->no_load)
		return refuse(why, len, "--warmup-keys and --no-load contradict each other");
	if (!given->warmup_keys)
		o->warmup_keys = given->no_load ? 0 : w->keys;
	if (o->warmup_keys > w->keys)
		return refuse(why, len, "--warmup-keys %u: more than the %u --keys", o->warmup_keys,
			      w->keys);
	if (o->warmup_keys && o->warmup_keys < w->keys && workload_large_keys(w))
		return refuse(why, len,
			      "--warmup-keys %u: the large values are the last %u keys, and would "
			      "miss; load all keys or none",
			      o->warmup_keys, workload_large_keys(w));
	if (workload_config_check(w, why, len))
		return -EINVAL;
	if (!o->proto->value_max)
		return 0;
	value_max = o->proto->value_max(w->key_size, LOOP_DGRAM_CAP);
	if (workload_value_size_max(w) > value_max)
		return refuse(why, len,
			      "--protocol %s: values of up to %u bytes, but a request or its reply "
			      "then takes more than one datagram: at most %u with %u-byte keys "
			      "(only xkv sends values in pieces)",
			      o->proto->name, workload_value_size_max(w), value_max, w->key_size);
	return 0;
}

int bench_options_parse(int argc, char **argv, struct bench_opts *o, char *why, size_t why_len)
{
	struct given given = {0};
	struct xkv_opts p;
	int opt, err;

	*o = (struct bench_opts){
		.label = "xkv-bench",
		.proto = &bench_proto_xkv,
		.threads = 1,
		.queues = 1,
		.duration_s = 5,
		.seed = 1,
		.timeout_ms = 100,
		.sweep_retries = SWEEP_RETRIES,
		.workload = {.keys = 100000, .key_size = 16, .value_size = 64, .get_ratio = 0.95,
			     .large_pct = 0.125, .large_size = 512000},
	};
	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		if (opt == OPT_HELP)
			return BENCH_HELP;
		err = opt < 0 ? opt : take_option(&p, opt, o, &given);
	}
	if (err)
		return refuse(why, why_len, "%s", p.why);
	if (optind < argc)
		return refuse(why, why_len, "unexpected argument %s", argv[optind]);
	if (!o->server)
		return refuse(why, why_len, "--server SERVERS is required");
	err = check_workload(o, &given, why, why_len);
	return err ? err : check_modes(o, &given, why, why_len);
}
