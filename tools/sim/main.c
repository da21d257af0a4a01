// SPDX-License-Identifier: MIT
/* xkv-sim: the command line over sim_run and sim_search. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xkv/proto.h>

#include "cluster.h"
#include "sim.h"
#include "util/json.h"
#include "util/opts.h"

enum {
	OPT_CORES,
	OPT_POLICY,
	OPT_LOAD,
	OPT_RATE,
	OPT_WRITE_FRAC,
	OPT_ZIPF,
	OPT_ITEMS,
	OPT_PARTITIONS,
	OPT_SERVICE,
	OPT_FIXED_NS,
	OPT_UNIT_NS,
	OPT_K,
	OPT_P_LARGE,
	OPT_SMALL_BYTES,
	OPT_LARGE_BYTES,
	OPT_SIZE_BASE_NS,
	OPT_NS_PER_BYTE,
	OPT_MAX_SIZE,
	OPT_LARGE_PCT,
	OPT_EPOCH_US,
	OPT_CHANNEL_NS,
	OPT_JBSQ,
	OPT_COMP_NS,
	OPT_CLOSE,
	OPT_LOOKAHEAD,
	OPT_SLO,
	OPT_REQUESTS,
	OPT_DURATION,
	OPT_WARMUP,
	OPT_SERVERS,
	OPT_DIR,
	OPT_REPLICATED,
	OPT_WRITE_SERVERS,
	OPT_POPULAR_PPM,
	OPT_HOP_NS,
	OPT_SWEEP,
	OPT_SWEEP_MAX,
	OPT_SWEEP_STEPS,
	OPT_SEED,
	OPT_JSON,
	OPT_HELP,
};

/* Workload, service time, server, measurement: in that order. */
static const struct xkv_opt options[] = {
	[OPT_CORES] = {"cores", 0, "N", "worker cores (64)"},
	[OPT_POLICY] = {"policy", 0, "NAME",
			"erew crew dcrew ideal hkh sho hkhws minos comp xkv (crew)"},
	[OPT_LOAD] = {"load", 0, "RHO", "offered utilisation of all cores, 0..10 (0.5)"},
	[OPT_RATE] = {"rate", 0, "MRPS", "offered rate instead of --load"},
	[OPT_WRITE_FRAC] = {"write-frac", 0, "F", "fraction of writes, 0..1 (0)"},
	[OPT_ZIPF] = {"zipf", 0, "GAMMA", "key popularity exponent, 0 for uniform (0)"},
	[OPT_ITEMS] = {"items", 0, "N", "distinct keys (1600000)"},
	[OPT_PARTITIONS] = {"partitions", 0, "N",
			    "store partitions = hash buckets, owner = partition mod cores "
			    "(1048576)"},
	[OPT_SERVICE] = {"service", 0, "MODEL",
			 "service time: c4 | bimodal | size | exp (c4)\n"
			 "c4: U[400,800] ns + fixed; bimodal: unit, or K units with p-large; "
			 "size: base + ns-per-byte * ETC value size + fixed; exp: exponential "
			 "with mean unit-ns"},
	[OPT_FIXED_NS] = {"fixed-ns", 0, "NS", "network/reply part, c4 and size models (100)"},
	[OPT_UNIT_NS] = {"unit-ns", 0, "NS", "bimodal small request; exp mean (1000)"},
	[OPT_K] = {"K", 0, "K", "bimodal: large / small service time (100)"},
	[OPT_P_LARGE] = {"p-large", 0, "P", "bimodal: fraction of large requests (0.00125)"},
	[OPT_SMALL_BYTES] = {"small-bytes", 0, "BYTES",
			     "bimodal: value size of a small request (64)"},
	[OPT_LARGE_BYTES] = {"large-bytes", 0, "BYTES",
			     "bimodal: value size of a large request (512000)"},
	[OPT_SIZE_BASE_NS] = {"size-base-ns", 0, "NS",
			      "size model: store time of an empty value (500)"},
	[OPT_NS_PER_BYTE] = {"ns-per-byte", 0, "NS", "size model (2)"},
	[OPT_MAX_SIZE] = {"max-size", 0, "BYTES", "size model: values are clamped here (1048576)"},
	[OPT_LARGE_PCT] = {"large-pct", 0, "P",
			       "size model: values above this percentile are large; minos: "
			       "the control loop's target percentile (99)"},
	[OPT_EPOCH_US] = {"epoch-us", 0, "US", "minos: time between two plans (1000000)"},
	[OPT_CHANNEL_NS] = {"channel-ns", 0, "NS", "dispatch and completion channel latency (30)"},
	[OPT_JBSQ] = {"jbsq", 0, "D", "JBSQ bound, the request in service included (2)"},
	[OPT_COMP_NS] = {"comp-ns", 0, "NS", "compaction: time to add a write to a window (100)"},
	[OPT_CLOSE] = {"close", 0, "MODE", "compaction windows close: early or deadline (early)"},
	[OPT_LOOKAHEAD] = {"lookahead", 0, "N",
			       "compaction: queue slots scanned for a matching write (64)"},
	[OPT_SLO] = {"slo", 0, "MULT", "SLO on the 99th percentile, in mean service times (10)"},
	[OPT_REQUESTS] = {"requests", 0, "N", "requests generated, warm-up included (200000)"},
	[OPT_DURATION] = {"duration", 0, "US", "simulated arrival time instead of --requests"},
	[OPT_WARMUP] = {"warmup", 0, "F", "fraction of the first requests left out (0.1)"},
	[OPT_SERVERS] = {"servers", 0, "N",
			 "servers of --cores each behind a coherence directory, 2..32: the "
			 "cluster model, --load over all their cores (1: one server)"},
	[OPT_DIR] = {"dir", 0, "STRATEGY",
		     "cluster: ketama (no directory), round-robin, least-loaded, predict, c3 "
		     "or popularity (round-robin)"},
	[OPT_REPLICATED] = {"replicated", 0, "N",
			    "cluster: the hottest keys the directory holds (ceil(n ln n))"},
	[OPT_WRITE_SERVERS] = {"write-servers", 0, "N",
			       "cluster: a write goes to as many servers as its key has had reads "
			       "per write, up to N (1, as xkv-dir's)"},
	[OPT_POPULAR_PPM] = {"popular-ppm", 0, "PPM",
			     "cluster, popularity: a popular key's share of the requests, "
			     "per million (10)"},
	[OPT_HOP_NS] = {"hop-ns", 0, "NS",
			"cluster: directory to a server, and back, each way (5000)"},
	[OPT_SWEEP] = {"sweep", 0, NULL, "search the highest load whose p99 meets the SLO"},
	[OPT_SWEEP_MAX] = {"sweep-max", 0, "RHO", "upper end of the search (1.0)"},
	[OPT_SWEEP_STEPS] = {"sweep-steps", 0, "N", "bisection probes (8)"},
	[OPT_SEED] = {"seed", 0, "N", "fixes every random draw (1)"},
	[OPT_JSON] = {"json", 0, NULL, "one JSON object on stdout"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

struct cli {
	struct sim_config cfg;
	bool json, sweep;
	double sweep_max;
	unsigned sweep_steps;
};

static void usage(FILE *f)
{
	fputs("Usage: xkv-sim [options]\n"
	      "Simulates one multi-core KV server (docs/SIMULATION.md). Defaults model C-4 "
	      "Sec. 3.\n"
	      "With --servers N, a cluster of N such servers behind a coherence directory.\n"
	      "\n",
	      f);
	xkv_opts_usage(f, options, XKV_OPTS_COUNT(options));
}

static int parse_close(const char *s, enum sim_close *out)
{
	if (!strcmp(s, "early"))
		*out = SIM_CLOSE_EARLY;
	else if (!strcmp(s, "deadline"))
		*out = SIM_CLOSE_DEADLINE;
	else
		return -EINVAL;
	return 0;
}

/*
 * One option's argument into cli, within the ranges sim_config_validate accepts; 0,
 * or -EINVAL or -ERANGE with p->why written.
 */
static int take_option(struct xkv_opts *p, int opt, struct cli *cli)
{
	struct sim_config *c = &cli->cfg;

	switch (opt) {
	case OPT_CORES:
		return xkv_opts_u32(p, 1, SIM_MAX_CORES, &c->cores);
	case OPT_POLICY:
		if (sim_policy_parse(p->arg, &c->policy))
			return xkv_opts_bad_value(p, "erew, crew, dcrew, ideal, hkh, sho, hkhws, "
						     "minos, comp or xkv");
		return 0;
	case OPT_LOAD:
		return xkv_opts_double(p, 1e-6, 10, &c->load);
	case OPT_RATE:
		return xkv_opts_double(p, 0, 1e6, &c->rate_mrps);
	case OPT_WRITE_FRAC:
		return xkv_opts_double(p, 0, 1, &c->write_frac);
	case OPT_ZIPF:
		return xkv_opts_double(p, 0, 10, &c->zipf);
	case OPT_ITEMS:
		return xkv_opts_u32(p, 1, UINT32_MAX, &c->items);
	case OPT_PARTITIONS:
		return xkv_opts_u32(p, 1, UINT32_MAX, &c->partitions);
	case OPT_SERVICE:
		if (sim_service_parse(p->arg, &c->service))
			return xkv_opts_bad_value(p, "c4, bimodal, size or exp");
		return 0;
	case OPT_FIXED_NS:
		return xkv_opts_double(p, 0, 1e9, &c->fixed_ns);
	case OPT_UNIT_NS:
		return xkv_opts_double(p, 1e-3, 1e9, &c->unit_ns);
	case OPT_K:
		return xkv_opts_double(p, 1, 1e6, &c->k);
	case OPT_P_LARGE:
		return xkv_opts_double(p, 0, 1, &c->p_large);
	case OPT_SMALL_BYTES:
		return xkv_opts_u32(p, 0, XKV_VALUE_MAX, &c->small_bytes);
	case OPT_LARGE_BYTES:
		return xkv_opts_u32(p, 0, XKV_VALUE_MAX, &c->large_bytes);
	case OPT_SIZE_BASE_NS:
		return xkv_opts_double(p, 0, 1e9, &c->size_base_ns);
	case OPT_NS_PER_BYTE:
		return xkv_opts_double(p, 0, 1e6, &c->ns_per_byte);
	case OPT_MAX_SIZE:
		return xkv_opts_u32(p, 1, UINT32_MAX, &c->max_size);
	case OPT_LARGE_PCT:
		return xkv_opts_double(p, 0, 100, &c->large_pct);
	case OPT_EPOCH_US:
		return xkv_opts_double(p, 1, 1e7, &c->epoch_us);
	case OPT_CHANNEL_NS:
		return xkv_opts_double(p, 0, 1e9, &c->channel_ns);
	case OPT_JBSQ:
		return xkv_opts_u32(p, 1, UINT32_MAX, &c->jbsq);
	case OPT_COMP_NS:
		return xkv_opts_double(p, 0, 1e9, &c->comp_ns);
	case OPT_CLOSE:
		return parse_close(p->arg, &c->close) ? xkv_opts_bad_value(p, "early or deadline")
						      : 0;
	case OPT_LOOKAHEAD:
		return xkv_opts_u32(p, 0, UINT32_MAX, &c->lookahead);
	case OPT_SLO:
		return xkv_opts_double(p, 1, 1e6, &c->slo_mult);
	case OPT_REQUESTS:
		return xkv_opts_u64(p, 0, UINT64_MAX, &c->requests);
	case OPT_DURATION:
		return xkv_opts_double(p, 0, 1e12, &c->duration_us);
	case OPT_WARMUP:
		return xkv_opts_double(p, 0, 0.9, &c->warmup);
	case OPT_SERVERS:
		return xkv_opts_u32(p, 1, CLUSTER_SERVERS_MAX, &c->servers);
	case OPT_DIR: {
		enum cluster_select sel;

		if (cluster_select_parse(p->arg, &sel))
			return xkv_opts_bad_value(p, "ketama, round-robin, least-loaded, predict, "
						     "c3 or popularity");
		c->dir_select = sel;
		return 0;
	}
	case OPT_REPLICATED:
		return xkv_opts_u32(p, 0, UINT32_MAX, &c->replicated);
	case OPT_WRITE_SERVERS:
		return xkv_opts_u32(p, 1, CLUSTER_SERVERS_MAX, &c->write_servers);
	case OPT_POPULAR_PPM:
		return xkv_opts_double(p, 0, 1e6, &c->popular_ppm);
	case OPT_HOP_NS:
		return xkv_opts_double(p, 0, 1e9, &c->hop_ns);
	case OPT_SWEEP:
		cli->sweep = true;
		return 0;
	case OPT_SWEEP_MAX:
		return xkv_opts_double(p, 1e-6, 10, &cli->sweep_max);
	case OPT_SWEEP_STEPS:
		return xkv_opts_u32(p, 1, SIM_MAX_PROBES, &cli->sweep_steps);
	case OPT_SEED:
		return xkv_opts_u64(p, 0, UINT64_MAX, &c->seed);
	case OPT_JSON:
		cli->json = true;
		return 0;
	}
	return -EINVAL;
}

static void print_config_json(struct xkv_json *w, const struct sim_config *c)
{
	xkv_json_key(w, "config");
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "cores", c->cores);
	xkv_json_string_field(w, "policy", sim_policy_name(c->policy));
	xkv_json_double_field(w, "load", c->load);
	xkv_json_double_field(w, "rate_mrps", c->rate_mrps);
	xkv_json_double_field(w, "write_frac", c->write_frac);
	xkv_json_double_field(w, "zipf", c->zipf);
	xkv_json_uint_field(w, "items", c->items);
	xkv_json_uint_field(w, "partitions", c->partitions);
	xkv_json_string_field(w, "service", sim_service_name(c->service));
	xkv_json_double_field(w, "fixed_ns", c->fixed_ns);
	xkv_json_double_field(w, "unit_ns", c->unit_ns);
	xkv_json_double_field(w, "K", c->k);
	xkv_json_double_field(w, "p_large", c->p_large);
	xkv_json_uint_field(w, "small_bytes", c->small_bytes);
	xkv_json_uint_field(w, "large_bytes", c->large_bytes);
	xkv_json_double_field(w, "size_base_ns", c->size_base_ns);
	xkv_json_double_field(w, "ns_per_byte", c->ns_per_byte);
	xkv_json_uint_field(w, "max_size", c->max_size);
	xkv_json_double_field(w, "large_pct", c->large_pct);
	xkv_json_double_field(w, "epoch_us", c->epoch_us);
	xkv_json_double_field(w, "channel_ns", c->channel_ns);
	xkv_json_uint_field(w, "jbsq", c->jbsq);
	xkv_json_double_field(w, "comp_ns", c->comp_ns);
	xkv_json_string_field(w, "close", c->close == SIM_CLOSE_EARLY ? "early" : "deadline");
	xkv_json_uint_field(w, "lookahead", c->lookahead);
	xkv_json_double_field(w, "slo_mult", c->slo_mult);
	xkv_json_uint_field(w, "requests", c->requests);
	xkv_json_double_field(w, "duration_us", c->duration_us);
	xkv_json_double_field(w, "warmup", c->warmup);
	xkv_json_uint_field(w, "seed", c->seed);
	xkv_json_uint_field(w, "servers", c->servers);
	xkv_json_string_field(w, "dir", cluster_select_name(c->dir_select));
	xkv_json_uint_field(w, "replicated", c->replicated);
	xkv_json_uint_field(w, "write_servers", c->write_servers);
	xkv_json_double_field(w, "popular_ppm", c->popular_ppm);
	xkv_json_double_field(w, "hop_ns", c->hop_ns);
	xkv_json_object_end(w);
}

static void print_results_json(struct xkv_json *w, const char *key, const struct sim_results *r)
{
	xkv_json_key(w, key);
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "requests", r->requests);
	xkv_json_uint_field(w, "measured", r->measured);
	xkv_json_double_field(w, "offered_load", r->offered_load);
	xkv_json_double_field(w, "offered_mrps", r->offered_mrps);
	xkv_json_double_field(w, "throughput_mrps", r->throughput_mrps);
	xkv_json_double_field(w, "mean_service_ns", r->mean_service_ns);
	xkv_json_double_field(w, "slo_ns", r->slo_ns);
	xkv_json_bool_field(w, "meets_slo", r->meets_slo);
	xkv_json_bool_field(w, "stopped_early", r->stopped_early);
	xkv_json_key(w, "latency_ns");
	xkv_json_object_start(w);
	xkv_json_double_field(w, "mean", r->mean_ns);
	xkv_json_double_field(w, "p50", r->p50_ns);
	xkv_json_double_field(w, "p99", r->p99_ns);
	xkv_json_double_field(w, "p999", r->p999_ns);
	xkv_json_double_field(w, "max", r->max_ns);
	if (r->sized) {
		xkv_json_double_field(w, "p99_small", r->p99_small_ns);
		xkv_json_double_field(w, "p99_large", r->p99_large_ns);
	}
	xkv_json_object_end(w);
	xkv_json_double_field(w, "mean_wait_ns", r->mean_wait_ns);
	xkv_json_key(w, "counters");
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "reads_off_owner", r->reads_off_owner);
	xkv_json_uint_field(w, "writes_off_owner", r->writes_off_owner);
	xkv_json_uint_field(w, "writer_conflicts", r->writer_conflicts);
	xkv_json_uint_field(w, "stolen", r->stolen);
	xkv_json_uint_field(w, "class_mismatch", r->class_mismatch);
	xkv_json_uint_field(w, "standby_reads", r->standby_reads);
	xkv_json_uint_field(w, "spins", r->spins);
	xkv_json_uint_field(w, "retries", r->retries);
	xkv_json_uint_field(w, "compacted", r->compacted);
	xkv_json_uint_field(w, "windows", r->windows);
	xkv_json_uint_field(w, "window_max", r->window_max);
	xkv_json_object_end(w);
	xkv_json_double_field(w, "ewt_mean", r->ewt_mean);
	xkv_json_double_field(w, "ewt_max", r->ewt_max);
	xkv_json_uint_field(w, "small_cores", r->small_cores);
	xkv_json_uint_field(w, "large_cores", r->large_cores);
	xkv_json_bool_field(w, "standby", r->standby);
	xkv_json_uint_field(w, "threshold_class", r->threshold_class);
	xkv_json_uint_field(w, "plans", r->plans);
	xkv_json_key(w, "utilization");
	xkv_json_object_start(w);
	xkv_json_double_field(w, "mean", r->util_mean);
	xkv_json_double_field(w, "min", r->util_min);
	xkv_json_double_field(w, "max", r->util_max);
	xkv_json_key(w, r->servers ? "per_server" : "per_core");
	xkv_json_array_start(w);
	for (unsigned i = 0; i < r->cores && i < SIM_MAX_CORES; i++)
		xkv_json_fixed(w, r->util[i], 4);
	xkv_json_array_end(w);
	xkv_json_object_end(w);
	if (r->servers) {
		xkv_json_key(w, "cluster");
		xkv_json_object_start(w);
		xkv_json_uint_field(w, "servers", r->servers);
		xkv_json_uint_field(w, "replicated", r->replicated);
		xkv_json_double_field(w, "replicated_share", r->replicated_share);
		xkv_json_double_field(w, "server_share_max", r->server_share_max);
		xkv_json_object_end(w);
	}
	xkv_json_object_end(w);
}

