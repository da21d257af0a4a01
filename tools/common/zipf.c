// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>

#include "zipf.h"

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

int zipf_init(struct zipf *z, uint64_t n, double s)
{
	if (!n || !(s >= 0 && isfinite(s)))
		return -EINVAL;
	*z = (struct zipf){.n = n, .s = s};
	z->h_x1 = zipf_h_integral(z, 1.5) - 1.0;
	z->h_n = zipf_h_integral(z, (double)n + 0.5);
	z->accept = 2.0 - zipf_h_integral_inverse(z, zipf_h_integral(z, 2.5) - zipf_h(z, 2.0));
	return 0;
}

uint64_t zipf_sample(const struct zipf *z, struct rng *r)
{
	if (z->s == 0)
		return rng_below(r, z->n);
	for (;;) {
		double u = z->h_n + rng_uniform(r) * (z->h_x1 - z->h_n);
		double x = zipf_h_integral_inverse(z, u);
		double k = floor(x + 0.5);

		if (k < 1.0)
			k = 1.0;
		else if (k > (double)z->n)
			k = (double)z->n;
		if (k - x <= z->accept || u >= zipf_h_integral(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k - 1;
	}
}
