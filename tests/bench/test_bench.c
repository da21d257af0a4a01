// SPDX-License-Identifier: MIT
/*
 * xkv-bench's parts without a network: keys by popularity, the request stream's
 * determinism, value sizes, reply checking, and the closed loop against an in-memory server
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
#include "workload.h"

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
 * Zipf rank r is key r: the hottest keys are the first, each as often as the pmf says
 * (within 5 standard deviations). The sampler itself is tested in tests/common.
 */
Test(workload, zipf_rank_r_is_key_r)
{
	struct workload w = make_workload(1000, 0.99, 1);
	const uint32_t n = 1000000;
	uint64_t count[5] = {0};
	double norm = 0;
	struct rng r;

	rng_seed(&r, 42, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = workload_next_key(&w, &r);

		cr_assert_lt(key, 1000);
		if (key < 5)
			count[key]++;
	}
	for (uint32_t k = 0; k < 1000; k++)
		norm += pow(k + 1.0, -0.99);
	for (uint32_t k = 0; k < 5; k++) {
		double p = pow(k + 1.0, -0.99) / norm, expect = p * n;

		cr_assert(fabs((double)count[k] - expect) <= 5 * sqrt(expect * (1 - p)),
			  "key %u: %llu draws, the pmf of rank %u expects %.0f", k,
			  (unsigned long long)count[k], k, expect);
	}
}

/* The hottest key of n draws elapsed_ns into the phase. */
static uint32_t hottest_drawn(const struct workload *w, uint64_t elapsed_ns)
{
	static uint32_t count[1000];
	uint32_t best = 0;
	struct rng r;

	memset(count, 0, sizeof(count));
	rng_seed(&r, 5, 0);
	for (int i = 0; i < 100000; i++) {
		uint8_t op;
		uint32_t key;

		workload_next_p(w, &r, 0, elapsed_ns, &op, &key);
		cr_assert_lt(key, 1000);
		count[key]++;
	}
	for (uint32_t k = 1; k < 1000; k++)
		if (count[k] > count[best])
			best = k;
	return best;
}

/*
 * --shuffle: within a period the ranks stay on the same keys, a bijection; each new
 * period moves them by a new offset, so the hot set is other keys; period 0 is as if
 * there were no shuffle.
 */
Test(workload, a_shuffle_moves_the_ranks_to_other_keys_each_period)
{
	struct workload w = make_workload(1000, 0.99, 1);
	const uint64_t s = 1000000000ull;
	uint32_t first[3];

	w.shuffle_ns = 10 * s;
	for (uint64_t period = 0; period < 3; period++) {
		static uint8_t seen[1000];

		memset(seen, 0, sizeof(seen));
		for (uint32_t rank = 0; rank < 1000; rank++) {
			uint32_t key = workload_rank_key(&w, rank, period * 10 * s);

			cr_assert_lt(key, 1000);
			cr_assert(!seen[key], "period %llu: two ranks on key %u",
				  (unsigned long long)period, key);
			seen[key] = 1;
			cr_assert_eq(workload_rank_key(&w, rank, period * 10 * s + 9 * s), key,
				     "rank %u moved within period %llu", rank,
				     (unsigned long long)period);
		}
		first[period] = workload_rank_key(&w, 0, period * 10 * s);
	}
	cr_assert_eq(first[0], 0, "before the first shuffle, rank 0 is key 0");
	cr_assert(first[1] != first[0] && first[2] != first[1] && first[2] != first[0],
		  "the hottest key did not move: %u %u %u", first[0], first[1], first[2]);
	cr_assert_eq(hottest_drawn(&w, 0), first[0]);
	cr_assert_eq(hottest_drawn(&w, 15 * s), first[1], "the draws do not follow the shuffle");
}

/* --hot-in: at that moment the coldest key becomes the hottest, and only it moves. */
Test(workload, hot_in_makes_the_coldest_key_the_hottest_at_once)
{
	struct workload w = make_workload(1000, 0.99, 1);
	const uint64_t s = 1000000000ull;

	w.hot_in_ns = 3 * s;
	cr_assert_eq(workload_rank_key(&w, 0, 3 * s - 1), 0);
	cr_assert_eq(workload_rank_key(&w, 999, 3 * s - 1), 999);
	cr_assert_eq(workload_rank_key(&w, 0, 3 * s), 999);
	cr_assert_eq(workload_rank_key(&w, 999, 3 * s), 0);
	for (uint32_t rank = 1; rank < 999; rank++)
		cr_assert_eq(workload_rank_key(&w, rank, 4 * s), rank);
	cr_assert_eq(hottest_drawn(&w, 2 * s), 0);
	cr_assert_eq(hottest_drawn(&w, 3 * s), 999);
}

