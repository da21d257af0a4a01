// SPDX-License-Identifier: MIT
/* Log-linear histogram: bin = (octave, linear step within the octave). */
#include <math.h>
#include <string.h>

#include "hist.h"

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

/* Values below 1 share the first octave's bins: the simulator's unit is 1 ns. */
static unsigned bin_of(double v)
{
	int exp;
	double mant;

	if (v < 1.0)
		return (unsigned)(v * HIST_SUB);
	mant = frexp(v, &exp); /* v = mant * 2^exp, mant in [0.5, 1) */
	if (exp > HIST_OCTAVES - 1)
		return HIST_BINS - 1;
	return (unsigned)exp * HIST_SUB + (unsigned)((mant - 0.5) * 2.0 * HIST_SUB);
}

static double bin_middle(unsigned bin)
{
	unsigned octave = bin / HIST_SUB, step = bin % HIST_SUB;

	if (octave == 0)
		return (step + 0.5) / HIST_SUB;
	return ldexp(0.5 + (step + 0.5) / (2.0 * HIST_SUB), (int)octave);
}

void hist_add(struct hist *h, double v)
{
	h->bins[bin_of(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

double hist_percentile(const struct hist *h, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	uint64_t seen = 0;

	if (!h->count)
		return 0.0;
	if (rank < 1)
		rank = 1;
	for (unsigned b = 0; b < HIST_BINS; b++) {
		seen += h->bins[b];
		if (seen >= rank)
			return fmin(bin_middle(b), h->max);
	}
	return h->max;
}

double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}
