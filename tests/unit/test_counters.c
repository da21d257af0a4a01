// SPDX-License-Identifier: MIT
/*
 * The live counters (util/counters.h): a snapshot is read whole or not at all while
 * its writer keeps publishing, and every counter has a name, so none is published
 * that the tools cannot show. `make test-tsan` runs it under ThreadSanitizer too,
 * which reports a slot copied with plain memcpy while the other side writes it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "util/counters.h"

#define WORDS(type) (sizeof(type) / sizeof(uint64_t))

Test(counters, a_snapshot_is_read_as_published)
{
	struct xkv_worker_counters slot = {0}, snap = {0}, out;

	snap.req.foreign_writes = 7;
	snap.sock.kicks = 9;
	xkv_counters_publish(&slot, &snap, sizeof(snap), 1234);
	cr_assert_eq(xkv_counters_read(&out, &slot, sizeof(out)), 0);
	cr_assert_eq(out.seq, 2, "one snapshot published: the count moved by two");
	cr_assert_eq(out.published_ns, 1234);
	cr_assert_eq(out.req.foreign_writes, 7);
	cr_assert_eq(out.sock.kicks, 9);
}

Test(counters, a_slot_being_written_is_not_read)
{
	struct xkv_server_counters slot = {.seq = 3}, out;

	cr_assert_eq(xkv_counters_read(&out, &slot, sizeof(out)), -EAGAIN);
}

/* The writer publishes snapshots whose every word is its round number. */
struct race {
	struct xkv_worker_counters slot;
	atomic_bool stop;
};

static void *publish_rounds(void *arg)
{
	struct race *r = arg;
	struct xkv_worker_counters snap;
	uint64_t *word = (uint64_t *)&snap;

	for (uint64_t round = 1; !atomic_load(&r->stop); round++) {
		for (size_t i = 2; i < WORDS(snap); i++) /* after seq and published_ns */
			word[i] = round;
		xkv_counters_publish(&r->slot, &snap, sizeof(snap), round);
	}
	return NULL;
}

Test(counters, a_reader_never_sees_two_snapshots_mixed)
{
	static struct race r;
	uint64_t last = 0, whole = 0;
	pthread_t writer;

	cr_assert_eq(pthread_create(&writer, NULL, publish_rounds, &r), 0);
	for (int i = 0; i < 200000; i++) {
		struct xkv_worker_counters out;
		const uint64_t *word = (const uint64_t *)&out;

		if (xkv_counters_read(&out, &r.slot, sizeof(out)))
			continue; /* the writer kept it busy: allowed, and counted below */
		for (size_t w = 2; w < WORDS(out); w++)
			cr_assert_eq(word[w], out.published_ns, "word %zu from another snapshot", w);
		cr_assert_geq(out.published_ns, last, "snapshots go forward");
		last = out.published_ns;
		whole++;
	}
	atomic_store(&r.stop, true);
	pthread_join(writer, NULL);
	cr_assert_gt(whole, 0, "some reads succeeded");
}

/* Records the values a visitor is shown, each must be one of the struct's words. */
struct seen {
	uint64_t values[256];
	size_t n;
};

static void see(void *ctx, const char *group, const char *name, uint64_t value)
{
	struct seen *s = ctx;

	(void)group;
	cr_assert(name && *name);
	cr_assert_lt(s->n, 256);
	s->values[s->n++] = value;
}

/* Fills the words of a struct with 1, 2, 3, ...: each value names one field. */
static void number_words(void *p, size_t words)
{
	for (size_t i = 0; i < words; i++)
		((uint64_t *)p)[i] = i + 1;
}

/* Every word in [first, words) was shown exactly once, and nothing else. */
static void assert_each_word_once(const struct seen *s, size_t first, size_t words,
				  const char *what)
{
	for (uint64_t v = first + 1; v <= words; v++) {
		size_t times = 0;

		for (size_t i = 0; i < s->n; i++)
			times += s->values[i] == v;
		cr_assert_eq(times, 1, "%s: word %lu shown %zu times", what, v - 1, times);
	}
	cr_assert_eq(s->n, words - first, "%s: %zu shown for %zu words", what, s->n, words - first);
}