Test(workload, a_seed_fixes_the_request_stream)
{
	struct workload w = make_workload(100000, 0.99, 0.5);
	struct rng a, b, other_stream, other_seed;
	unsigned same_stream = 0, same_seed = 0;

	rng_seed(&a, 7, 0);
	rng_seed(&b, 7, 0);
	rng_seed(&other_stream, 7, 1);
	rng_seed(&other_seed, 8, 0);
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
}

Test(workload, get_ratio)
{
	static const double ratios[] = {0, 0.95, 1};

	for (int i = 0; i < 3; i++) {
		struct workload w = make_workload(10, 0, ratios[i]);
		const int n = 1000000;
		double sd = sqrt(ratios[i] * (1 - ratios[i]) / n);
		struct rng r;
		int gets = 0;

		rng_seed(&r, 9, 0);
		for (int j = 0; j < n; j++) {
			uint8_t op;
			uint32_t key;

			workload_next(&w, &r, &op, &key);
			cr_assert(op == XKV_OP_GET || op == XKV_OP_PUT);
			gets += op == XKV_OP_GET;
		}
		cr_assert(fabs((double)gets / n - ratios[i]) <= 5 * sd, "ratio %g: %d GETs of %d",
			  ratios[i], gets, n);
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
	workload_value(&w, 0x2a, 0, 64, value);
	cr_assert_eq(memcmp(value, "0000002aijklmnop", 16), 0, "%.16s", value);
}

/* Any piece of a value is the same bytes as that part of the whole value. */
Test(workload, a_piece_is_that_part_of_the_value)
{
	struct workload w = make_workload(1000, 0, 1);
	const uint32_t size = 3 * WORKLOAD_CHUNK + 77;
	uint8_t *whole = malloc(size), *piece = malloc(size);
	struct rng rng;

	cr_assert(whole && piece);
	workload_value(&w, 0xabc, 0, size, whole);
	cr_assert_eq(memcmp(whole, "00000abc", 8), 0);
	for (uint32_t j = 8; j < size; j++)
		cr_assert_eq(whole[j], 'a' + j % 26, "byte %u", j);
	rng_seed(&rng, 3, 0);
	for (int i = 0; i < 2000; i++) {
		uint32_t off = (uint32_t)(rng_next(&rng) % size);
		uint32_t len = (uint32_t)(rng_next(&rng) % (size - off + 1));

		workload_value(&w, 0xabc, off, len, piece);
		cr_assert_eq(memcmp(piece, whole + off, len), 0, "piece %u+%u", off, len);
	}
	free(whole);
	free(piece);
}

static struct workload make_profile(enum workload_profile profile, uint32_t keys, double large_pct,
				    uint32_t large_size)
{
	struct workload_config cfg = {
		.keys = keys,
		.key_size = 16,
		.profile = profile,
		.value_size = 64,
		.large_pct = large_pct,
		.large_size = large_size,
		.get_ratio = 1,
		.zipf = 0.99,
	};
	struct workload w;

	cr_assert_eq(workload_init(&w, &cfg), 0);
	return w;
}

/* Minos Sec. 5.3: 40 % of the keys tiny (1-13 B), 60 % small (14-1400 B), large from 1500 B. */
Test(workload, etc_sizes_are_trimodal)
{
	const uint32_t keys = 200000;
	struct workload w = make_profile(WORKLOAD_ETC, keys, 0.125, 500000);
	uint32_t large = w.cfg.large_keys, tiny = 0, seen[WORKLOAD_SMALL_MAX + 1] = {0};
	uint64_t large_sum = 0;

	cr_assert_eq(large, 125, "200000 x 10 K / 16 M");
	for (uint32_t k = 0; k < keys - large; k++) {
		uint32_t size = workload_value_size(&w, k);

		cr_assert(size >= 1 && size <= WORKLOAD_SMALL_MAX, "key %u: %u B", k, size);
		tiny += size <= WORKLOAD_TINY_MAX;
		seen[size]++;
	}
	/* binomial: sd = sqrt(n p (1 - p)) ~ 219 */
	cr_assert(fabs(tiny - 0.4 * (keys - large)) < 5 * 219, "tiny keys: %u", tiny);
	for (uint32_t size = 1; size <= WORKLOAD_SMALL_MAX; size++)
		cr_assert_gt(seen[size], 0, "no key of %u B: sizes are not uniform", size);
	for (uint32_t k = keys - large; k < keys; k++) {
		uint32_t size = workload_value_size(&w, k);

		cr_assert(size >= WORKLOAD_LARGE_MIN && size <= 500000, "large key %u: %u B", k,
			  size);
		large_sum += size;
	}
	cr_assert_gt(large_sum / large, 100000, "large sizes spread over 1500..500000");
	cr_assert_eq(workload_value_size_max(&w.cfg), 500000);
}

Test(workload, bimodal_sizes)
{
	struct workload w = make_profile(WORKLOAD_BIMODAL, 1000, 1, 20000);

	cr_assert_eq(w.cfg.large_keys, 1, "at least one large key");
	cr_assert_eq(workload_value_size(&w, 0), 64);
	cr_assert_eq(workload_value_size(&w, 998), 64);
	cr_assert_eq(workload_value_size(&w, 999), 20000);
	cr_assert_eq(workload_size_class(64), WORKLOAD_SMALL);
	cr_assert_eq(workload_size_class(13), WORKLOAD_TINY);
	cr_assert_eq(workload_size_class(1401), WORKLOAD_LARGE);
	w = make_profile(WORKLOAD_BIMODAL, 1000, 0, 20000);
	cr_assert_eq(w.cfg.large_keys, 0, "no large requests, no large keys");
	cr_assert_eq(workload_value_size(&w, 999), 64);
}

/*
 * p_L percent of the requests go to large keys, uniformly among them; the others
 * keep their zipf popularity.
 */
Test(workload, large_requests_are_p_l_percent_and_uniform)
{
	const uint32_t keys = 10000, n = 1000000;
	struct workload w = make_profile(WORKLOAD_BIMODAL, keys, 5, 2000);
	struct workload_config cfg = w.cfg;
	uint32_t large_keys, regular;
	uint64_t *count = calloc(keys, sizeof(*count)), large = 0, min = UINT64_MAX, max = 0;
	double h = 0, expect;
	struct rng rng;

	cfg.large_keys = 100;
	cr_assert_eq(workload_init(&w, &cfg), 0);
	large_keys = w.cfg.large_keys;
	regular = keys - large_keys;
	rng_seed(&rng, 9, 0);
	for (uint32_t i = 0; i < n; i++)
		count[workload_next_key(&w, &rng)]++;
	for (uint32_t k = regular; k < keys; k++) {
		large += count[k];
		min = count[k] < min ? count[k] : min;
		max = count[k] > max ? count[k] : max;
	}
	/* n p = 50000, sd ~ 218 */
	cr_assert(fabs((double)large - 0.05 * n) < 5 * 218, "large requests: %llu",
		  (unsigned long long)large);
	/* each large key ~ 500 draws, sd ~ 22: uniform within 5 sd */
	cr_assert(min > 500 - 5 * 22 && max < 500 + 5 * 22, "large keys %llu..%llu",
		  (unsigned long long)min, (unsigned long long)max);
	for (uint32_t r = 0; r < regular; r++)
		h += pow(r + 1.0, -0.99);
	expect = 0.95 * n / h; /* the hottest key's share of the small requests */
	cr_assert(fabs(count[0] - expect) < 5 * sqrt(expect), "rank 0: %llu, expected %.0f",
		  (unsigned long long)count[0], expect);
	free(count);
}

Test(workload, config_limits)
{
	struct workload_config ok[] = {
		{.keys = 1000, .key_size = 4, .value_size = XKV_VALUE_MAX, .get_ratio = 0.5},
		{.keys = 2, .key_size = 2, .profile = WORKLOAD_BIMODAL, .value_size = 0,
		 .large_pct = 99, .large_size = XKV_VALUE_MAX},
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_ETC, .large_pct = 0.125,
		 .large_size = WORKLOAD_LARGE_MIN},
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_ETC, .large_pct = 0},
	};
	struct workload_config bad[] = {
		{.keys = 1000, .key_size = 3, .value_size = 64, .get_ratio = 0.5}, /* "k" + 3 */
		{.keys = 1000, .key_size = 4, .value_size = XKV_VALUE_MAX + 1, .get_ratio = 0.5},
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_ETC, .large_pct = 1,
		 .large_size = WORKLOAD_LARGE_MIN - 1},
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_BIMODAL, .large_pct = 1,
		 .large_size = XKV_VALUE_MAX + 1},
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_BIMODAL, .large_pct = 100,
		 .large_size = 2000},
		{.keys = 1, .key_size = 2, .profile = WORKLOAD_BIMODAL, .large_pct = 1,
		 .large_size = 2000}, /* no room for a small key */
		{.keys = 1000, .key_size = 4, .profile = WORKLOAD_BIMODAL, .large_pct = 1,
		 .large_size = 2000, .large_keys = 1000},
		{.keys = 1000, .key_size = 4, .value_size = 64, .get_ratio = 1.5},
		{.keys = 1000, .key_size = 4, .value_size = 64, .get_ratio = 0.5, .zipf = -1},
		{.keys = 0, .key_size = 4, .value_size = 64, .get_ratio = 0.5},
	};
	char why[200];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_assert_eq(workload_config_check(&ok[i], why, sizeof(why)), 0, "case %zu: %s", i,
			     why);
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