static void print_results_text(const struct sim_results *r)
{
	printf("offered       load %.3f, %.3f Mrps; %llu requests, %llu measured\n",
	       r->offered_load, r->offered_mrps, (unsigned long long)r->requests,
	       (unsigned long long)r->measured);
	printf("throughput    %.3f Mrps\n", r->throughput_mrps);
	printf("latency (ns)  mean %.0f  p50 %.0f  p99 %.0f  p99.9 %.0f  max %.0f\n",
	       r->mean_ns, r->p50_ns, r->p99_ns, r->p999_ns, r->max_ns);
	if (r->sized)
		printf("by size (ns)  p99 small %.0f  p99 large %.0f\n", r->p99_small_ns,
		       r->p99_large_ns);
	printf("wait (ns)     mean %.0f\n", r->mean_wait_ns);
	printf("SLO           p99 <= %.0f ns: %s%s\n", r->slo_ns, r->meets_slo ? "met" : "missed",
	       r->stopped_early ? " (run stopped once certain)" : "");
	printf("utilisation   mean %.3f  min %.3f  max %.3f\n", r->util_mean, r->util_min,
	       r->util_max);
	if (r->servers) {
		printf("cluster       %u servers; the directory held %u keys, %.1f%% of the "
		       "requests; busiest server's requests / mean %.2f\n",
		       r->servers, r->replicated, 100 * r->replicated_share, r->server_share_max);
		printf("per server   ");
		for (unsigned i = 0; i < r->servers; i++)
			printf("%s %.2f", i && i % 16 == 0 ? "\n             " : "", r->util[i]);
		printf("\n");
		return;
	}
	printf("per core     ");
	for (unsigned i = 0; i < r->cores && i < SIM_MAX_CORES; i++)
		printf("%s %.2f", i && i % 16 == 0 ? "\n             " : "", r->util[i]);
	printf("\ncounters      off-owner reads %llu, writes %llu; writer conflicts %llu; "
	       "stolen %llu;\n              spins %llu, retries %llu; compacted %llu in %llu "
	       "windows (at most %llu);\n              class mismatches %llu; small reads on the "
	       "standby %llu\n",
	       (unsigned long long)r->reads_off_owner, (unsigned long long)r->writes_off_owner,
	       (unsigned long long)r->writer_conflicts, (unsigned long long)r->stolen,
	       (unsigned long long)r->spins, (unsigned long long)r->retries,
	       (unsigned long long)r->compacted, (unsigned long long)r->windows,
	       (unsigned long long)r->window_max, (unsigned long long)r->class_mismatch,
	       (unsigned long long)r->standby_reads);
	if (r->ewt_max > 0)
		printf("EWT entries   mean %.1f  max %.0f\n", r->ewt_mean, r->ewt_max);
	if (r->plans)
		printf("Minos         %u small cores, %u large%s; small up to size class %u (the "
		       "last of %llu plans)\n",
		       r->small_cores, r->large_cores, r->standby ? " (standby, also small)" : "",
		       r->threshold_class, (unsigned long long)r->plans);
}

