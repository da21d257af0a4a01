// SPDX-License-Identifier: MIT
/*
 * The open loop: the Poisson schedule's statistics and determinism, and latency
 * measured from each request's intended send time against the fake server
 * (fake_server.h) when its replies are slow, when the generator stalls, when it
 * stalls past the end, and when its slots run out; and that it sleeps between
 * arrivals but their last LOOP_WAKE_EARLY_NS. The loop and the fake server
 * run on a fake clock (fake_clock.h): the test, not the scheduler, decides when
 * the generator falls behind.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "arrivals.h"
#include "fake_clock.h"
#include "fake_server.h"
#include "loop.h"

#define NS_PER_MS 1000000ULL
#define GAPS	  1000000

struct gap_stats {
	double mean, cv, over_mean; /* over_mean: share of gaps longer than the mean asked for */
};

static struct gap_stats gap_stats(const double *gaps, size_t n, double mean_asked)
{
	double sum = 0, sum2 = 0, over = 0, mean;

	for (size_t i = 0; i < n; i++) {
		sum += gaps[i];
		over += gaps[i] > mean_asked;
	}
	mean = sum / n;
	for (size_t i = 0; i < n; i++)
		sum2 += (gaps[i] - mean) * (gaps[i] - mean);
	return (struct gap_stats){mean, sqrt(sum2 / (n - 1)) / mean, over / n};
}

/*
 * Exponential gaps: mean 1/rate, coefficient of variation 1, P(gap > mean) = 1/e.
 * With 10^6 gaps the standard errors are 0.1 %, 0.0014 and 0.0005: the tolerances
 * below are 5 to 10 of them.
 */
static bool poisson_like(const struct gap_stats *s, double mean_asked)
{
	return fabs(s->mean / mean_asked - 1) < 0.01 && fabs(s->cv - 1) < 0.01 &&
	       fabs(s->over_mean - exp(-1)) < 0.003;
}

static double gaps[GAPS];

Test(arrivals, gaps_are_exponential_with_the_rate_asked)
{
	static const double rates[] = {1000, 250000, 3e6};

	for (int r = 0; r < 3; r++) {
		double prev = 5000, mean = 1e9 / rates[r];
		struct gap_stats s;
		struct arrivals a;

		arrivals_init(&a, rates[r], 42, 3, 5000);
		for (size_t i = 0; i < GAPS; i++) {
			gaps[i] = a.next_ns - prev;
			prev = a.next_ns;
			arrivals_advance(&a);
		}
		s = gap_stats(gaps, GAPS, mean);
		cr_assert(poisson_like(&s, mean),
			  "rate %g: mean %g ns (asked %g), cv %g, P(> mean) %g", rates[r], s.mean,
			  mean, s.cv, s.over_mean);
	}
}

Test(arrivals, the_check_rejects_other_processes)
{
	/* the same mean with uniform gaps (cv 0.58), and exponential gaps of another mean */
	struct rng rng;
	struct gap_stats s;

	rng_seed(&rng, 42, 0);
	for (size_t i = 0; i < GAPS; i++)
		gaps[i] = 2000 * rng_uniform(&rng);
	s = gap_stats(gaps, GAPS, 1000);
	cr_assert_not(poisson_like(&s, 1000), "uniform gaps pass as Poisson (cv %g)", s.cv);
	for (size_t i = 0; i < GAPS; i++)
		gaps[i] = -log(1 - rng_uniform(&rng)) * 1030;
	s = gap_stats(gaps, GAPS, 1000);
	cr_assert_not(poisson_like(&s, 1000), "a 3 %% slower rate passes (mean %g)", s.mean);
}