Test(counters, every_request_counter_has_a_name)
{
	struct xkv_request_counters c;
	struct seen s = {0};

	number_words(&c, WORDS(c));
	xkv_request_counters_each(&c, see, &s);
	/* the unused slots: requests[0] (no op 0) and dropped[XKV_R_OK] */
	s.values[s.n++] = 2;
	s.values[s.n++] = (offsetof(struct xkv_request_counters, dropped) / 8) + 1;
	assert_each_word_once(&s, 0, WORDS(c), "request counters");
}

Test(counters, every_memcached_counter_has_a_name)
{
	struct xkv_mc_counters c;
	struct seen s = {0};

	number_words(&c, WORDS(c));
	xkv_mc_counters_each(&c, see, &s);
	assert_each_word_once(&s, 0, WORDS(c), "memcached counters");
}

Test(counters, every_socket_counter_has_a_name_on_one_backend)
{
	struct xkv_socket_counters c;
	struct seen s = {0};

	number_words(&c, WORDS(c));
	xkv_socket_counters_each(&c, "xdp", see, &s);
	xkv_socket_counters_each(&c, "uring", see, &s);
	assert_each_word_once(&s, 0, WORDS(c), "socket counters");
}

Test(counters, every_store_counter_has_a_name)
{
	struct xkv_server_counters c;
	struct seen s = {0};
	size_t first = offsetof(struct xkv_server_counters, store_items) / 8;

	number_words(&c, WORDS(c));
	xkv_server_counters_each(&c, see, &s);
	assert_each_word_once(&s, first, WORDS(c), "store counters");
}

/* Each queue's sockets summed over the workers, however many queues each serves. */
Test(counters, queue_totals_sum_each_queue_over_the_workers)
{
	static struct xkv_worker_counters w[3];
	static struct xkv_socket_counters totals[XKV_QUEUES_MAX];

	for (uint32_t i = 0; i < 3; i++) {
		w[i].nqueues = i == 2 ? 4 : 2;
		for (uint32_t q = 0; q < w[i].nqueues; q++) {
			w[i].queue[q].sockets = 1;
			w[i].queue[q].rx_packets = 10 * (i + 1) + q;
		}
	}
	cr_assert_eq(xkv_queue_totals(w, 3, totals), 4);
	cr_assert_eq(totals[0].sockets, 3);
	cr_assert_eq(totals[0].rx_packets, 10 + 20 + 30);
	cr_assert_eq(totals[1].rx_packets, 11 + 21 + 31);
	cr_assert_eq(totals[3].sockets, 1, "queue 3: only worker 2's socket");
	cr_assert_eq(totals[3].rx_packets, 33);
	cr_assert_eq(totals[4].sockets, 0);
}

/* Prometheus's types (xkv-loader metrics): each gauge xkv_counter_is_gauge names exists. */
struct gauges_seen {
	const char *name[16];
	size_t n;
};

static void see_gauge(void *ctx, const char *group, const char *name, uint64_t value)
{
	struct gauges_seen *g = ctx;

	(void)value;
	if (!xkv_counter_is_gauge(group, name))
		return;
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->name[i], name))
			return;
	cr_assert_lt(g->n, 16);
	g->name[g->n++] = name;
}

Test(counters, every_gauge_is_a_counter_some_function_names)
{
	struct xkv_request_counters req = {0};
	struct xkv_socket_counters sock = {0};
	struct xkv_mc_counters mc = {0};
	struct xkv_server_counters srv = {0};
	struct gauges_seen g = {0};

	xkv_request_counters_each(&req, see_gauge, &g);
	xkv_socket_counters_each(&sock, "xdp", see_gauge, &g);
	xkv_socket_counters_each(&sock, "uring", see_gauge, &g);
	xkv_mc_counters_each(&mc, see_gauge, &g);
	xkv_server_counters_each(&srv, see_gauge, &g);
	/* reassembly_bytes, round_gap_max_ns, sockets, curr_connections, the store's four,
	 * ewt active_max: a renamed one would be typed a counter again */
	cr_assert_eq(g.n, 9, "%zu gauges found", g.n);
	cr_assert(!xkv_counter_is_gauge(NULL, "rx_packets"));
	cr_assert(!xkv_counter_is_gauge("memcached", "cmd_get"));
	cr_assert(!xkv_counter_is_gauge(NULL, "items"), "a group is part of the name");
}