/* Judges m as the first datagram of the reply to op on key. */
static enum workload_outcome judge(const struct workload *w, uint8_t op, uint32_t key,
				   const struct xkv_msg *m)
{
	uint32_t received = 0;

	return workload_check_reply(w, op, key, m, &received);
}

Test(workload, a_wrong_answer_is_never_a_success)
{
	struct workload w = make_workload(1000, 0, 0.5);
	uint8_t right[64], other[64];
	struct xkv_msg m;

	workload_value(&w, 7, 0, 64, right);
	workload_value(&w, 8, 0, 64, other);
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 64);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_OK);
	cr_assert_eq(judge(&w, XKV_OP_GET, 8, &m), WORKLOAD_ERROR, "another key's value");
	m = reply_msg(XKV_OP_GET, XKV_S_OK, other, 64);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 63);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "short value");
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 0);
	m.value_len = 64;
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "an empty piece");
	right[63] ^= 1;
	m = reply_msg(XKV_OP_GET, XKV_S_OK, right, 64);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "last byte");
	m = reply_msg(XKV_OP_GET, XKV_S_NOT_FOUND, NULL, 0);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_MISS);
	m = reply_msg(XKV_OP_GET, XKV_S_BUSY, NULL, 0);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_PUT, XKV_S_OK, NULL, 0);
	cr_assert_eq(judge(&w, XKV_OP_PUT, 7, &m), WORKLOAD_OK);
	cr_assert_eq(judge(&w, XKV_OP_GET, 7, &m), WORKLOAD_ERROR, "PUT's reply");
	m = reply_msg(XKV_OP_PUT, XKV_S_NO_MEMORY, NULL, 0);
	cr_assert_eq(judge(&w, XKV_OP_PUT, 7, &m), WORKLOAD_ERROR);
	m = reply_msg(XKV_OP_PUT, XKV_S_NOT_FOUND, NULL, 0);
	cr_assert_eq(judge(&w, XKV_OP_PUT, 7, &m), WORKLOAD_ERROR);
}

