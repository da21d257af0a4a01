// SPDX-License-Identifier: MIT
/*
 * xkv-bench's parts without a network: the latency histogram against exact
 * percentiles, the key sampler against the zipf law, the request stream's
 * determinism, reply checking, and the closed loop against an in-memory server
 * (fake_server.h) that loses, corrupts, reorders and duplicates replies on purpose.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fake_server.h"
#include "loop.h"
#include "hist.h"
#include "workload.h"

/* Half a bucket's width over its lower bound: the error the histogram promises. */
#define HIST_REL_ERROR (1.0 / (2 << LAT_HIST_SUB_BITS))

static struct lat_hist *hist_new(void)
{
	struct lat_hist *h = malloc(sizeof(*h));

	cr_assert_not_null(h);
	lat_hist_init(h);
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
	struct lat_hist *h = hist_new();
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		lat_hist_record(h, v[i]);
		sum += (double)v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	cr_assert_eq(h->count, n);
	cr_assert_eq(h->min, v[0]);
	cr_assert_eq(h->max, v[n - 1]);
	cr_assert(fabs(lat_hist_mean(h) - sum / n) <= 1e-9 * (sum / n), "mean %f, exact %f",
		  lat_hist_mean(h), sum / n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t exact = v[lat_hist_rank(n, qs[i]) - 1];
		uint64_t got = lat_hist_percentile(h, qs[i]);
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
	struct workload_rng r;

	workload_rng_seed(&r, 1, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = 1 + workload_rng_next(&r) % 1000000;
	check_against_exact(samples, SAMPLES);
}

Test(hist, exponential)
{
	struct workload_rng r;

	workload_rng_seed(&r, 2, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		/* exponential, mean 50 us in ns */
		samples[i] = (uint64_t)(-log(1 - workload_rng_unit(&r)) * 50000);
	check_against_exact(samples, SAMPLES);
}

Test(hist, bimodal)
{
	struct workload_rng r;

	workload_rng_seed(&r, 3, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = i % 10 ? 9000 + workload_rng_next(&r) % 2000	 /* ~10 us */
				    : 4500000 + workload_rng_next(&r) % 1000000; /* ~5 ms */
	check_against_exact(samples, SAMPLES);
}

Test(hist, huge_values_up_to_ten_seconds)
{
	struct workload_rng r;

	workload_rng_seed(&r, 4, 0);
	for (size_t i = 0; i < SAMPLES; i++)
		samples[i] = 1000000000ULL + workload_rng_next(&r) % 9000000001ULL;
	samples[0] = 10000000000ULL;
	check_against_exact(samples, SAMPLES);
}

Test(hist, constant_is_exact)
{
	struct lat_hist *h = hist_new();

	for (int i = 0; i < 1000; i++)
		lat_hist_record(h, 123457);
	for (double q = 0; q <= 100; q += 0.5)
		cr_assert_eq(lat_hist_percentile(h, q), 123457, "p%g", q);
	cr_assert_eq(lat_hist_mean(h), 123457.0);
	free(h);
}

Test(hist, single_value)
{
	struct lat_hist *h = hist_new();

	lat_hist_record(h, 987654321);
	cr_assert_eq(lat_hist_percentile(h, 0), 987654321);
	cr_assert_eq(lat_hist_percentile(h, 50), 987654321);
	cr_assert_eq(lat_hist_percentile(h, 100), 987654321);
	cr_assert_eq(lat_hist_mean(h), 987654321.0);
	free(h);
}

Test(hist, small_values_are_exact)
{
	size_t n = 2 << LAT_HIST_SUB_BITS;

	for (size_t i = 0; i < n; i++)
		samples[i] = n - 1 - i;
	check_against_exact(samples, n);
	for (size_t i = 0; i < n; i++) {
		struct lat_hist *h = hist_new();

		lat_hist_record(h, 0);
		lat_hist_record(h, i);
		lat_hist_record(h, n);
		cr_assert_eq(lat_hist_percentile(h, 50), i,
			     "a value below 2^(p+1) has its own bucket");
		free(h);
	}
}

Test(hist, extremes_of_uint64)
{
	struct lat_hist *h = hist_new();
	uint64_t top = UINT64_MAX - 12345, mid = 1ULL << 63;

	lat_hist_record(h, mid + (mid >> 1));
	lat_hist_record(h, top);
	lat_hist_record(h, top);
	cr_assert(fabs((double)lat_hist_percentile(h, 10) - (double)(mid + (mid >> 1))) <=
		  HIST_REL_ERROR * (double)(mid + (mid >> 1)));
	cr_assert_eq(lat_hist_percentile(h, 100), top, "the maximum is kept exactly");
	free(h);
}

Test(hist, empty)
{
	struct lat_hist *h = hist_new();

	cr_assert_eq(lat_hist_percentile(h, 50), 0);
	cr_assert_eq(lat_hist_mean(h), 0.0);
	free(h);
}

Test(hist, nearest_rank)
{
	cr_assert_eq(lat_hist_rank(1000, 99.9), 999);
	cr_assert_eq(lat_hist_rank(1000, 100), 1000);
	cr_assert_eq(lat_hist_rank(1000, 0), 1);
	cr_assert_eq(lat_hist_rank(3, 50), 2);
	cr_assert_eq(lat_hist_rank(1, 99.99), 1);
	cr_assert_eq(lat_hist_rank(200000, 99.99), 199980);
}

Test(hist, merge_equals_histogram_of_the_concatenation)
{
	struct lat_hist *whole = hist_new(), *merged = hist_new();
	struct lat_hist *part[3] = {hist_new(), hist_new(), hist_new()};
	struct workload_rng r;

	workload_rng_seed(&r, 5, 0);
	for (size_t i = 0; i < SAMPLES; i++) {
		/* three threads' worth, each with its own range so min and max differ */
		uint64_t v = (i % 3 + 1) * 1000 + workload_rng_next(&r) % (1000000ULL << (i % 3));

		lat_hist_record(whole, v);
		lat_hist_record(part[i % 3], v);
	}
	for (int i = 0; i < 3; i++)
		lat_hist_merge(merged, part[i]);
	cr_assert_eq(memcmp(whole, merged, sizeof(*whole)), 0, "the merge is not the whole");
	cr_assert_eq(lat_hist_percentile(merged, 99.9), lat_hist_percentile(whole, 99.9));
	for (int i = 0; i < 3; i++)
		free(part[i]);
	free(whole);
	free(merged);
}

static struct workload make_workload(uint32_t keys, double zipf, double get_ratio)
{
	struct workload_config cfg = {
		.keys = keys,
		.key_size = 16,
		.value_size = 64,
		.get_ratio = get_ratio,
		.zipf = zipf,
	};
	struct workload w;

	cr_assert_eq(workload_init(&w, &cfg), 0);
	return w;
}

/*
 * Draws n keys and compares the counts of the top `ranks` ranks, and of all others
 * together, with the exact zipf pmf (computed here, not by the sampler). Each count
 * must be within 5 standard deviations, and the chi-square below chi2_max.
 */
static void check_popularity(uint32_t keys, double gamma, uint32_t ranks, double chi2_max)
{
	struct workload w = make_workload(keys, gamma, 1);
	const uint32_t n = 2000000;
	uint64_t *count = calloc(keys, sizeof(*count)), rest = 0;
	double norm = 0, chi2 = 0, p_rest = 1;
	struct workload_rng r;

	cr_assert_not_null(count);
	workload_rng_seed(&r, 42, 0);
	for (uint32_t i = 0; i < n; i++)
		count[workload_next_key(&w, &r)]++;
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
	workload_free(&w);
}

/* Limits are the chi-square 0.999 quantiles for the degrees of freedom (classes - 1). */
Test(workload, zipf_099_matches_the_pmf)
{
	check_popularity(1000, 0.99, 20, 45.3); /* 21 classes */
}

Test(workload, zipf_12_matches_the_pmf)
{
	check_popularity(100, 1.2, 20, 45.3);
}

Test(workload, uniform_is_flat)
{
	check_popularity(50, 0, 50, 85.4); /* 50 classes, no rest */
}

Test(workload, zipf_detects_a_wrong_exponent)
{
	/* the check above must be able to fail: 1.0 draws judged against 0.99's pmf */
	struct workload w = make_workload(1000, 1.0, 1);
	const uint32_t n = 2000000;
	double norm = 0, expect;
	uint64_t top = 0;
	struct workload_rng r;

	workload_rng_seed(&r, 42, 0);
	for (uint32_t i = 0; i < n; i++)
		top += workload_next_key(&w, &r) == 0;
	for (uint32_t k = 0; k < 1000; k++)
		norm += pow(k + 1.0, -0.99);
	expect = n / norm;
	cr_assert(fabs(top - expect) > 5 * sqrt(expect), "rank 0 would pass for gamma 0.99");
	workload_free(&w);
}

Test(workload, a_seed_fixes_the_request_stream)
{
	struct workload w = make_workload(100000, 0.99, 0.5);
	struct workload_rng a, b, other_stream, other_seed;
	unsigned same_stream = 0, same_seed = 0;

	workload_rng_seed(&a, 7, 0);
	workload_rng_seed(&b, 7, 0);
	workload_rng_seed(&other_stream, 7, 1);
	workload_rng_seed(&other_seed, 8, 0);
	for (int i = 0; i < 10000; i++) {
		uint8_t op_a, op_b, op_s, op_d;
		uint32_t key_a, key_b, key_s, key_d;

		workload_next(&w, &a, &op_a, &key_a);
		workload_next(&w, &b, &op_b, &key_b);
		workload_next(&w, &other_stream, &op_s, &key_s);
		workload_next(&w, &other_seed, &op_d, &key_d);
		cr_assert(op_a == op_b && key_a == key_b, "request %d differs for one seed", i);
		same_stream += op_a == op_s && key_a == key_s;
		same_seed += op_a == op_d && key_a == key_d;
	}
	/* hot keys and a 50 % mix coincide by chance, but far from always */
	cr_assert_lt(same_stream, 2000);
	cr_assert_lt(same_seed, 2000);
	workload_free(&w);
}

Test(workload, get_ratio)
{
	static const double ratios[] = {0, 0.95, 1};

	for (int i = 0; i < 3; i++) {
		struct workload w = make_workload(10, 0, ratios[i]);
		const int n = 1000000;
		double sd = sqrt(ratios[i] * (1 - ratios[i]) / n);
		struct workload_rng r;
		int gets = 0;

		workload_rng_seed(&r, 9, 0);
		for (int j = 0; j < n; j++) {
			uint8_t op;
			uint32_t key;

			workload_next(&w, &r, &op, &key);
			cr_assert(op == XKV_OP_GET || op == XKV_OP_PUT);
			gets += op == XKV_OP_GET;
		}
		cr_assert(fabs((double)gets / n - ratios[i]) <= 5 * sd, "ratio %g: %d GETs of %d",
			  ratios[i], gets, n);
		workload_free(&w);
	}
}

Test(workload, keys_and_values)
{
	struct workload w = make_workload(100000, 0, 1);
	uint8_t key[16], value[64];

	workload_key(&w, 42, key);
	cr_assert_eq(memcmp(key, "k000000000000042", 16), 0);
	workload_key(&w, 99999, key);
	cr_assert_eq(memcmp(key, "k000000000099999", 16), 0);
	workload_value(&w, 0x2a, value);
	cr_assert_eq(memcmp(value, "0000002aijklmnop", 16), 0, "%.16s", value);
	workload_free(&w);
}

Test(workload, config_limits)
{
	struct workload_config ok = {.keys = 1000, .key_size = 4, .value_size = 1400,
				     .get_ratio = 0.5};
	struct workload_config bad[] = {
		{.keys = 1000, .key_size = 3, .value_size = 64, .get_ratio = 0.5}, /* "k" + 3 */
		{.keys = 1000, .key_size = 4, .value_size = 1401, .get_ratio = 0.5},
		{.keys = 1000, .key_size = 41, .value_size = 1400, .get_ratio = 0.5}, /* 1473 B */
		{.keys = 1000, .key_size = 4, .value_size = 64, .get_ratio = 1.5},
		{.keys = 1000, .key_size = 4, .value_size = 64, .get_ratio = 0.5, .zipf = -1},
		{.keys = 0, .key_size = 4, .value_size = 64, .get_ratio = 0.5},
	};
	char why[200];

	cr_assert_eq(workload_config_check(&ok, why, sizeof(why)), 0, "%s", why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		cr_assert_eq(workload_config_check(&bad[i], why, sizeof(why)), -EINVAL, "case %zu",
			     i);
		cr_assert_neq(why[0], '\0', "case %zu says why", i);
	}
}

/* A reply to a request on key `key`: a GET hit carries `value`. */
static struct xkv_msg reply_msg(uint8_t op, uint8_t status, const uint8_t *value, uint32_t len)
{
	return (struct xkv_msg){
		.op = op | XKV_OP_REPLY,
		.status = status,
		.value_len = len,
		.frag_len = len,
		.frag = value,
	};
}

Test(workload, a_wrong_answer_is_never_a_success)
{
	struct workload w = make_workload(1000, 0, 0.5);
	uint8_t right[64], other[64];
	struct xkv_msg m;

	workload_value(&w, 7, right);
	workload_value(&w, 8, other);
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 64);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_OK);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 8, &m), WORKLOAD_ERROR,
		     "another key's value");
	m = reply_msg(XKV_OP_GET, XKV_S_OK, other, 64);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 63);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "short value");
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 32);
	m.value_len = 64; /* the first of two pieces */
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "a piece");
	right[63] ^= 1;
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 64);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "last byte");
	m = reply_msg(XKV_OP_GET, XKV_S_NOT_FOUND, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_MISS);
	m = reply_msg(XKV_OP_GET, XKV_S_BUSY, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_PUT, XKV_S_OK, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_PUT, 7, &m), WORKLOAD_OK);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "PUT's reply");
	m = reply_msg(XKV_OP_PUT, XKV_S_NO_MEMORY, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_PUT, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_PUT, XKV_S_NOT_FOUND, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_PUT, 7, &m), WORKLOAD_ERROR);
	workload_free(&w);
}

