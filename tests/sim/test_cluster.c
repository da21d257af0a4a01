// SPDX-License-Identifier: MIT
/*
 * xkv-sim's cluster model (tools/sim/cluster.c): ketama's placement, the hot server that
 * limits ketama alone and the directory that lifts it, each strategy's defining
 * behaviour, and determinism.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "sim.h"

static struct sim_config cluster(unsigned servers, enum cluster_select select, double zipf,
				 double load)
{
	struct sim_config c;

	sim_config_defaults(&c);
	c.servers = servers;
	c.cores = 4;
	c.dir_select = select;
	c.zipf = zipf;
	c.load = load;
	c.items = 100000;
	c.service = SIM_SVC_EXP;
	c.unit_ns = 5000;
	c.write_frac = 0.05;
	c.requests = 300000;
	return c;
}

static struct sim_results run(const struct sim_config *c)
{
	struct sim_results r;

	cr_assert_eq(sim_run(c, &r), 0, "the configuration runs");
	return r;
}

/* 160 points a server: every server within 30 % of its fair share of uniform keys. */
Test(cluster, ketama_spreads_keys_about_evenly)
{
	const uint32_t items = 1000000;
	uint8_t *home = malloc(items);
	uint32_t count[32] = {0};

	cr_assert(home);
	cluster_ketama_homes(32, items, home);
	for (uint32_t k = 0; k < items; k++) {
		cr_assert_lt(home[k], 32);
		count[home[k]]++;
	}
	for (unsigned s = 0; s < 32; s++)
		cr_assert(count[s] > 0.7 * items / 32 && count[s] < 1.3 * items / 32,
			  "server %u holds %u keys of %u", s, count[s], items);
	free(home);
}

/* Consistent hashing: a fifth server takes keys from the four, and no key moves between them. */
Test(cluster, a_server_added_takes_keys_only_for_itself)
{
	const uint32_t items = 200000;
	uint8_t *four = malloc(items), *five = malloc(items);
	uint32_t moved = 0;

	cr_assert(four && five);
	cluster_ketama_homes(4, items, four);
	cluster_ketama_homes(5, items, five);
	for (uint32_t k = 0; k < items; k++) {
		if (four[k] == five[k])
			continue;
		cr_assert_eq(five[k], 4, "key %u moved from server %u to %u", k, four[k], five[k]);
		moved++;
	}
	cr_assert(moved > items / 10 && moved < items * 3 / 10, "%u keys moved", moved);
	free(four);
	free(five);
}

/*
 * Pegasus's point: with skew, ketama's hottest key overloads its home long before the
 * cluster is busy; the directory spreads it (writes copied as Pegasus copies them), and
 * the cluster meets the SLO.
 */
Test(cluster, the_directory_lifts_the_hot_server_that_limits_ketama)
{
	struct sim_config c = cluster(32, CLUSTER_KETAMA, 0.99, 0.5);
	struct sim_results alone = run(&c), dir;

	c.dir_select = CLUSTER_ROUND_ROBIN;
	c.write_servers = 32;
	dir = run(&c);
	cr_assert_eq(alone.replicated, 0);
	cr_assert_eq(dir.replicated, 111, "ceil(32 ln 32) keys held, not %u", dir.replicated);
	cr_assert_gt(alone.server_share_max, 2.0, "ketama's busiest server: %.2f",
		     alone.server_share_max);
	cr_assert(!alone.meets_slo, "ketama alone met the SLO: p99 %.0f ns", alone.p99_ns);
	cr_assert_lt(dir.server_share_max, 1.3, "with the directory: %.2f", dir.server_share_max);
	cr_assert(dir.meets_slo, "the directory missed the SLO: p99 %.0f of %.0f ns", dir.p99_ns,
		  dir.slo_ns);
	cr_assert(dir.replicated_share > 0.25 && alone.replicated_share == 0,
		  "held keys' share %.3f", dir.replicated_share);
}

