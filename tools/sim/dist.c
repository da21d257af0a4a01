// SPDX-License-Identifier: MIT
/* Key popularity (uniform, zipf) and the four service-time models. */
#include <errno.h>
#include <math.h>

#include "dist.h"

/*
 * Value sizes of Facebook's ETC pool (Atikoglu et al., SIGMETRICS'12): a generalized
 * Pareto distribution, location 0. Minos builds its workloads on the same trace.
 */
#define ETC_SCALE 214.476
#define ETC_SHAPE 0.348238

/* H(x) = integral of x^-s, shifted so that it is continuous in s at s = 1 */
static double zipf_h_integral(const struct zipf *z, double x)
{
	double lx = log(x);
	double t = (1.0 - z->s) * lx;

	return (fabs(t) > 1e-8 ? expm1(t) / t : 1.0 + t / 2.0) * lx;
}

static double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double zipf_h_integral_inverse(const struct zipf *z, double x)
{
	double t = x * (1.0 - z->s);

	if (t < -1.0)
		t = -1.0; /* only rounding can get here */
	return exp((fabs(t) > 1e-8 ? log1p(t) / t : 1.0 - t / 2.0) * x);
}

void zipf_init(struct zipf *z, uint64_t n, double s)
{
	z->s = s;
	z->n = (double)n;
	z->h_x1 = zipf_h_integral(z, 1.5) - 1.0;
	z->h_n = zipf_h_integral(z, z->n + 0.5);
	z->accept = 2.0 - zipf_h_integral_inverse(z, zipf_h_integral(z, 2.5) - zipf_h(z, 2.0));
}

uint64_t zipf_sample(const struct zipf *z, struct rng *r)
{
	for (;;) {
		double u = z->h_n + rng_uniform(r) * (z->h_x1 - z->h_n);
		double x = zipf_h_integral_inverse(z, u);
		double k = floor(x + 0.5);

		if (k < 1.0)
			k = 1.0;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->accept || u >= zipf_h_integral(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k - 1;
	}
}

double zipf_pmf(uint64_t n, double s, uint64_t k)
{
	double sum = 0.0;

	for (uint64_t i = n; i >= 1; i--) /* smallest terms first */
		sum += pow((double)i, -s);
	return pow((double)(k + 1), -s) / sum;
}

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
	double small, large, u_large;

	*m = (struct service_model){
		.kind = cfg->service,
		.unit_ns = cfg->unit_ns,
		.k = cfg->k,
		.p_large = cfg->p_large,
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
		small = (1.0 - m->p_large) * m->unit_ns;
		large = m->p_large * m->k * m->unit_ns;
		m->mean_ns = small + large;
		m->large_share = large / m->mean_ns;
		return 0;
	case SIM_SVC_SIZE:
		m->fixed_ns = cfg->fixed_ns;
		/* the quantile of max_size, from F(x) = 1 - (1 + shape x / scale)^(-1/shape) */
		m->max_u = 1.0 - pow(1.0 + ETC_SHAPE * m->max_size / ETC_SCALE, -1.0 / ETC_SHAPE);
		u_large = cfg->large_pct / 100.0;
		m->threshold = fmin(etc_size_quantile(u_large), m->max_size);
		m->mean_ns = m->fixed_ns + m->base_ns + m->ns_per_byte * size_integral(m, 0.0, 1.0);
		large = (1.0 - u_large) * (m->fixed_ns + m->base_ns) +
			m->ns_per_byte * size_integral(m, u_large, 1.0);
		m->large_share = large / m->mean_ns;
		return 0;
	case SIM_NSERVICES:
		break;
	}
	return -EINVAL;
}

double service_draw(const struct service_model *m, struct rng *r, bool *large)
{
	double size;

	*large = false;
	switch (m->kind) {
	case SIM_SVC_C4:
		return C4_KVS_MIN_NS + (C4_KVS_MAX_NS - C4_KVS_MIN_NS) * rng_uniform(r);
	case SIM_SVC_EXP:
		return m->unit_ns * rng_exp(r);
	case SIM_SVC_BIMODAL:
		*large = rng_uniform(r) < m->p_large;
		return *large ? m->k * m->unit_ns : m->unit_ns;
	case SIM_SVC_SIZE:
		size = fmin(etc_size_quantile(rng_uniform(r)), m->max_size);
		*large = size > m->threshold;
		return m->base_ns + m->ns_per_byte * size;
	case SIM_NSERVICES:
		break;
	}
	return 0.0;
}