#define FAKE_KEYS  500
#define FAKE_DEPTH 8

struct fake_run {
	struct workload w;
	struct fake_server *server;
	struct loop loop;
	_Atomic uint64_t deadline;
	struct bench_stats load, measured;
};

static struct fake_run *fake_run_new(double get_ratio)
{
	struct fake_run *run = calloc(1, sizeof(*run));
	struct loop_config cfg = {
		.depth = FAKE_DEPTH,
		.timeout_ns = 20000000, /* 20 ms */
		.seed = 1,
	};

	cr_assert_not_null(run);
	run->w = make_workload(FAKE_KEYS, 0.99, get_ratio);
	run->server = fake_server_new(&run->w, FAKE_KEYS);
	atomic_store(&run->deadline, UINT64_MAX);
	cfg.deadline_ns = &run->deadline;
	cr_assert_eq(loop_init(&run->loop, &run->server->base, &run->w, &cfg), 0);
	return run;
}

/* Loads every key, then measures for 100 ms; the fake's misbehaviour starts after loading. */
static void fake_run(struct fake_run *run, const struct fake_faults *faults)
{
	cr_assert_eq(loop_load(&run->loop, 0, 1, FAKE_KEYS, &run->load), 0);
	cr_assert_eq(run->load.op[BENCH_PUT].ok, FAKE_KEYS);
	run->server->faults = *faults;
	run->server->requests = run->server->replied = 0;
	atomic_store(&run->deadline, bench_now_ns() + 100000000);
	cr_assert_eq(loop_measure(&run->loop, 0, &run->measured), 0);
}

