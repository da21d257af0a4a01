// SPDX-License-Identifier: MIT
/*
 * A run seen over time: which large percent applies when (--large-pct-steps), what
 * the options make of it, and the per-second rows of --interval-csv, from logs
 * filled by hand and from an open loop against the fake server on a fake clock
 * (fake_clock.h), where the test decides what each second holds.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fake_clock.h"
#include "fake_server.h"
#include "interval.h"
#include "loop.h"
#include "options.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_S  1000000000ULL

Test(schedule, each_percent_holds_for_its_step_and_the_last_after_the_end)
{
	struct large_schedule s;
	char why[160];

	cr_assert_eq(large_schedule_parse("0.125,0.25,0.5,0.75", 5 * NS_PER_S, &s, why,
					  sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(s.n, 4);
	cr_assert_eq(large_schedule_pct(&s, 0), 0.125);
	cr_assert_eq(large_schedule_pct(&s, 5 * NS_PER_S - 1), 0.125);
	cr_assert_eq(large_schedule_pct(&s, 5 * NS_PER_S), 0.25);
	cr_assert_eq(large_schedule_pct(&s, 12 * NS_PER_S), 0.5);
	cr_assert_eq(large_schedule_pct(&s, 19 * NS_PER_S), 0.75);
	cr_assert_eq(large_schedule_pct(&s, 1000 * NS_PER_S), 0.75);
	cr_assert_eq(large_schedule_max(&s), 0.75);
}

Test(schedule, bad_lists_are_refused)
{
	static const char *const bad[] = {"", ",", "1,", "1,,2", "100", "-1", "1;2", "x", "nan"};
	char many[64 * 2 + 8] = "", why[160];
	struct large_schedule s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(large_schedule_parse(bad[i], NS_PER_S, &s, why, sizeof(why)), -EINVAL,
			     "\"%s\" taken", bad[i]);
	for (int i = 0; i < SCHEDULE_STEPS_MAX + 1; i++)
		strcat(many, i ? ",1" : "1");
	cr_assert_eq(large_schedule_parse(many, NS_PER_S, &s, why, sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "at most"), "%s", why);
}

static int parse(struct bench_opts *o, char *why, size_t len, const char *args)
{
	char buf[512], *argv[32], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "xkv-bench --server 127.0.0.1 %s", args);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return bench_options_parse(argc, argv, o, why, len);
}

Test(schedule, the_run_lasts_the_steps_and_large_keys_follow_the_largest)
{
	struct bench_opts *o = malloc(sizeof(*o));
	char why[320];

	cr_assert_eq(parse(o, why, sizeof(why),
			   "--value-profile bimodal --large-pct-steps 0.1,2,0.5 --step-seconds 1.5 "
			   "--rate 1000 --interval-csv x.csv"),
		     0, "%s", why);
	cr_assert_eq(o->schedule.n, 3);
	cr_assert_eq(o->duration_s, 4.5);
	cr_assert_eq(o->workload.large_pct, 2);
	cr_assert_eq(o->schedule.step_ns, 1500 * NS_PER_MS);
	cr_assert_eq(parse(o, why, sizeof(why), "--value-profile bimodal --large-pct-steps 1"), 0,
		     "%s", why);
	cr_assert_eq(o->duration_s, 5, "--step-seconds is 5 unless given");
	cr_assert_eq(parse(o, why, sizeof(why), "--rate 10"), 0, "%s", why);
	cr_assert_eq(o->schedule.n, 0, "no steps unless asked");

	static const char *const refused[] = {
		"--large-pct-steps 1",
		"--value-profile bimodal --large-pct-steps 1 --duration 3",
		"--value-profile bimodal --large-pct-steps 1 --sweep --slo-us 100",
		"--value-profile bimodal --step-seconds 3",
		"--sweep --slo-us 100 --interval-csv x.csv",
		"--duration 3601 --interval-csv x.csv",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		cr_assert_eq(parse(o, why, sizeof(why), refused[i]), -EINVAL, "\"%s\" taken",
			     refused[i]);
	free(o);
}

/* Records n latencies of ns each in second `second` of log, small or large. */
static void record(struct interval_log *log, unsigned second, bool large, unsigned n, uint64_t ns)
{
	struct interval *iv = interval_at(log, second * NS_PER_S + 1234);

	for (unsigned i = 0; i < n; i++) {
		iv->answered++;
		hist_record(large ? &iv->large : &iv->small, ns);
	}
}

