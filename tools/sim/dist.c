// SPDX-License-Identifier: MIT
/* The four service-time models. */
#include <errno.h>
#include <math.h>

#include "dist.h"

/*
 * Value sizes of Facebook's ETC pool (Atikoglu et al., SIGMETRICS'12): a generalized
 * Pareto distribution, location 0. Minos builds its workloads on the same trace.
 */
#define ETC_SCALE 214.476
#define ETC_SHAPE 0.348238

double etc_size_quantile(double u)
{
	return ETC_SCALE / ETC_SHAPE * (pow(1.0 - u, -ETC_SHAPE) - 1.0);
}

/* Integral of the clamped size quantile function over [a, b] */
static double size_integral(const struct service_model *m, double a, double b)
{
	double e = 1.0 - ETC_SHAPE;
	double split = fmin(fmax(a, m->max_u), b);
	double below = ETC_SCALE / ETC_SHAPE *
		       ((pow(1.0 - a, e) - pow(1.0 - split, e)) / e - (split - a));

	return below + (b - split) * m->max_size;
}

int service_init(struct service_model *m, const struct sim_config *cfg)
{
	*m = (struct service_model){
		.kind = cfg->service,
		.unit_ns = cfg->unit_ns,
		.k = cfg->k,
		.p_large = cfg->p_large,
		.small_bytes = cfg->small_bytes,
		.large_bytes = cfg->large_bytes,
		.sized = cfg->service == SIM_SVC_BIMODAL || cfg->service == SIM_SVC_SIZE,
		.base_ns = cfg->size_base_ns,
		.ns_per_byte = cfg->ns_per_byte,
		.max_size = cfg->max_size,
	};
	switch (cfg->service) {
	case SIM_SVC_C4:
		m->fixed_ns = cfg->fixed_ns;
		m->mean_ns = (C4_KVS_MIN_NS + C4_KVS_MAX_NS) / 2 + m->fixed_ns;
		return 0;
	case SIM_SVC_EXP:
		m->mean_ns = m->unit_ns;
		return 0;
	case SIM_SVC_BIMODAL:
		m->mean_ns = (1.0 - m->p_large) * m->unit_ns + m->p_large * m->k * m->unit_ns;
		return 0;
	case SIM_SVC_SIZE:
		m->fixed_ns = cfg->fixed_ns;
		/* the quantile of max_size, from F(x) = 1 - (1 + shape x / scale)^(-1/shape) */
		m->max_u = 1.0 - pow(1.0 + ETC_SHAPE * m->max_size / ETC_SCALE, -1.0 / ETC_SHAPE);
		m->threshold = fmin(etc_size_quantile(cfg->large_pct / 100.0), m->max_size);
		m->mean_ns = m->fixed_ns + m->base_ns + m->ns_per_byte * size_integral(m, 0.0, 1.0);
		return 0;
	case SIM_NSERVICES:
		break;
	}
	return -EINVAL;
}

double service_draw(const struct service_model *m, struct rng *r, bool *large, uint32_t *size)
{
	double bytes;

	*large = false;
	*size = 0;
	switch (m->kind) {
	case SIM_SVC_C4:
		return C4_KVS_MIN_NS + (C4_KVS_MAX_NS - C4_KVS_MIN_NS) * rng_uniform(r);
	case SIM_SVC_EXP:
		return m->unit_ns * rng_exp(r);
	case SIM_SVC_BIMODAL:
		*large = rng_uniform(r) < m->p_large;
		*size = *large ? m->large_bytes : m->small_bytes;
		return *large ? m->k * m->unit_ns : m->unit_ns;
	case SIM_SVC_SIZE:
		bytes = fmin(etc_size_quantile(rng_uniform(r)), m->max_size);
		*large = bytes > m->threshold;
		*size = (uint32_t)bytes;
		return m->base_ns + m->ns_per_byte * bytes;
	case SIM_NSERVICES:
		break;
	}
	return 0.0;
}