static int print_search_json(const struct cli *cli, const struct sim_search *s)
{
	struct xkv_json w;

	xkv_json_init(&w, stdout);
	xkv_json_object_start(&w);
	print_config_json(&w, &cli->cfg);
	xkv_json_key(&w, "sweep");
	xkv_json_object_start(&w);
	xkv_json_double_field(&w, "max_load", s->max_load);
	xkv_json_double_field(&w, "max_mrps", s->max_mrps);
	xkv_json_key(&w, "probes");
	xkv_json_array_start(&w);
	for (unsigned i = 0; i < s->probes; i++) {
		xkv_json_object_start(&w);
		xkv_json_double_field(&w, "load", s->probe_load[i]);
		xkv_json_double_field(&w, "p99_ns", s->probe_p99[i]);
		xkv_json_bool_field(&w, "ok", s->probe_ok[i]);
		xkv_json_object_end(&w);
	}
	xkv_json_array_end(&w);
	print_results_json(&w, "at_max", &s->at_max);
	xkv_json_object_end(&w);
	xkv_json_object_end(&w);
	return xkv_json_finish(&w);
}

static void print_search_text(const struct sim_search *s)
{
	printf("highest load meeting the SLO: %.4f (%.3f Mrps)\n", s->max_load, s->max_mrps);
	for (unsigned i = 0; i < s->probes; i++)
		printf("  probe load %.4f  p99 %.0f ns  %s\n", s->probe_load[i], s->probe_p99[i],
		       s->probe_ok[i] ? "ok" : "missed");
	if (s->max_load > 0) {
		printf("at that load:\n");
		print_results_text(&s->at_max);
	}
}