static void fake_run_free(struct fake_run *run)
{
	loop_free(&run->loop);
	workload_free(&run->w);
	fake_server_free(run->server);
	free(run);
}

#define TOTAL(s, field) ((s)->op[BENCH_GET].field + (s)->op[BENCH_PUT].field)

/* What the fake answered, within the FAKE_DEPTH requests in flight when time ran out. */
static void assert_near(uint64_t counted, uint64_t truth, const char *what)
{
	cr_assert(counted <= truth && truth - counted <= FAKE_DEPTH,
		  "%s: counted %llu, the server did %llu", what, (unsigned long long)counted,
		  (unsigned long long)truth);
}

Test(closed_loop, a_clean_server_gives_only_right_answers)
{
	struct fake_run *run = fake_run_new(0.9);

	fake_run(run, &(struct fake_faults){0});
	cr_assert_gt(TOTAL(&run->measured, ok), 1000, "the loop ran");
	cr_assert_eq(TOTAL(&run->measured, errors), 0);
	cr_assert_eq(TOTAL(&run->measured, misses), 0);
	/*
	 * The fake answers at once, so nothing is lost, unless this VM stalls the test
	 * longer than the timeout: then the request counts lost and its reply late,
	 * once each. Either way every reply is accounted for exactly once.
	 */
	cr_assert_eq(run->measured.late, TOTAL(&run->measured, lost));
	cr_assert_eq(run->measured.invalid, 0);
	assert_near(TOTAL(&run->measured, ok) + TOTAL(&run->measured, lost), run->server->replied,
		    "answers");
	cr_assert_eq(run->measured.op[BENCH_GET].latency.count, run->measured.op[BENCH_GET].ok);
	fake_run_free(run);
}