/* Every key replicated, no hops: joining the shortest queue beats turning round the servers. */
Test(cluster, load_aware_strategies_beat_round_robin_at_high_load)
{
	static const enum cluster_select aware[] = {CLUSTER_LEAST_LOADED, CLUSTER_PREDICT,
						    CLUSTER_C3};
	struct sim_config c = cluster(8, CLUSTER_ROUND_ROBIN, 0, 0.9);
	struct sim_results rr, r;

	c.items = 1000;
	c.replicated = 1000;
	c.write_frac = 0;
	c.hop_ns = 0;
	rr = run(&c);
	for (unsigned i = 0; i < 3; i++) {
		c.dir_select = aware[i];
		r = run(&c);
		cr_assert_lt(r.p99_ns, 0.8 * rr.p99_ns, "%s: p99 %.0f ns, round-robin's %.0f",
			     cluster_select_name(aware[i]), r.p99_ns, rr.p99_ns);
	}
}

/* Popularity: a key under its threshold stays on its home; over it, it turns over its set. */
Test(cluster, popularity_spreads_only_popular_keys)
{
	struct sim_config c = cluster(8, CLUSTER_POPULARITY, 0, 0.3);
	struct sim_results cold, hot;

	c.items = 2; /* both held, each with half the requests */
	c.replicated = 2;
	c.write_frac = 0;
	c.popular_ppm = 600000;
	cold = run(&c);
	c.popular_ppm = 10;
	hot = run(&c);
	cr_assert_gt(cold.server_share_max, 3.9, "a key under the threshold left its home: %.2f",
		     cold.server_share_max);
	cr_assert_lt(hot.server_share_max, 1.1, "popular keys were not spread: %.2f",
		     hot.server_share_max);
}

/*
 * A write's reply makes its server the key's only replica, and reads follow it there: one
 * key asked for by a third of the cluster's capacity fits all 8 servers, not one of them.
 */
Test(cluster, reads_follow_the_last_write)
{
	struct sim_config c = cluster(8, CLUSTER_ROUND_ROBIN, 0, 0.3);
	struct sim_results everywhere, followed, copied;

	c.items = 1;
	c.replicated = 1;
	c.write_frac = 0;
	everywhere = run(&c);
	c.write_frac = 0.0005; /* the set is one server for some 2,000 reads after a write */
	followed = run(&c);
	c.write_servers = 8; /* unless each write is copied to as many as reads per write */
	copied = run(&c);
	cr_assert(everywhere.meets_slo, "p99 %.0f ns with the key on every server",
		  everywhere.p99_ns);
	cr_assert(!followed.meets_slo && followed.p99_ns > 10 * everywhere.p99_ns,
		  "reads did not follow the writes: p99 %.0f ns, %.0f ns without writes",
		  followed.p99_ns, everywhere.p99_ns);
	cr_assert(copied.meets_slo, "writes copied to 8 servers: p99 %.0f ns", copied.p99_ns);
}

Test(cluster, a_seed_fixes_the_run)
{
	struct sim_config c = cluster(4, CLUSTER_C3, 1.1, 0.7);
	struct sim_results a = run(&c), b = run(&c);

	cr_assert_eq(a.p99_ns, b.p99_ns);
	cr_assert_eq(a.measured, b.measured);
	c.seed = 2;
	b = run(&c);
	cr_assert_neq(a.p99_ns, b.p99_ns);
}

Test(cluster, bad_configurations_are_refused)
{
	struct sim_config c = cluster(33, CLUSTER_ROUND_ROBIN, 0, 0.5);
	struct sim_results r;

	cr_assert_eq(sim_run(&c, &r), -EINVAL);
	c = cluster(4, CLUSTER_SELECT_END, 0, 0.5);
	cr_assert_eq(sim_run(&c, &r), -EINVAL);
	c = cluster(4, CLUSTER_ROUND_ROBIN, 0, 0.5);
	c.hop_ns = -1;
	cr_assert_eq(sim_run(&c, &r), -EINVAL);
}
