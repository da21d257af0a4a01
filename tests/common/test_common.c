// SPDX-License-Identifier: MIT
/*
 * tools/common, the workload model of xkv-bench, xkv-sim and xkv-trace: the histogram
 * against exact percentiles, the random streams, and the zipf sampler against the
 * zipf law.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "common/rng.h"
#include "common/zipf.h"

/* Half a bucket's width over its lower bound: the error the histogram promises. */
#define HIST_REL_ERROR (1.0 / (2 << HIST_SUB_BITS))

static struct hist *hist_new(void)
{
	struct hist *h = malloc(sizeof(*h));

	cr_assert_not_null(h);
	hist_init(h);
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Records v[0..n) and holds every reported percentile to the exact one within the bound. */
static void check_against_exact(uint64_t *v, size_t n)
{
	static const double qs[] = {0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
	struct hist *h = hist_new();
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		hist_record(h, v[i]);
		sum += (double)v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	cr_assert_eq(h->count, n);
	cr_assert_eq(h->min, v[0]);
	cr_assert_eq(h->max, v[n - 1]);
	cr_assert(fabs(hist_mean(h) - sum / n) <= 1e-9 * (sum / n), "mean %f, exact %f",
		  hist_mean(h), sum / n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t exact = v[hist_rank(n, qs[i]) - 1];
		uint64_t got = hist_percentile(h, qs[i]);
		double err = fabs((double)got - (double)exact);

		cr_assert(err <= HIST_REL_ERROR * (double)exact,
			  "p%g: histogram says %llu, the sample is %llu (relative error %g > %g)",
			  qs[i], (unsigned long long)got, (unsigned long long)exact,
			  err / (double)exact, HIST_REL_ERROR);
	}
	free(h);
}

#define SAMPLES 200000

static uint64_t samples[SAMPLES];

Test(hist, uniform)
{
	struct rng r;

	rng_seed(&r, 1, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = 1 + rng_next(&r) % 1000000;
	check_against_exact(samples, SAMPLES);
}

Test(hist, exponential)
{
	struct rng r;

	rng_seed(&r, 2, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		/* exponential, mean 50 us in ns */
		samples[i] = (uint64_t)(-log(1 - rng_uniform(&r)) * 50000);
	check_against_exact(samples, SAMPLES);
}

Test(hist, bimodal)
{
	struct rng r;

	rng_seed(&r, 3, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = i % 10 ? 9000 + rng_next(&r) % 2000	/* ~10 us */
				    : 4500000 + rng_next(&r) % 1000000; /* ~5 ms */
	check_against_exact(samples, SAMPLES);
}

Test(hist, huge_values_up_to_ten_seconds)
{
	struct rng r;

	rng_seed(&r, 4, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = 1000000000ULL + rng_next(&r) % 9000000001ULL;
	samples[0] = 10000000000ULL;
	check_against_exact(samples, SAMPLES);
}

Test(hist, constant_is_exact)
{
	struct hist *h = hist_new();

	for (int i = 0; i < 1000; i++)
		hist_record(h, 123457);
	for (double q = 0; q <= 100; q += 0.5)
		cr_assert_eq(hist_percentile(h, q), 123457, "p%g", q);
	cr_assert_eq(hist_mean(h), 123457.0);
	free(h);
}

Test(hist, single_value)
{
	struct hist *h = hist_new();

	hist_record(h, 987654321);
	cr_assert_eq(hist_percentile(h, 0), 987654321);
	cr_assert_eq(hist_percentile(h, 50), 987654321);
	cr_assert_eq(hist_percentile(h, 100), 987654321);
	cr_assert_eq(hist_mean(h), 987654321.0);
	free(h);
}

Test(hist, small_values_are_exact)
{
	size_t n = 2 << HIST_SUB_BITS;

	for (size_t i = 0; i < n; i++)
		samples[i] = n - 1 - i;
	check_against_exact(samples, n);
	for (size_t i = 0; i < n; i++) {
		struct hist *h = hist_new();

		hist_record(h, 0);
		hist_record(h, i);
		hist_record(h, n);
		cr_assert_eq(hist_percentile(h, 50), i, "a value below 2^(p+1) has its own bucket");
		free(h);
	}
}

Test(hist, extremes_of_uint64)
{
	struct hist *h = hist_new();
	uint64_t top = UINT64_MAX - 12345, mid = 1ULL << 63;

	hist_record(h, mid + (mid >> 1));
	hist_record(h, top);
	hist_record(h, top);
	cr_assert(fabs((double)hist_percentile(h, 10) - (double)(mid + (mid >> 1))) <=
		  HIST_REL_ERROR * (double)(mid + (mid >> 1)));
	cr_assert_eq(hist_percentile(h, 100), top, "the maximum is kept exactly");
	free(h);
}

Test(hist, empty)
{
	struct hist *h = hist_new();

	cr_assert_eq(hist_percentile(h, 50), 0);
	cr_assert_eq(hist_mean(h), 0.0);
	free(h);
}

Test(hist, nearest_rank)
{
	cr_assert_eq(hist_rank(1000, 99.9), 999);
	cr_assert_eq(hist_rank(1000, 100), 1000);
	cr_assert_eq(hist_rank(1000, 0), 1);
	cr_assert_eq(hist_rank(3, 50), 2);
	cr_assert_eq(hist_rank(1, 99.99), 1);
	cr_assert_eq(hist_rank(200000, 99.99), 199980);
}

Test(hist, merge_equals_histogram_of_the_concatenation)
{
	struct hist *whole = hist_new(), *merged = hist_new();
	struct hist *part[3] = {hist_new(), hist_new(), hist_new()};
	struct rng r;

	rng_seed(&r, 5, 0);
	for (size_t i = 0; i < SAMPLES; i++) {
		/* three threads' worth, each with its own range so min and max differ */
		uint64_t v = (i % 3 + 1) * 1000 + rng_next(&r) % (1000000ULL << (i % 3));

		hist_record(whole, v);
		hist_record(part[i % 3], v);
	}
	for (int i = 0; i < 3; i++)
		hist_merge(merged, part[i]);
	cr_assert_eq(memcmp(whole, merged, sizeof(*whole)), 0, "the merge is not the whole");
	cr_assert_eq(hist_percentile(merged, 99.9), hist_percentile(whole, 99.9));
	for (int i = 0; i < 3; i++)
		free(part[i]);
	free(whole);
	free(merged);
}

/* Every integer from 1 to 100000 once: the percentiles are known. */
Test(hist, percentiles_of_a_ramp_within_resolution)
{
	struct hist *h = hist_new();

	for (int v = 1; v <= 100000; v++)
		hist_record(h, v);
	cr_expect(fabs((double)hist_percentile(h, 50) - 50000) <= 50000 * HIST_REL_ERROR);
	cr_expect(fabs((double)hist_percentile(h, 99) - 99000) <= 99000 * HIST_REL_ERROR);
	cr_expect_float_eq(hist_mean(h), 50000.5, 1e-6);
	cr_expect_eq(h->max, 100000);
	free(h);
}

/*
 * Draws n keys and compares the counts of the top `ranks` ranks, and of all others
 * together, with the exact zipf pmf (computed here, not by the sampler). Each count
 * must be within 5 standard deviations, and the chi-square below chi2_max.
 */
static void check_popularity(uint32_t keys, double gamma, uint32_t ranks, double chi2_max)
{
	const uint32_t n = 2000000;
	uint64_t *count = calloc(keys, sizeof(*count)), rest = 0;
	double norm = 0, chi2 = 0, p_rest = 1;
	struct zipf z;
	struct rng r;

	cr_assert_not_null(count);
	cr_assert_eq(zipf_init(&z, keys, gamma), 0);
	rng_seed(&r, 42, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = zipf_sample(&z, &r);

		cr_assert_lt(k, keys);
		count[k]++;
	}
	for (uint32_t k = 0; k < keys; k++)
		norm += pow(k + 1.0, -gamma);
	for (uint32_t k = 0; k < ranks; k++) {
		double p = pow(k + 1.0, -gamma) / norm, expect = p * n;
		double sd = sqrt(expect * (1 - p));

		cr_assert(fabs((double)count[k] - expect) <= 5 * sd,
			  "rank %u: %llu draws, the pmf expects %.0f +- %.0f", k,
			  (unsigned long long)count[k], expect, sd);
		chi2 += (count[k] - expect) * (count[k] - expect) / expect;
		p_rest -= p;
	}
	for (uint32_t k = ranks; k < keys; k++)
		rest += count[k];
	if (ranks < keys)
		chi2 += (rest - p_rest * n) * (rest - p_rest * n) / (p_rest * n);
	cr_assert(chi2 < chi2_max, "chi-square %.1f over %u classes, limit %.1f", chi2,
		  ranks + (ranks < keys), chi2_max);
	free(count);
}

/* Limits are the chi-square 0.999 quantiles for the degrees of freedom (classes - 1). */
Test(zipf, s_099_matches_the_pmf)
{
	check_popularity(1000, 0.99, 20, 45.3); /* 21 classes */
}

Test(zipf, s_12_matches_the_pmf)
{
	check_popularity(100, 1.2, 20, 45.3);
}

Test(zipf, s_0_is_flat)
{
	check_popularity(50, 0, 50, 85.4); /* 50 classes, no rest */
}

Test(zipf, the_check_detects_a_wrong_exponent)
{
	/* the check above must be able to fail: 1.0 draws judged against 0.99's pmf */
	const uint32_t n = 2000000;
	double norm = 0, expect;
	uint64_t top = 0;
	struct zipf z;
	struct rng r;

	cr_assert_eq(zipf_init(&z, 1000, 1.0), 0);
	rng_seed(&r, 42, 0);
	for (uint32_t i = 0; i < n; i++)
		top += zipf_sample(&z, &r) == 0;
	for (uint32_t k = 0; k < 1000; k++)
		norm += pow(k + 1.0, -0.99);
	expect = n / norm;
	cr_assert(fabs(top - expect) > 5 * sqrt(expect), "rank 0 would pass for gamma 0.99");
}

/* The simulator's workloads: 1.6 M items, each exponent's top ranks as the pmf says. */
Test(zipf, large_key_spaces_match_the_pmf)
{
	const double exponents[] = {0.99, 1.4};
	const uint64_t n = 1600000, draws = 1000000;
	uint32_t counts[3];
	struct rng r;

	rng_seed(&r, 7, 0);
	for (unsigned e = 0; e < 2; e++) {
		double norm = 0;
		struct zipf z;

		cr_assert_eq(zipf_init(&z, n, exponents[e]), 0);
		memset(counts, 0, sizeof(counts));
		for (uint64_t i = 0; i < draws; i++) {
			uint64_t k = zipf_sample(&z, &r);

			cr_assert_lt(k, n);
			if (k < 3)
				counts[k]++;
		}
		for (uint64_t i = n; i >= 1; i--) /* smallest terms first */
			norm += pow((double)i, -exponents[e]);
		for (uint64_t k = 0; k < 3; k++) {
			double expected = pow((double)(k + 1), -exponents[e]) / norm * draws;

			cr_expect(fabs(counts[k] - expected) <= 0.03 * expected,
				  "s %.2f rank %llu: %u draws, expected %.0f", exponents[e],
				  (unsigned long long)k, counts[k], expected);
		}
	}
}

/* A steep exponent puts nearly everything on rank 0; one rank is always rank 0. */
Test(zipf, extremes)
{
	uint64_t top = 0;
	struct zipf z;
	struct rng r;

	rng_seed(&r, 11, 0);
	cr_assert_eq(zipf_init(&z, 1000, 100), 0);
	for (int i = 0; i < 100000; i++)
		top += zipf_sample(&z, &r) == 0;
	cr_expect_eq(top, 100000, "2^-100 of the draws may leave rank 0: none should");
	cr_assert_eq(zipf_init(&z, 1, 0.99), 0);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(zipf_sample(&z, &r), 0);
	cr_assert_eq(zipf_init(&z, 100000000, 0.99), 0, "no table: any key space");
	for (int i = 0; i < 1000; i++)
		cr_assert_lt(zipf_sample(&z, &r), 100000000);
}

Test(zipf, refuses_what_is_no_distribution)
{
	struct zipf z;

	cr_expect_eq(zipf_init(&z, 0, 1), -EINVAL);
	cr_expect_eq(zipf_init(&z, 10, -0.5), -EINVAL);
	cr_expect_eq(zipf_init(&z, 10, NAN), -EINVAL);
	cr_expect_eq(zipf_init(&z, 10, INFINITY), -EINVAL);
}

/* A seed and a stream fix a sequence; another seed or stream gives another one. */
Test(rng, seed_and_stream_fix_the_sequence)
{
	struct rng a, b, other_stream, other_seed;
	unsigned same_stream = 0, same_seed = 0;

	rng_seed(&a, 7, 0);
	rng_seed(&b, 7, 0);
	rng_seed(&other_stream, 7, 1);
	rng_seed(&other_seed, 8, 0);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = rng_next(&a);

		cr_assert_eq(x, rng_next(&b), "draw %d differs for one seed and stream", i);
		same_stream += x == rng_next(&other_stream);
		same_seed += x == rng_next(&other_seed);
	}
	cr_expect_eq(same_stream, 0);
	cr_expect_eq(same_seed, 0);
}

/* Neighbouring streams and seeds, as threads take them, are not correlated. */
Test(rng, neighbouring_streams_are_unrelated)
{
	const int n = 100000;
	struct rng r[4];
	double sum[4] = {0}, cross = 0;

	for (int s = 0; s < 4; s++)
		rng_seed(&r[s], s < 2 ? 1 : 2, s % 2);
	for (int i = 0; i < n; i++) {
		double u[4];

		for (int s = 0; s < 4; s++) {
			u[s] = rng_uniform(&r[s]) - 0.5;
			sum[s] += u[s];
		}
		cross += u[0] * u[1] + u[0] * u[2] + u[1] * u[3];
	}
	/* each product has mean 0 and sd 1/12: three of them over n draws */
	cr_expect(fabs(cross / n) < 5 * sqrt(3.0 / n) / 12, "correlation %g", cross / n);
	for (int s = 0; s < 4; s++)
		cr_expect(fabs(sum[s] / n) < 5 / sqrt(12.0 * n), "stream %d mean %g", s,
			  sum[s] / n + 0.5);
}

Test(rng, ranges_and_means)
{
	const int n = 1000000;
	uint64_t below[10] = {0};
	double exp_sum = 0;
	struct rng r;

	rng_seed(&r, 3, 0);
	for (int i = 0; i < n; i++) {
		double u = rng_uniform(&r);
		uint64_t k = rng_below(&r, 10);

		cr_assert(u >= 0 && u < 1);
		cr_assert_lt(k, 10);
		below[k]++;
		exp_sum += rng_exp(&r);
	}
	/* n / 10 each, sd ~ 300 */
	for (int k = 0; k < 10; k++)
		cr_expect(fabs((double)below[k] - n / 10.0) < 5 * 300, "%d: %llu", k,
			  (unsigned long long)below[k]);
	/* exponential, mean 1 and sd 1 */
	cr_expect(fabs(exp_sum / n - 1) < 5 / sqrt(n), "exponential mean %g", exp_sum / n);
	cr_expect_eq(rng_below(&r, 1), 0);
}

Test(rng, the_mixer_is_the_splitmix64_finaliser)
{
	cr_expect_eq(mix64(0), 0);
	/* splitmix64's first output from state 0 is mix64 of its first increment */
	cr_expect_eq(mix64(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
}