Test(intervals, threads_merge_second_by_second)
{
	struct interval_log logs[2];
	struct interval_row row;

	cr_assert_eq(interval_log_init(&logs[0], 2.5), 0);
	cr_assert_eq(interval_log_init(&logs[1], 2.5), 0);
	cr_assert_eq(logs[0].n, 3, "2.5 s: three seconds, the last a half");
	record(&logs[0], 0, false, 990, 10000);
	record(&logs[1], 0, true, 10, 5000000);
	interval_at(&logs[1], 0)->lost = 3;
	record(&logs[0], 2, false, 100, 20000);
	record(&logs[0], 9, false, 100, 30000); /* past the end: the last second */
	cr_assert_eq(logs[1].ready, 1, "thread 1 saw nothing after second 0");

	cr_assert_eq(interval_row(logs, 2, 0, 2.5, NULL, 0.125, &row), 0);
	cr_assert_eq(row.ops_per_s, 1000);
	cr_assert_eq(row.lost, 3);
	cr_assert_float_eq(row.p50_us, 10, 0.1);
	cr_assert_float_eq(row.p99_us, 10, 0.1, "990 of 1000 small: p99 is small's");
	cr_assert_float_eq(row.p99_small_us, 10, 0.1);
	cr_assert_float_eq(row.p99_large_us, 5000, 20);
	cr_assert_eq(row.large_pct, 0.125);

	cr_assert_eq(interval_row(logs, 2, 1, 2.5, NULL, 0.125, &row), 0);
	cr_assert_eq(row.ops_per_s, 0);
	cr_assert_lt(row.p99_us, 0, "an empty second has no latency");
	cr_assert_lt(row.p99_large_us, 0);

	cr_assert_eq(interval_row(logs, 2, 2, 2.5, NULL, 0.125, &row), 0);
	cr_assert_eq(row.ops_per_s, 400, "200 answers in the last half second");
	cr_assert_float_eq(row.p99_us, 30, 0.1);
	cr_assert_lt(row.p99_large_us, 0);
	interval_log_free(&logs[0]);
	interval_log_free(&logs[1]);
}

Test(intervals, the_csv_has_a_row_per_second_and_empty_latencies_when_nothing_came)
{
	struct large_schedule s;
	struct interval_log log;
	char *text = NULL, why[160];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(large_schedule_parse("1,2", NS_PER_S, &s, why, sizeof(why)), 0);
	cr_assert_eq(interval_log_init(&log, 2), 0);
	record(&log, 0, false, 10, 1000);
	cr_assert_eq(interval_csv(f, &log, 1, 2, &s, 2, 1000), 0);
	fclose(f);
	cr_assert_str_eq(text,
			 "second,ops_per_s,p50_us,p99_us,p99_small_us,p99_large_us,lost,large_pct,"
			 "unix_s\n"
			 "0,10.0,1.000,1.000,1.000,,0,1,1000.000\n"
			 "1,0.0,,,,,0,2,1001.000\n");
	free(text);
	interval_log_free(&log);
	cr_assert_eq(interval_log_init(&log, INTERVALS_MAX + 1), -EINVAL);
}

#define KEYS	  1000
#define LARGE	  100 /* the last 100 keys are large */
#define RATE	  4000
#define SECONDS	  3
#define DROP	  20 /* every 20th request gets no reply */
#define DELAY_NS  (2 * NS_PER_MS)

/* An open loop of SECONDS on the fake server, with a schedule and an interval log. */
struct timed_run {
	struct workload w;
	struct fake_clock clock;
	struct fake_server *server;
	struct large_schedule schedule;
	struct interval_log log;
	struct loop loop;
	_Atomic uint64_t deadline;
	struct bench_stats stats;
};

static struct timed_run *timed_run(const char *steps, uint64_t tick_ns)
{
	struct workload_config wc = {.keys = KEYS, .key_size = 8, .value_size = 64,
				     .profile = WORKLOAD_BIMODAL, .large_size = 2000,
				     .large_keys = LARGE, .get_ratio = 1};
	struct timed_run *run = calloc(1, sizeof(*run));
	struct loop_config cfg = {
		.depth = 1024,
		.timeout_ns = 50 * NS_PER_MS,
		.seed = 7,
		.deadline_ns = &run->deadline,
		.clock = &run->clock.base,
		.schedule = &run->schedule,
		.intervals = &run->log,
	};
	char why[160];