/* A value in pieces is right only whole and in order; a repeated piece is ignored. */
Test(workload, pieces_count_only_in_order_and_whole)
{
	struct workload w = make_workload(1000, 0, 0.5);
	uint8_t value[64];
	struct xkv_msg first, second;
	uint32_t received = 0;

	workload_value(&w, 7, 0, 64, value);
	first = reply_msg(XKV_OP_GET, XKV_S_OK, value, 40);
	second = reply_msg(XKV_OP_GET, XKV_S_OK, value + 40, 24);
	first.value_len = second.value_len = 64;
	second.frag_offset = 40;
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &first, &received), WORKLOAD_PARTIAL);
	cr_assert_eq(received, 40);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &second, &received), WORKLOAD_OK);
	received = 0;
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &second, &received), WORKLOAD_PARTIAL,
		     "the second piece first: the first is missing");
	cr_assert_eq(received, 0, "and is still awaited");
	received = 40;
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &first, &received), WORKLOAD_PARTIAL,
		     "the first piece twice: ignored");
	cr_assert_eq(received, 40);
	value[3] ^= 1;
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &first, &received), WORKLOAD_ERROR,
		     "a wrong copy of a piece taken before");
	received = 40;
	second.frag_len = 25; /* past the value's end */
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &second, &received), WORKLOAD_ERROR);
	received = 40;
	second = reply_msg(XKV_OP_GET, XKV_S_NOT_FOUND, NULL, 0);
	cr_assert_eq(workload_check_reply(&w, XKV_OP_GET, 7, &second, &received), WORKLOAD_ERROR,
		     "NOT_FOUND after a piece of the value");
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