Test(closed_loop, lost_requests_are_counted_once_and_not_retried)
{
	struct fake_run *run = fake_run_new(0.9);
	uint64_t lost;

	fake_run(run, &(struct fake_faults){.drop_every = 10});
	lost = TOTAL(&run->measured, lost);
	cr_assert_gt(lost, 10);
	/* lost beyond the drops only if a stall outlasted the timeout: their replies came late */
	assert_near(lost - run->measured.late, run->server->dropped, "lost");
	cr_assert_eq(TOTAL(&run->measured, errors), 0);
	/* every request sent was either answered or dropped: nothing was sent twice */
	assert_near(TOTAL(&run->measured, ok) + lost, run->server->requests, "requests");
	fake_run_free(run);
}

/* Each of the fake's `wrong` answers is an error: never an answer, never a latency. */
static void assert_errors(const struct fake_run *run, uint64_t wrong)
{
	const struct bench_stats *m = &run->measured;

	cr_assert_gt(TOTAL(m, errors), 100);
	assert_near(TOTAL(m, errors), wrong, "errors");
	assert_near(TOTAL(m, ok) + TOTAL(m, errors), run->server->replied, "answers");
	for (int op = 0; op < BENCH_OPS; op++)
		cr_assert_eq(m->op[op].latency.count, m->op[op].ok + m->op[op].misses,
			     "latencies are of answers only");
}