Test(arrivals, a_seed_fixes_the_schedule)
{
	struct arrivals a, b, other_stream, other_seed, later;
	unsigned same_stream = 0, same_seed = 0;

	arrivals_init(&a, 1e5, 7, 0, 1000);
	arrivals_init(&b, 1e5, 7, 0, 1000);
	arrivals_init(&other_stream, 1e5, 7, 1, 1000);
	arrivals_init(&other_seed, 1e5, 8, 0, 1000);
	arrivals_init(&later, 1e5, 7, 0, 1000 + 123456789);
	for (int i = 0; i < 10000; i++) {
		cr_assert_eq(arrivals_next(&a), arrivals_next(&b), "arrival %d differs", i);
		cr_assert_eq(arrivals_next(&later) - arrivals_next(&a), 123456789, "arrival %d", i);
		same_stream += arrivals_next(&a) == arrivals_next(&other_stream);
		same_seed += arrivals_next(&a) == arrivals_next(&other_seed);
		arrivals_advance(&a);
		arrivals_advance(&b);
		arrivals_advance(&later);
		arrivals_advance(&other_stream);
		arrivals_advance(&other_seed);
	}
	cr_assert_lt(same_stream, 10);
	cr_assert_lt(same_seed, 10);
}

Test(arrivals, skipping_counts_every_arrival_before_the_end)
{
	struct arrivals a, b;
	uint64_t n = 0, end = 1000 + 50 * NS_PER_MS;

	arrivals_init(&a, 1e6, 1, 0, 1000);
	arrivals_init(&b, 1e6, 1, 0, 1000);
	for (; arrivals_next(&a) < end; arrivals_advance(&a))
		n++;
	cr_assert_eq(arrivals_skip_until(&b, end), n);
	cr_assert_eq(arrivals_next(&b), arrivals_next(&a));
	cr_assert(n > 50000 - 5 * 224 && n < 50000 + 5 * 224, "%llu arrivals in 50 ms at 1/us",
		  (unsigned long long)n);
}

#define KEYS	100
#define TICK_NS 1000 /* the generator's work between two readings of the clock */

/* An open loop on the fake server; its stats are big, so everything is on the heap. */
struct open_run {
	struct workload w;
	struct fake_clock clock;
	struct fake_server *server;
	struct loop loop;
	_Atomic uint64_t deadline;
	struct bench_stats stats;
	struct op_stats all;
	uint64_t started_ns, stopped_ns;
};

/* The run's parts, ready to measure: the test may still look at the fake server. */
static struct open_run *open_run_new(unsigned depth, const struct fake_faults *faults)
{
	struct workload_config wc = {.keys = KEYS, .key_size = 8, .value_size = 64,
				     .get_ratio = 0.5};
	struct open_run *run = calloc(1, sizeof(*run));
	struct loop_config cfg = {
		.depth = depth,
		.timeout_ns = 1000 * NS_PER_MS, /* nothing here is lost for being slow */
		.seed = 1,
		.deadline_ns = &run->deadline,
		.clock = &run->clock.base,
	};

	cr_assert_not_null(run);
	cr_assert_eq(workload_init(&run->w, &wc), 0);
	fake_clock_init(&run->clock, 1000000000, TICK_NS);
	run->server = fake_server_new(&run->w, KEYS);
	run->server->faults = *faults;
	run->server->clock = &run->clock;
	cr_assert_eq(loop_init(&run->loop, &run->server->base, &run->w, &cfg), 0);
	return run;
}

static void open_run_go(struct open_run *run, double rate, uint64_t duration_ns)
{
	run->started_ns = run->clock.now_ns;
	atomic_store(&run->deadline, run->started_ns + duration_ns);
	cr_assert_eq(loop_measure(&run->loop, rate, &run->stats), 0);
	run->stopped_ns = run->clock.now_ns;
	bench_stats_total(&run->stats, &run->all);
}

static struct open_run *open_run(unsigned depth, const struct fake_faults *faults, double rate,
				 uint64_t duration_ns)
{
	struct open_run *run = open_run_new(depth, faults);

	open_run_go(run, rate, duration_ns);
	return run;
}

static void open_run_free(struct open_run *run)
{
	loop_free(&run->loop);
	fake_server_free(run->server);
	free(run);
}

static uint64_t answered(const struct open_run *run)
{
	return run->all.ok + run->all.misses;
}

/* Latencies above ns, counted from the histogram (buckets hold values within 0.2 %). */
static uint64_t count_above(const struct hist *h, uint64_t ns)
{
	uint64_t above = 0;

	for (double q = 0; q <= 100; q += 0.01)
		above += hist_percentile(h, q) > ns;
	return (uint64_t)(above / 10001.0 * h->count + 0.5);
}