/* A run on wc's workload; dest: to a list of nservers, each key to its dest (or NULL). */
static struct fake_run *fake_run_to(const struct workload_config *wc, const uint8_t *dest,
				    uint32_t nservers)
{
	struct fake_run *run = calloc(1, sizeof(*run));
	struct loop_config cfg = {
		.depth = FAKE_DEPTH,
		.timeout_ns = 20000000, /* 20 ms */
		.seed = 1,
		.dest = dest,
		.nservers = nservers,
	};

	cr_assert_not_null(run);
	cr_assert_eq(workload_init(&run->w, wc), 0);
	run->server = fake_server_new(&run->w, FAKE_KEYS);
	atomic_store(&run->deadline, UINT64_MAX);
	cfg.deadline_ns = &run->deadline;
	cr_assert_eq(loop_init(&run->loop, &run->server->base, &run->w, &cfg), 0);
	return run;
}

static struct fake_run *fake_run_of(const struct workload_config *wc)
{
	return fake_run_to(wc, NULL, 0);
}

static struct fake_run *fake_run_new(double get_ratio)
{
	struct workload_config wc = {
		.keys = FAKE_KEYS, .key_size = 16, .value_size = 64, .get_ratio = get_ratio,
		.zipf = 0.99};

	return fake_run_of(&wc);
}

/* Half GETs, a fifth of them for large values of 20000 B: 20 reply datagrams, 15 PUT ones. */
static struct fake_run *fake_run_large(void)
{
	struct workload_config wc = {
		.keys = FAKE_KEYS, .key_size = 16, .profile = WORKLOAD_BIMODAL, .value_size = 64,
		.large_pct = 20, .large_size = 20000, .large_keys = 10, .get_ratio = 0.5,
		.zipf = 0.99};

	return fake_run_of(&wc);
}

/* PUTs only, half of them of 100000 B: 70 datagrams each, more than a burst. */
static struct fake_run *fake_run_large_puts(void)
{
	struct workload_config wc = {
		.keys = FAKE_KEYS, .key_size = 16, .profile = WORKLOAD_BIMODAL, .value_size = 64,
		.large_pct = 50, .large_size = 100000, .large_keys = 10, .get_ratio = 0};