	cr_assert_not_null(run);
	cr_assert_eq(large_schedule_parse(steps, NS_PER_S, &run->schedule, why, sizeof(why)), 0);
	wc.large_pct = large_schedule_max(&run->schedule);
	cr_assert_eq(workload_init(&run->w, &wc), 0);
	cr_assert_eq(interval_log_init(&run->log, SECONDS), 0);
	fake_clock_init(&run->clock, 5 * NS_PER_S, tick_ns);
	run->server = fake_server_new(&run->w, KEYS); /* nothing loaded: GETs miss */
	run->server->faults = (struct fake_faults){.drop_every = DROP, .delay_ns = DELAY_NS};
	run->server->clock = &run->clock;
	cr_assert_eq(loop_init(&run->loop, &run->server->base, &run->w, &cfg), 0);
	atomic_store(&run->deadline, run->clock.now_ns + SECONDS * NS_PER_S);
	cr_assert_eq(loop_measure(&run->loop, RATE, &run->stats), 0);
	return run;
}

static void timed_run_free(struct timed_run *run)
{
	loop_free(&run->loop);
	fake_server_free(run->server);
	interval_log_free(&run->log);
	free(run);
}

Test(intervals, an_open_loop_fills_each_second_with_its_step)
{
	struct timed_run *run = timed_run("0,50,10", 1000);
	const struct op_stats *large = &run->stats.size_class[WORKLOAD_LARGE];
	uint64_t answered = 0, lost = 0, large_answered = 0;
	static const double share[] = {0, 0.5, 0.1};

	cr_assert_eq(run->log.ready, SECONDS);
	for (unsigned i = 0; i < SECONDS; i++) {
		const struct interval *iv = &run->log.iv[i];
		double expect = RATE * share[i] * (DROP - 1) / DROP;
		struct interval_row row;

		cr_assert_eq(interval_row(&run->log, 1, i, SECONDS, &run->schedule, 0, &row), 0);
		answered += iv->answered;
		lost += iv->lost;
		large_answered += iv->large.count;
		/* Poisson counts: within 5 standard deviations */
		cr_assert(fabs(row.ops_per_s - RATE * (DROP - 1.0) / DROP) < 5 * sqrt(RATE),
			  "second %u: %.0f ops/s", i, row.ops_per_s);
		cr_assert(fabs((double)iv->large.count - expect) <= 5 * sqrt(expect) + 1,
			  "second %u: %llu large of %llu, %g expected", i,
			  (unsigned long long)iv->large.count, (unsigned long long)iv->answered,
			  expect);
		cr_assert_eq(row.large_pct, share[i] * 100);
		cr_assert_geq(row.p50_us, DELAY_NS / 1e3, "second %u: p50 %g us", i, row.p50_us);
		cr_assert_lt(row.p99_us, DELAY_NS / 1e3 + 1000);
		if (i) /* the first second's losses are noticed at 50 ms on */
			cr_assert(fabs((double)iv->lost - RATE / DROP) < 5 * sqrt(RATE / DROP),
				  "second %u: %llu lost", i, (unsigned long long)iv->lost);
	}
	cr_assert_eq(run->log.iv[0].large.count, 0, "no large request at 0 %%");
	/* every answer and loss of the run, in exactly one second */
	cr_assert_eq(answered, run->stats.op[BENCH_GET].misses);
	cr_assert_eq(lost, run->stats.op[BENCH_GET].lost);
	cr_assert_eq(large_answered, large->misses);
	timed_run_free(run);
}

Test(intervals, a_seed_fixes_the_requests_whatever_the_timing)
{
	/* a slower generator: the clock moves on 3 us per reading instead of 1 */
	struct timed_run *a = timed_run("5,50", 1000), *b = timed_run("5,50", 3000);
	const struct op_stats *la = &a->stats.size_class[WORKLOAD_LARGE],
			      *lb = &b->stats.size_class[WORKLOAD_LARGE];

	/* the same arrivals, each large or not by its intended time: only the last ones in
	 * flight at the deadline may differ */
	cr_assert(llabs((long long)a->stats.scheduled - (long long)b->stats.scheduled) <= 2);
	cr_assert(llabs((long long)(la->misses + la->lost) - (long long)(lb->misses + lb->lost)) <=
			  2,
		  "%llu vs %llu large", (unsigned long long)(la->misses + la->lost),
		  (unsigned long long)(lb->misses + lb->lost));
	timed_run_free(a);
	timed_run_free(b);
}