Test(open_loop, keeps_the_rate_of_a_prompt_server)
{
	struct open_run *run = open_run(1024, &(struct fake_faults){0}, 20000, 200 * NS_PER_MS);
	double expect = 20000 * 0.2, sd = sqrt(expect);

	cr_assert(fabs((double)run->stats.scheduled - expect) < 5 * sd,
		  "%llu scheduled, %g expected", (unsigned long long)run->stats.scheduled, expect);
	cr_assert_eq(run->all.errors + run->all.lost + run->stats.invalid + run->stats.late, 0);
	cr_assert_eq(run->stats.unsent + run->stats.slot_waits, 0,
		     "no reason to lag: %llu unsent, %llu waited for a slot",
		     (unsigned long long)run->stats.unsent,
		     (unsigned long long)run->stats.slot_waits);
	/* every request sent, answered but those still in flight at the end */
	cr_assert_eq(run->stats.send_lag.count, run->stats.scheduled);
	cr_assert(answered(run) <= run->stats.scheduled &&
			  answered(run) + 20 >= run->stats.scheduled,
		  "%llu answered of %llu", (unsigned long long)answered(run),
		  (unsigned long long)run->stats.scheduled);
	cr_assert_eq(run->all.latency.count, answered(run));
	open_run_free(run);
}

Test(open_loop, slow_replies_show_their_whole_delay)
{
	uint64_t delay = 2 * NS_PER_MS;
	struct open_run *run = open_run(1024, &(struct fake_faults){.delay_ns = delay}, 2000,
					300 * NS_PER_MS);

	cr_assert_gt(answered(run), 450, "%llu answered", (unsigned long long)answered(run));
	cr_assert_eq(run->all.lost, 0);
	cr_assert_geq(run->all.latency.min, delay, "a reply came before the server sent it");
	cr_assert_lt(hist_percentile(&run->all.latency, 50), delay + 5 * NS_PER_MS);
	open_run_free(run);
}

Test(open_loop, a_stalled_generator_shows_the_stall)
{
	/* after 100 requests (~50 ms) one send stalls 50 ms: ~100 arrivals come due meanwhile */
	uint64_t stall = 50 * NS_PER_MS;
	struct open_run *run = open_run(
		1024, &(struct fake_faults){.stall_ns = stall, .stall_after = 100}, 2000,
		300 * NS_PER_MS);
	const struct hist *lat = &run->all.latency, *lag = &run->stats.send_lag;

	cr_assert_eq(run->all.lost + run->stats.unsent, 0);
	/* the replies are instant: only measuring from the intended time sees the stall */
	cr_assert_geq(lat->max, stall - 5 * NS_PER_MS, "max latency %llu ns",
		      (unsigned long long)lat->max);
	cr_assert_geq(lag->max, stall - 5 * NS_PER_MS, "max send lag %llu ns",
		      (unsigned long long)lag->max);
	cr_assert_geq(count_above(lat, 10 * NS_PER_MS), 50, "%llu requests over 10 ms",
		      (unsigned long long)count_above(lat, 10 * NS_PER_MS));
	cr_assert_geq(count_above(lag, 10 * NS_PER_MS), 50);
	cr_assert_geq(lat->max, lag->max, "latency must include the lag");
	open_run_free(run);
}

Test(open_loop, a_generator_behind_at_the_end_counts_what_it_never_sent)
{
	/* at ~50 ms a send stalls 200 ms, past the 150 ms deadline */
	struct open_run *run = open_run(
		1024, &(struct fake_faults){.stall_ns = 200 * NS_PER_MS, .stall_after = 100}, 2000,
		150 * NS_PER_MS);
	uint64_t window = run->stopped_ns - run->started_ns;

	cr_assert_geq(window, 240 * NS_PER_MS);
	cr_assert_gt(run->stats.unsent, 250, "%llu unsent", (unsigned long long)run->stats.unsent);
	cr_assert_geq(run->stats.behind_ns, 150 * NS_PER_MS, "behind by %llu ns",
		      (unsigned long long)run->stats.behind_ns);
	/* scheduled over the whole window: sent or not */
	cr_assert(fabs((double)run->stats.scheduled - 2000 * window / 1e9) <
			  5 * sqrt(2000 * window / 1e9),
		  "%llu scheduled in %llu ns", (unsigned long long)run->stats.scheduled,
		  (unsigned long long)window);
	cr_assert_eq(run->stats.send_lag.count + run->stats.unsent, run->stats.scheduled);
	open_run_free(run);
}