static int print_run_json(const struct cli *cli, const struct sim_results *r)
{
	struct xkv_json w;

	xkv_json_init(&w, stdout);
	xkv_json_object_start(&w);
	print_config_json(&w, &cli->cfg);
	print_results_json(&w, "result", r);
	xkv_json_object_end(&w);
	return xkv_json_finish(&w);
}

static void print_header(const struct sim_config *c)
{
	if (c->servers > 1)
		printf("xkv-sim       cluster of %u servers x %u cores, %s, hops %.0f ns, ",
		       c->servers, c->cores, cluster_select_name(c->dir_select), c->hop_ns);
	else
		printf("xkv-sim       policy %s, %u cores, ", sim_policy_name(c->policy),
		       c->cores);
	printf("service %s (mean %.1f ns), writes %.1f%%, ", sim_service_name(c->service),
	       sim_mean_service_ns(c), 100 * c->write_frac);
	if (c->zipf > 0)
		printf("zipf %.3g over %u items\n", c->zipf, c->items);
	else
		printf("uniform over %u items\n", c->items);
}

static int run(const struct cli *cli)
{
	int err;

	if (cli->sweep) {
		struct sim_search *s = malloc(sizeof(*s));

		if (!s)
			return -ENOMEM;
		err = sim_search(&cli->cfg, cli->sweep_max, cli->sweep_steps, s);
		if (!err && cli->json) {
			err = print_search_json(cli, s);
		} else if (!err) {
			print_header(&cli->cfg);
			print_search_text(s);
		}
		free(s);
		return err;
	}

	struct sim_results *r = malloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	err = sim_run(&cli->cfg, r);
	if (!err && cli->json) {
		err = print_run_json(cli, r);
	} else if (!err) {
		print_header(&cli->cfg);
		print_results_text(r);
	}
	free(r);
	return err;
}

int main(int argc, char **argv)
{
	struct cli cli = {.sweep_max = 1.0, .sweep_steps = 8};
	struct xkv_opts p;
	int opt, err;

	sim_config_defaults(&cli.cfg);
	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		if (opt == OPT_HELP) {
			usage(stdout);
			return 0;
		}
		err = opt < 0 ? opt : take_option(&p, opt, &cli);
	}
	if (err) {
		fprintf(stderr, "xkv-sim: %s\nTry 'xkv-sim --help'.\n", p.why);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "xkv-sim: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	err = sim_config_validate(&cli.cfg);
	if (err) {
		fprintf(stderr, "xkv-sim: inconsistent configuration (see --help for ranges)\n");
		return 2;
	}
	err = run(&cli);
	if (err) {
		fprintf(stderr, "xkv-sim: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
