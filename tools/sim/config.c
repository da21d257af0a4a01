// SPDX-License-Identifier: MIT
/* Defaults (the C-4 model as docs/DESIGN.md's simulator model settles it) and validation. */
#include <errno.h>
#include <string.h>

#include <xkv/maps.h>

#include "cluster.h"
#include "dist.h"
#include "sim.h"

static const char *const service_names[SIM_NSERVICES] = {
	[SIM_SVC_C4] = "c4",
	[SIM_SVC_BIMODAL] = "bimodal",
	[SIM_SVC_SIZE] = "size",
	[SIM_SVC_EXP] = "exp",
};

int sim_service_parse(const char *name, enum sim_service *out)
{
	for (int i = 0; i < SIM_NSERVICES; i++) {
		if (!strcmp(name, service_names[i])) {
			*out = (enum sim_service)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sim_service_name(enum sim_service s)
{
	return s < SIM_NSERVICES ? service_names[s] : "?";
}

void sim_config_defaults(struct sim_config *cfg)
{
	*cfg = (struct sim_config){
		.cores = 64,
		.policy = SIM_CREW,
		.load = 0.5,
		.items = 1600000,
		.partitions = 1u << 20,
		.service = SIM_SVC_C4,
		.fixed_ns = 100,
		.unit_ns = 1000,
		.k = 100,
		.p_large = 0.00125,
		.small_bytes = 64,
		.large_bytes = 512000,
		.size_base_ns = 500,
		.ns_per_byte = 2,
		.max_size = 1u << 20,
		.large_pct = 99,
		.epoch_us = 1e6,
		.channel_ns = 30,
		.jbsq = 2,
		.comp_ns = 100,
		.close = SIM_CLOSE_EARLY,
		.lookahead = 64,
		.slo_mult = 10,
		.requests = 200000,
		.warmup = 0.1,
		.seed = 1,
		.servers = 1,
		.dir_select = CLUSTER_ROUND_ROBIN,
		.write_servers = 1,
		.popular_ppm = 10,
		.hop_ns = 5000,
	};
}

static bool in_range(double v, double lo, double hi)
{
	return v >= lo && v <= hi; /* false for NaN */
}

int sim_config_validate(const struct sim_config *cfg)
{
	bool ok = cfg->cores >= 1 && cfg->cores <= SIM_MAX_CORES &&
		  cfg->policy < SIM_NPOLICIES && cfg->service < SIM_NSERVICES &&
		  cfg->items >= 1 && cfg->partitions >= 1 &&
		  (cfg->rate_mrps > 0 ? in_range(cfg->rate_mrps, 1e-9, 1e6)
				      : in_range(cfg->load, 1e-6, 10)) &&
		  in_range(cfg->write_frac, 0, 1) && in_range(cfg->zipf, 0, 10) &&
		  in_range(cfg->fixed_ns, 0, 1e9) && in_range(cfg->unit_ns, 1e-3, 1e9) &&
		  in_range(cfg->k, 1, 1e6) && in_range(cfg->p_large, 0, 1) &&
		  cfg->small_bytes <= XKV_VALUE_MAX && cfg->large_bytes <= XKV_VALUE_MAX &&
		  in_range(cfg->epoch_us, 1, 1e7) &&
		  in_range(cfg->size_base_ns, 0, 1e9) && in_range(cfg->ns_per_byte, 0, 1e6) &&
		  cfg->max_size >= 1 && in_range(cfg->large_pct, 0, 100) &&
		  in_range(cfg->channel_ns, 0, 1e9) && cfg->jbsq >= 1 &&
		  in_range(cfg->comp_ns, 0, 1e9) &&
		  (cfg->close == SIM_CLOSE_EARLY || cfg->close == SIM_CLOSE_DEADLINE) &&
		  in_range(cfg->slo_mult, 1, 1e6) && in_range(cfg->warmup, 0, 0.9) &&
		  in_range(cfg->duration_us, 0, 1e12) && (cfg->duration_us > 0 || cfg->requests >= 1) &&
		  cfg->servers >= 1 && cfg->servers <= CLUSTER_SERVERS_MAX &&
		  cfg->dir_select < CLUSTER_SELECT_END && in_range(cfg->popular_ppm, 0, 1e6) &&
		  cfg->write_servers >= 1 && cfg->write_servers <= CLUSTER_SERVERS_MAX &&
		  in_range(cfg->hop_ns, 0, 1e9);

	/* Minos's roles (and xkv's) need a small and a large core, and hold XKV_WORKERS_MAX */
	if ((cfg->policy == SIM_MINOS || cfg->policy == SIM_XKV) &&
	    (cfg->cores < 2 || cfg->cores > XKV_WORKERS_MAX))
		ok = false;
	return ok ? 0 : -EINVAL;
}

double sim_mean_service_ns(const struct sim_config *cfg)
{
	struct service_model m;

	return service_init(&m, cfg) ? 0.0 : m.mean_ns;
}