	return fake_run_of(&wc);
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

/* A GET answered VALIDATE is no answer: it goes again with the token, and every one after. */
Test(closed_loop, validations_are_asked_again_with_the_token)
{
	struct fake_run *run = fake_run_new(0.9);

	fake_run(run, &(struct fake_faults){.token = 0x5eed});
	cr_assert_gt(TOTAL(&run->measured, ok), 1000, "the loop ran");
	cr_assert_eq(TOTAL(&run->measured, errors), 0, "VALIDATE is not an error");
	cr_assert_eq(run->measured.validations, run->server->validated);
	cr_assert(run->measured.validations >= 1 && run->measured.validations <= FAKE_DEPTH,
		  "only the GETs sent before the token came: %llu",
		  (unsigned long long)run->measured.validations);
	fake_run_free(run);
}

/* A list: each request goes to its key's server, with that server's token alone. */
Test(closed_loop, each_request_goes_to_its_keys_server_with_its_token)
{
	static uint8_t dest[FAKE_KEYS];
	struct workload_config wc = {.keys = FAKE_KEYS, .key_size = 16, .value_size = 64,
				     .get_ratio = 0.9, .zipf = 0.99};
	struct fake_run *run;

	for (uint32_t k = 0; k < FAKE_KEYS; k++)
		dest[k] = (uint8_t)(k * 7 % 3);
	run = fake_run_to(&wc, dest, 3);
	fake_run(run, &(struct fake_faults){.token = 0x5eed, .dest = dest});
	cr_assert_gt(TOTAL(&run->measured, ok), 1000, "the loop ran");
	cr_assert_eq(TOTAL(&run->measured, errors), 0);
	/* one token for all would be refused by two servers of three, again and again */
	cr_assert(run->measured.validations >= 3 && run->measured.validations <= 3 * FAKE_DEPTH,
		  "validations: %llu", (unsigned long long)run->measured.validations);
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

Test(closed_loop, values_in_pieces_both_ways)
{
	struct fake_run *run = fake_run_large();
	const struct bench_stats *m = &run->measured;
	const struct op_stats *large = &m->size_class[WORKLOAD_LARGE];
	uint64_t class_ok = 0, class_latencies = 0;

	fake_run(run, &(struct fake_faults){0});
	cr_assert_gt(run->server->pieces, 10 * 15, "large PUTs went in pieces");
	cr_assert_gt(large->ok, 10, "large requests answered");
	cr_assert_gt(m->size_class[WORKLOAD_SMALL].ok, 100);
	cr_assert_eq(TOTAL(m, errors), 0);
	cr_assert_eq(m->invalid, 0);
	for (int c = 0; c < WORKLOAD_SIZE_CLASSES; c++) {
		class_ok += m->size_class[c].ok;
		class_latencies += m->size_class[c].latency.count;
	}
	cr_assert_eq(class_ok, TOTAL(m, ok), "each answer in one size class");
	cr_assert_eq(class_latencies, TOTAL(m, ok));
	/* the fake answers a request as soon as it is whole: a large one is its pieces late */
	cr_assert_gt(hist_percentile(&large->latency, 50),
		     hist_percentile(&m->size_class[WORKLOAD_SMALL].latency, 50));
	fake_run_free(run);
}

Test(closed_loop, a_corrupt_piece_is_an_error)
{
	struct fake_run *run = fake_run_large();

	fake_run(run, &(struct fake_faults){.corrupt_every = 2});
	cr_assert_gt(run->measured.size_class[WORKLOAD_LARGE].errors, 5);
	assert_near(TOTAL(&run->measured, errors), run->server->corrupted, "errors");
	fake_run_free(run);
}

/* A reply whose pieces come out of order waits for the one that came early: lost. */
Test(closed_loop, reordered_pieces_are_lost)
{
	struct fake_run *run = fake_run_large();
	const struct bench_stats *m = &run->measured;

	fake_run(run, &(struct fake_faults){.reverse = true});
	cr_assert_gt(m->size_class[WORKLOAD_LARGE].lost, 3);
	cr_assert_eq(TOTAL(m, errors), 0, "every piece is right");
	cr_assert_gt(m->size_class[WORKLOAD_SMALL].ok, 100, "one datagram each");
	fake_run_free(run);
}

/* Every piece twice: the copies are ignored, each reply answers once. */
Test(closed_loop, repeated_pieces_are_ignored)
{
	struct fake_run *run = fake_run_large();
	const struct bench_stats *m = &run->measured;

	fake_run(run, &(struct fake_faults){.duplicate = true});
	cr_assert_gt(m->size_class[WORKLOAD_LARGE].ok, 10);
	cr_assert_eq(TOTAL(m, errors), 0);
	assert_near(TOTAL(m, ok) + TOTAL(m, lost), run->server->replied, "answers");
	fake_run_free(run);
}

/*
 * A transport that takes part of a batch is not full: the loop sends the rest at
 * once instead of waiting for replies that cannot come before the last piece.
 */
Test(closed_loop, a_partial_send_is_continued_at_once)
{
	struct fake_run *run = fake_run_large_puts();

	fake_run(run, &(struct fake_faults){.send_max = 8});
	cr_assert_gt(run->server->pieces, 1000, "PUTs went in pieces, 8 at a time");
	cr_assert_eq(run->server->idle_waits, 0, "the loop waited with pieces still to send");
	cr_assert_eq(TOTAL(&run->measured, errors), 0);
	fake_run_free(run);
}

/*
 * A server that refuses a PUT at its first piece (out of reassembly memory) is
 * answered while the PUT is still going out: an error, at once, and the rest of its
 * pieces are not sent.
 */
Test(closed_loop, a_put_refused_midway_is_an_error_and_stops)
{
	struct fake_run *run = fake_run_large_puts();
	const struct bench_stats *m = &run->measured;
	uint32_t pieces = (100000 - 1) / (LOOP_DGRAM_CAP - 32 - 16) + 1;

	fake_run(run, &(struct fake_faults){.refuse_pieces = true});
	cr_assert_gt(run->server->refused, 10);
	assert_near(m->size_class[WORKLOAD_LARGE].errors, run->server->refused, "errors");
	cr_assert_eq(m->size_class[WORKLOAD_LARGE].ok, 0);
	cr_assert_gt(pieces, LOOP_PIECE_BURST, "a PUT takes more than one burst");
	cr_assert_leq(run->server->refused_pieces, LOOP_PIECE_BURST * run->server->refused,
		      "%llu pieces of %llu refused PUTs of %u pieces: not stopped",
		      (unsigned long long)run->server->refused_pieces,
		      (unsigned long long)run->server->refused, pieces);
	cr_assert_eq(m->size_class[WORKLOAD_SMALL].errors, 0);
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