Test(closed_loop, corrupt_values_are_errors)
{
	struct fake_run *run = fake_run_new(1);

	fake_run(run, &(struct fake_faults){.corrupt_every = 3});
	assert_errors(run, run->server->corrupted);
	fake_run_free(run);
}

Test(closed_loop, another_requests_timestamp_is_an_error)
{
	struct fake_run *run = fake_run_new(0.5);

	fake_run(run, &(struct fake_faults){.restamp_every = 4});
	assert_errors(run, run->server->restamped);
	fake_run_free(run);
}

Test(closed_loop, duplicates_are_late_not_answers)
{
	struct fake_run *run = fake_run_new(0.9);

	fake_run(run, &(struct fake_faults){.duplicate = true, .reverse = true});
	cr_assert_eq(TOTAL(&run->measured, errors), 0);
	/* an answered request leaves one late copy, one lost to a stall leaves two */
	assert_near(TOTAL(&run->measured, ok) + TOTAL(&run->measured, lost), run->server->replied,
		    "answers");
	assert_near(run->measured.late, run->server->replied + TOTAL(&run->measured, lost),
		    "late copies");
	fake_run_free(run);
}

Test(closed_loop, misses_without_load)
{
	struct fake_run *run = fake_run_new(1);

	cr_assert_eq(loop_load(&run->loop, 0, 1, 0, &run->load), 0, "nothing to load");
	atomic_store(&run->deadline, bench_now_ns() + 100000000);
	cr_assert_eq(loop_measure(&run->loop, 0, &run->measured), 0);
	cr_assert_gt(run->measured.op[BENCH_GET].misses, 1000);
	assert_near(run->measured.op[BENCH_GET].misses, run->server->not_found, "misses");
	cr_assert_eq(run->measured.op[BENCH_GET].ok, 0, "nothing was stored");
	fake_run_free(run);
}
