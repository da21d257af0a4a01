// SPDX-License-Identifier: MIT
/* xkv-sim: the command line over sim_run and sim_search. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static const char usage[] =
	"Usage: xkv-sim [options]\n"
	"Simulates one multi-core KV server (docs/SIMULATION.md). Defaults model C-4 Sec. 3.\n"
	"\n"
	"Workload\n"
	"  --cores N          worker cores (64)\n"
	"  --policy NAME      erew crew dcrew ideal hkh sho hkhws minos comp (crew)\n"
	"  --load RHO         offered utilisation of all cores, 0..10 (0.5)\n"
	"  --rate MRPS        offered rate instead of --load\n"
	"  --write-frac F     fraction of writes, 0..1 (0)\n"
	"  --zipf GAMMA       key popularity exponent, 0 for uniform (0)\n"
	"  --items N          distinct keys (1600000)\n"
	"  --partitions N     store partitions = hash buckets, owner = partition mod cores (1048576)\n"
	"Service time\n"
	"  --service MODEL    c4 | bimodal | size | exp (c4)\n"
	"                     c4: U[400,800] ns + fixed; bimodal: unit, or K units with\n"
	"                     p-large; size: base + ns-per-byte * ETC value size + fixed;\n"
	"                     exp: exponential with mean unit-ns\n"
	"  --fixed-ns NS      network/reply part, c4 and size models (100)\n"
	"  --unit-ns NS       bimodal small request; exp mean (1000)\n"
	"  --K K              bimodal: large / small service time (100)\n"
	"  --p-large P        bimodal: fraction of large requests (0.00125)\n"
	"  --size-base-ns NS  size model: store time of an empty value (500)\n"
	"  --ns-per-byte NS   size model (2)\n"
	"  --max-size BYTES   size model: values are clamped here (1048576)\n"
	"  --large-pct P      size model: values above this percentile are large (99)\n"
	"Server\n"
	"  --channel-ns NS    dispatch and completion channel latency (30)\n"
	"  --jbsq D           JBSQ bound, the request in service included (2)\n"
	"  --comp-ns NS       compaction: time to add a write to a window (100)\n"
	"  --close MODE       compaction windows close: early or deadline (early)\n"
	"  --lookahead N      compaction: queue slots scanned for a matching write (64)\n"
	"Measurement\n"
	"  --slo MULT         SLO on the 99th percentile, in mean service times (10)\n"
	"  --requests N       requests generated, warm-up included (200000)\n"
	"  --duration US      simulated arrival time instead of --requests\n"
	"  --warmup F         fraction of the first requests left out (0.1)\n"
	"  --sweep            search the highest load whose p99 meets the SLO\n"
	"  --sweep-max RHO    upper end of the search (1.0)\n"
	"  --sweep-steps N    bisection probes (8)\n"
	"  --seed N           (1)\n"
	"  --json             one JSON object on stdout\n"
	"  -h, --help\n";

enum opt {
	OPT_CORES = 256, OPT_POLICY, OPT_LOAD, OPT_RATE, OPT_WRITE_FRAC, OPT_ZIPF, OPT_ITEMS,
	OPT_PARTITIONS, OPT_SERVICE, OPT_FIXED_NS, OPT_UNIT_NS, OPT_K, OPT_P_LARGE,
	OPT_SIZE_BASE_NS, OPT_NS_PER_BYTE, OPT_MAX_SIZE, OPT_LARGE_PCT, OPT_CHANNEL_NS,
	OPT_JBSQ, OPT_COMP_NS, OPT_CLOSE, OPT_LOOKAHEAD, OPT_SLO, OPT_REQUESTS, OPT_DURATION,
	OPT_WARMUP, OPT_SWEEP, OPT_SWEEP_MAX, OPT_SWEEP_STEPS, OPT_SEED, OPT_JSON,
};

static const struct option long_options[] = {
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "write-frac", required_argument, NULL, OPT_WRITE_FRAC },
	{ "zipf", required_argument, NULL, OPT_ZIPF },
	{ "items", required_argument, NULL, OPT_ITEMS },
	{ "partitions", required_argument, NULL, OPT_PARTITIONS },
	{ "service", required_argument, NULL, OPT_SERVICE },
	{ "fixed-ns", required_argument, NULL, OPT_FIXED_NS },
	{ "unit-ns", required_argument, NULL, OPT_UNIT_NS },
	{ "K", required_argument, NULL, OPT_K },
	{ "p-large", required_argument, NULL, OPT_P_LARGE },
	{ "size-base-ns", required_argument, NULL, OPT_SIZE_BASE_NS },
	{ "ns-per-byte", required_argument, NULL, OPT_NS_PER_BYTE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "large-pct", required_argument, NULL, OPT_LARGE_PCT },
	{ "channel-ns", required_argument, NULL, OPT_CHANNEL_NS },
	{ "jbsq", required_argument, NULL, OPT_JBSQ },
	{ "comp-ns", required_argument, NULL, OPT_COMP_NS },
	{ "close", required_argument, NULL, OPT_CLOSE },
	{ "lookahead", required_argument, NULL, OPT_LOOKAHEAD },
	{ "slo", required_argument, NULL, OPT_SLO },
	{ "requests", required_argument, NULL, OPT_REQUESTS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "sweep", no_argument, NULL, OPT_SWEEP },
	{ "sweep-max", required_argument, NULL, OPT_SWEEP_MAX },
	{ "sweep-steps", required_argument, NULL, OPT_SWEEP_STEPS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	struct sim_config cfg;
	bool json, sweep;
	double sweep_max;
	unsigned sweep_steps;
};

static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = parse_u64(s, &v);

	if (err || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_unsigned(const char *s, unsigned *out)
{
	uint32_t v;
	int err = parse_u32(s, &v);

	if (!err)
		*out = v;
	return err;
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

static int parse_option(struct cli *cli, int opt, const char *arg)
{
	struct sim_config *c = &cli->cfg;

	switch (opt) {
	case OPT_CORES:
		return parse_unsigned(arg, &c->cores);
	case OPT_POLICY:
		return sim_policy_parse(arg, &c->policy);
	case OPT_LOAD:
		return parse_double(arg, &c->load);
	case OPT_RATE:
		return parse_double(arg, &c->rate_mrps);
	case OPT_WRITE_FRAC:
		return parse_double(arg, &c->write_frac);
	case OPT_ZIPF:
		return parse_double(arg, &c->zipf);
	case OPT_ITEMS:
		return parse_u32(arg, &c->items);
	case OPT_PARTITIONS:
		return parse_u32(arg, &c->partitions);
	case OPT_SERVICE:
		return sim_service_parse(arg, &c->service);
	case OPT_FIXED_NS:
		return parse_double(arg, &c->fixed_ns);
	case OPT_UNIT_NS:
		return parse_double(arg, &c->unit_ns);
	case OPT_K:
		return parse_double(arg, &c->k);
	case OPT_P_LARGE:
		return parse_double(arg, &c->p_large);
	case OPT_SIZE_BASE_NS:
		return parse_double(arg, &c->size_base_ns);
	case OPT_NS_PER_BYTE:
		return parse_double(arg, &c->ns_per_byte);
	case OPT_MAX_SIZE:
		return parse_u32(arg, &c->max_size);
	case OPT_LARGE_PCT:
		return parse_double(arg, &c->large_pct);
	case OPT_CHANNEL_NS:
		return parse_double(arg, &c->channel_ns);
	case OPT_JBSQ:
		return parse_unsigned(arg, &c->jbsq);
	case OPT_COMP_NS:
		return parse_double(arg, &c->comp_ns);
	case OPT_CLOSE:
		return parse_close(arg, &c->close);
	case OPT_LOOKAHEAD:
		return parse_unsigned(arg, &c->lookahead);
	case OPT_SLO:
		return parse_double(arg, &c->slo_mult);
	case OPT_REQUESTS:
		return parse_u64(arg, &c->requests);
	case OPT_DURATION:
		return parse_double(arg, &c->duration_us);
	case OPT_WARMUP:
		return parse_double(arg, &c->warmup);
	case OPT_SWEEP_MAX:
		return parse_double(arg, &cli->sweep_max);
	case OPT_SWEEP_STEPS:
		return parse_unsigned(arg, &cli->sweep_steps);
	case OPT_SEED:
		return parse_u64(arg, &c->seed);
	case OPT_SWEEP:
		cli->sweep = true;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	}
	return -EINVAL;
}

static void print_config_json(const struct sim_config *c)
{
	printf("{\"cores\":%u,\"policy\":\"%s\",\"load\":%.6g,\"rate_mrps\":%.6g,"
	       "\"write_frac\":%.6g,\"zipf\":%.6g,\"items\":%u,\"partitions\":%u,"
	       "\"service\":\"%s\",\"fixed_ns\":%.6g,\"unit_ns\":%.6g,\"K\":%.6g,"
	       "\"p_large\":%.6g,\"size_base_ns\":%.6g,\"ns_per_byte\":%.6g,\"max_size\":%u,"
	       "\"large_pct\":%.6g,\"channel_ns\":%.6g,\"jbsq\":%u,\"comp_ns\":%.6g,"
	       "\"close\":\"%s\",\"lookahead\":%u,\"slo_mult\":%.6g,\"requests\":%llu,"
	       "\"duration_us\":%.6g,\"warmup\":%.6g,\"seed\":%llu}",
	       c->cores, sim_policy_name(c->policy), c->load, c->rate_mrps, c->write_frac,
	       c->zipf, c->items, c->partitions, sim_service_name(c->service), c->fixed_ns,
	       c->unit_ns, c->k, c->p_large, c->size_base_ns, c->ns_per_byte, c->max_size,
	       c->large_pct, c->channel_ns, c->jbsq, c->comp_ns,
	       c->close == SIM_CLOSE_EARLY ? "early" : "deadline", c->lookahead, c->slo_mult,
	       (unsigned long long)c->requests, c->duration_us, c->warmup,
	       (unsigned long long)c->seed);
}

static void print_results_json(const struct sim_results *r)
{
	printf("{\"requests\":%llu,\"measured\":%llu,\"offered_load\":%.6g,"
	       "\"offered_mrps\":%.6g,\"throughput_mrps\":%.6g,\"mean_service_ns\":%.6g,"
	       "\"slo_ns\":%.6g,\"meets_slo\":%s,\"stopped_early\":%s,"
	       "\"latency_ns\":{\"mean\":%.6g,\"p50\":%.6g,\"p99\":%.6g,\"p999\":%.6g,"
	       "\"max\":%.6g},\"mean_wait_ns\":%.6g,",
	       (unsigned long long)r->requests, (unsigned long long)r->measured,
	       r->offered_load, r->offered_mrps, r->throughput_mrps, r->mean_service_ns,
	       r->slo_ns, r->meets_slo ? "true" : "false", r->stopped_early ? "true" : "false",
	       r->mean_ns, r->p50_ns, r->p99_ns, r->p999_ns, r->max_ns, r->mean_wait_ns);
	printf("\"counters\":{\"reads_off_owner\":%llu,\"writes_off_owner\":%llu,"
	       "\"writer_conflicts\":%llu,\"stolen\":%llu,\"class_mismatch\":%llu,"
	       "\"spins\":%llu,\"retries\":%llu,\"compacted\":%llu,\"windows\":%llu,"
	       "\"window_max\":%llu},"
	       "\"ewt_mean\":%.6g,\"ewt_max\":%.6g,\"large_cores\":%u,",
	       (unsigned long long)r->reads_off_owner, (unsigned long long)r->writes_off_owner,
	       (unsigned long long)r->writer_conflicts, (unsigned long long)r->stolen,
	       (unsigned long long)r->class_mismatch, (unsigned long long)r->spins,
	       (unsigned long long)r->retries, (unsigned long long)r->compacted,
	       (unsigned long long)r->windows, (unsigned long long)r->window_max, r->ewt_mean,
	       r->ewt_max, r->large_cores);
	printf("\"utilization\":{\"mean\":%.6g,\"min\":%.6g,\"max\":%.6g,\"per_core\":[",
	       r->util_mean, r->util_min, r->util_max);
	for (unsigned i = 0; i < r->cores && i < SIM_MAX_CORES; i++)
		printf("%s%.4f", i ? "," : "", r->util[i]);
	printf("]}}");
}

static void print_results_text(const struct sim_results *r)
{
	printf("offered       load %.3f, %.3f Mrps; %llu requests, %llu measured\n",
	       r->offered_load, r->offered_mrps, (unsigned long long)r->requests,
	       (unsigned long long)r->measured);
	printf("throughput    %.3f Mrps\n", r->throughput_mrps);
	printf("latency (ns)  mean %.0f  p50 %.0f  p99 %.0f  p99.9 %.0f  max %.0f\n",
	       r->mean_ns, r->p50_ns, r->p99_ns, r->p999_ns, r->max_ns);
	printf("wait (ns)     mean %.0f\n", r->mean_wait_ns);
	printf("SLO           p99 <= %.0f ns: %s%s\n", r->slo_ns, r->meets_slo ? "met" : "missed",
	       r->stopped_early ? " (run stopped once certain)" : "");
	printf("utilisation   mean %.3f  min %.3f  max %.3f\n", r->util_mean, r->util_min,
	       r->util_max);
	printf("per core     ");
	for (unsigned i = 0; i < r->cores && i < SIM_MAX_CORES; i++)
		printf("%s %.2f", i && i % 16 == 0 ? "\n             " : "", r->util[i]);
	printf("\ncounters      off-owner reads %llu, writes %llu; writer conflicts %llu; "
	       "stolen %llu;\n              spins %llu, retries %llu; compacted %llu in %llu "
	       "windows (at most %llu);\n              class mismatches %llu\n",
	       (unsigned long long)r->reads_off_owner, (unsigned long long)r->writes_off_owner,
	       (unsigned long long)r->writer_conflicts, (unsigned long long)r->stolen,
	       (unsigned long long)r->spins, (unsigned long long)r->retries,
	       (unsigned long long)r->compacted, (unsigned long long)r->windows,
	       (unsigned long long)r->window_max, (unsigned long long)r->class_mismatch);
	if (r->ewt_max > 0)
		printf("EWT entries   mean %.1f  max %.0f\n", r->ewt_mean, r->ewt_max);
	if (r->large_cores)
		printf("Minos         %u large cores\n", r->large_cores);
}

static void print_search(const struct cli *cli, const struct sim_search *s)
{
	if (cli->json) {
		printf("{\"config\":");
		print_config_json(&cli->cfg);
		printf(",\"sweep\":{\"max_load\":%.6g,\"max_mrps\":%.6g,\"probes\":[", s->max_load,
		       s->max_mrps);
		for (unsigned i = 0; i < s->probes; i++)
			printf("%s{\"load\":%.6g,\"p99_ns\":%.6g,\"ok\":%s}", i ? "," : "",
			       s->probe_load[i], s->probe_p99[i], s->probe_ok[i] ? "true" : "false");
		printf("],\"at_max\":");
		print_results_json(&s->at_max);
		printf("}}\n");
		return;
	}
	printf("highest load meeting the SLO: %.4f (%.3f Mrps)\n", s->max_load, s->max_mrps);
	for (unsigned i = 0; i < s->probes; i++)
		printf("  probe load %.4f  p99 %.0f ns  %s\n", s->probe_load[i], s->probe_p99[i],
		       s->probe_ok[i] ? "ok" : "missed");
	if (s->max_load > 0) {
		printf("at that load:\n");
		print_results_text(&s->at_max);
	}
}

static void print_header(const struct sim_config *c)
{
	printf("xkv-sim       policy %s, %u cores, service %s (mean %.1f ns), writes %.1f%%, ",
	       sim_policy_name(c->policy), c->cores, sim_service_name(c->service),
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
		if (!err) {
			if (!cli->json)
				print_header(&cli->cfg);
			print_search(cli, s);
		}
		free(s);
		return err;
	}

	struct sim_results *r = malloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	err = sim_run(&cli->cfg, r);
	if (!err && cli->json) {
		printf("{\"config\":");
		print_config_json(&cli->cfg);
		printf(",\"result\":");
		print_results_json(r);
		printf("}\n");
	} else if (!err) {
		print_header(&cli->cfg);
		print_results_text(r);
	}
	free(r);
	return err;
}

int main(int argc, char **argv)
{
	struct cli cli = { .sweep_max = 1.0, .sweep_steps = 8 };
	int opt, err, index = 0;

	sim_config_defaults(&cli.cfg);
	while ((opt = getopt_long(argc, argv, "h", long_options, &index)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (opt == '?' || parse_option(&cli, opt, optarg)) {
			if (opt != '?')
				fprintf(stderr, "xkv-sim: bad value '%s' for --%s\n", optarg,
					long_options[index].name);
			fputs("Try 'xkv-sim --help'.\n", stderr);
			return 2;
		}
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