Test(open_loop, too_few_slots_queue_in_the_generator_and_show)
{
	/* 4 slots, 10 ms per reply: at most 400/s get out of 2000/s offered */
	struct open_run *run = open_run(4, &(struct fake_faults){.delay_ns = 10 * NS_PER_MS}, 2000,
					200 * NS_PER_MS);

	cr_assert_leq(answered(run), 4 * 21, "%llu answered", (unsigned long long)answered(run));
	/* the backlog never clears: every request after the first four waited for a slot */
	cr_assert_gt(run->stats.slot_waits, 50);
	cr_assert_geq(run->stats.slot_waits + 4, run->stats.send_lag.count, "%llu of %llu waited",
		      (unsigned long long)run->stats.slot_waits,
		      (unsigned long long)run->stats.send_lag.count);
	cr_assert_gt(run->stats.unsent, 200);
	cr_assert_gt(run->stats.behind_ns, 100 * NS_PER_MS);
	cr_assert_gt(hist_percentile(&run->all.latency, 99), 50 * NS_PER_MS,
		     "the wait for a slot is part of the latency");
	open_run_free(run);
}

Test(open_loop, sleeps_until_just_before_each_arrival)
{
	/* 200/s: gaps of 5 ms on average, each slept but its last LOOP_WAKE_EARLY_NS */
	static struct fake_wait waits[100000];
	uint64_t duration = 2000 * NS_PER_MS, window, up_to = 0;
	struct open_run *run = open_run_new(1024, &(struct fake_faults){0});
	struct arrivals a;
	unsigned w = 0;

	run->server->waits = waits;
	run->server->waits_cap = 100000;
	open_run_go(run, 200, duration);
	window = run->stopped_ns - run->started_ns;
	cr_assert_lt(run->server->nwaits, run->server->waits_cap);
	cr_assert_gt(run->stats.scheduled, 300);
	/* the loop's own schedule: the same seed, stream and start */
	arrivals_init(&a, 200, 1, 0, run->loop.start_ns);
	for (; arrivals_next(&a) < run->stopped_ns; arrivals_advance(&a)) {
		uint64_t due = arrivals_next(&a), wake = due - LOOP_WAKE_EARLY_NS;

		/* a wait before this arrival never ends within its last LOOP_WAKE_EARLY_NS */
		for (; w < run->server->nwaits && waits[w].from_ns < due; w++) {
			cr_assert_leq(waits[w].to_ns, wake + 10 * TICK_NS,
				      "a wait from %llu to %llu, arrival at %llu",
				      (unsigned long long)waits[w].from_ns,
				      (unsigned long long)waits[w].to_ns, (unsigned long long)due);
			up_to += waits[w].to_ns >= wake;
		}
	}
	/* and nearly every gap (all but those under ~50 us, 1 %) was slept up to there */
	cr_assert_geq(up_to, run->stats.scheduled * 95 / 100, "%llu of %llu arrivals slept up to",
		      (unsigned long long)up_to, (unsigned long long)run->stats.scheduled);
	/* so the generator is awake ~60 us per arrival, 1.2 % of the time, not 2 ms (40 %) */
	cr_assert_geq(run->server->asleep_ns, window - window * 3 / 100, "asleep %llu ns of %llu",
		      (unsigned long long)run->server->asleep_ns, (unsigned long long)window);
	cr_assert_leq(run->server->empty_polls,
		      run->stats.scheduled * (LOOP_WAKE_EARLY_NS / TICK_NS + 10),
		      "%llu spins for %llu arrivals", (unsigned long long)run->server->empty_polls,
		      (unsigned long long)run->stats.scheduled);
	/* the spin reaches each arrival: no send is late by more than the clock's steps */
	cr_assert_leq(run->stats.send_lag.max, 10 * TICK_NS, "send lag max %llu ns",
		      (unsigned long long)run->stats.send_lag.max);
	open_run_free(run);
}
