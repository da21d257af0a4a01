// SPDX-License-Identifier: MIT
/*
 * xkv-server's XDP backend on a veth with several rx queues (run-in-netns.sh
 * --queues N, which passes N in XKV_QUEUES): one AF_XDP socket per (queue, worker),
 * the sockets of a queue sharing its UMEM. The kernel puts a flow on the tx queue its
 * hash picks, and a veth packet lands on the peer's rx queue of that number, so many
 * client sockets (each its own source port) spread over every queue. Each policy
 * must then answer every request right through every socket, keep one writer per
 * partition, and leave every queue's frames accounted for.
 *
 * How many sockets: the queue a socket's flow takes looks uniformly random, so with
 * k sockets over 4 queues one queue gets none with a chance of about 4 x (3/4)^k.
 * With 16 sockets that is 4 %, and 2 runs of 20 had a queue with no traffic; with 64
 * it is 4e-8.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client.h"
#include "server_proc.h"
#include "workloads.h"

#define WORKERS		   2
#define THREADS		   4
#define CLIENTS_PER_THREAD 16 /* 64 sockets, each its own flow: see above */
#define KEYS		   4000
#define LARGE_EVERY	   100	 /* one key in LARGE_EVERY has a value in pieces */
#define VALUE_MAX	   65536 /* the largest of them */

static struct server_proc srv;
static char allow[64];
static int nqueues;

static void setup(void)
{
	nqueues = atoi(netns_env("XKV_QUEUES"));
	cr_assert(nqueues >= 1 && nqueues <= 64, "XKV_QUEUES=%d", nqueues);
	netns_test_setup(&srv, allow);
}

static void teardown(void)
{
	server_stop(&srv);
	unlink(srv.out_path);
}

TestSuite(server_multiqueue, .init = setup, .fini = teardown, .timeout = 120);

static void start_policy(const char *policy)
{
	char workers[8];
	const char *args[] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"), "--workers", workers,
			      "--allow", allow, "--policy", policy, "--memory", "256M", NULL};
	int err;

	snprintf(workers, sizeof(workers), "%d", WORKERS);
	err = server_start(&srv, args);
	cr_assert_eq(err, 0, "%s server did not start: %s", policy, strerror(-err));
}

/* Mostly one datagram; one key in LARGE_EVERY 3..64 KiB, in 3 to 45 datagrams. */
static uint32_t size_of_key(int i)
{
	if (i % LARGE_EVERY == 0)
		return 3000 + (uint32_t)(i / LARGE_EVERY * 7919) % (VALUE_MAX - 3000);
	return (uint32_t)(i * 37) % 1300;
}

struct mq_thread {
	pthread_t thread;
	const char *server;
	int id;
	int errors;
	char first_error[128];
};

static void thread_error(struct mq_thread *t, const char *what, int key, int err)
{
	if (!t->errors++)
		snprintf(t->first_error, sizeof(t->first_error), "%s%d: %d", what, key, err);
}

/*
 * Thread t owns the keys i with i % THREADS == t. It PUTs each through one of its
 * sockets, GETs it back through another (most likely on another queue), DELETEs every
 * tenth through a third and checks it is gone.
 */
static void *mq_run(void *arg)
{
	struct mq_thread *t = arg;
	struct xkv_client *c[CLIENTS_PER_THREAD] = {0};
	static _Thread_local uint8_t want[VALUE_MAX];
	char key[32];

	for (int i = 0; i < CLIENTS_PER_THREAD; i++) {
		c[i] = xkv_client_open(t->server, NULL);
		if (!c[i]) {
			thread_error(t, "open client ", i, -errno);
			goto out;
		}
	}
	for (int i = t->id, k = 0; i < KEYS; i += THREADS, k++) {
		uint32_t len = size_of_key(i);
		int n = snprintf(key, sizeof(key), "mq:%d", i);
		int err;

		workload_fill(want, len, (uint32_t)i);
		err = xkv_client_put(c[k % CLIENTS_PER_THREAD], key, n, want, len);
		if (err)
			thread_error(t, "put mq:", i, err);
	}
	for (int i = t->id, k = 0; i < KEYS; i += THREADS, k++) {
		uint32_t len = size_of_key(i), got_len = 0;
		int n = snprintf(key, sizeof(key), "mq:%d", i);
		void *got = NULL;
		int err;

		workload_fill(want, len, (uint32_t)i);
		err = xkv_client_get(c[(k + 3) % CLIENTS_PER_THREAD], key, n, &got, &got_len);
		if (err)
			thread_error(t, "get mq:", i, err);
		else if (got_len != len || memcmp(got, want, len))
			thread_error(t, "bytes differ: get mq:", i, (int)got_len);
		free(got);
	}
	for (int i = t->id, k = 0; i < KEYS; i += THREADS * 10, k++) {
		struct xkv_client *d = c[(k + 5) % CLIENTS_PER_THREAD];
		int n = snprintf(key, sizeof(key), "mq:%d", i);
		void *got = NULL;
		uint32_t got_len;
		int err;

		err = xkv_client_delete(d, key, n);
		if (err)
			thread_error(t, "delete mq:", i, err);
		err = xkv_client_get(c[k % CLIENTS_PER_THREAD], key, n, &got, &got_len);
		if (err != -ENOENT)
			thread_error(t, "get after delete mq:", i, err);
		free(got);
	}
out:
	for (int i = 0; i < CLIENTS_PER_THREAD; i++)
		xkv_client_close(c[i]);
	return NULL;
}

/* Every key through THREADS x CLIENTS_PER_THREAD sockets; asserts every answer. */
static void run_clients(void)
{
	struct mq_thread t[THREADS];
	int errors = 0;

	for (int i = 0; i < THREADS; i++) {
		t[i] = (struct mq_thread){.server = server_addr(&srv), .id = i};
		cr_assert_eq(pthread_create(&t[i].thread, NULL, mq_run, &t[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i].thread, NULL);
		if (t[i].errors)
			cr_log_error("thread %d: %d errors, first %s", i, t[i].errors,
				     t[i].first_error);
		errors += t[i].errors;
	}
	cr_assert_eq(errors, 0, "%d wrong or missing answers", errors);
}

static long counter(const char *fmt, int a, int b)
{
	char what[96];

	snprintf(what, sizeof(what), fmt, a, b);
	return server_counter(&srv, what);
}

/* Whether the server's output holds the line it prints once its sockets are open. */
static bool printed_queues(int n)
{
	char want[96], line[256];
	bool found = false;
	FILE *f = fopen(srv.out_path, "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "xkv-server: %s: %d rx queue(s), ", netns_env("XKV_IFACE"), n);
	while (fgets(line, sizeof(line), f))
		found |= !strncmp(line, want, strlen(want));
	fclose(f);
	return found;
}

/* After server_stop: what every policy must show on every (queue, worker) socket. */
static void assert_every_socket_served(const char *policy)
{
	cr_assert(printed_queues(nqueues), "%s: no \"%d rx queue(s)\" in its output", policy,
		  nqueues);
	cr_assert_eq(counter("queue %d rx_packets", nqueues, 0), -1, "%s: a queue too many",
		     policy);
	cr_assert_eq(server_counter(&srv, "foreign_writes"), 0, "%s: invariant 1", policy);
	cr_assert_eq(server_counter(&srv, "tx_dropped"), 0, "%s", policy);
	for (int q = 0; q < nqueues; q++) {
		long rx = 0, tx = 0;

		cr_assert_eq(counter("queue %d sockets", q, 0), WORKERS, "%s: queue %d", policy, q);
		for (int w = 0; w < WORKERS; w++) {
			long got = counter("worker %d queue %d rx_packets", w, q);

			cr_log_info("%s: worker %d queue %d rx_packets: %ld", policy, w, q, got);
			cr_assert_gt(got, 0, "%s: worker %d received nothing on queue %d", policy,
				     w, q);
			cr_assert_eq(counter("worker %d queue %d sockets", w, q), 1);
			rx += got;
			tx += counter("worker %d queue %d tx_packets", w, q);
		}
		cr_assert_eq(counter("queue %d rx_packets", q, 0), rx,
			     "%s: queue %d's packets are its sockets'", policy, q);
		cr_assert_eq(counter("queue %d tx_packets", q, 0), tx, "%s: queue %d", policy, q);
		/* frames: none lost, none in flight, on every queue's UMEM */
		cr_assert_eq(counter("queue %d frames_unaccounted", q, 0), 0,
			     "%s: a UMEM frame of queue %d leaked", policy, q);
		cr_assert_eq(counter("queue %d frames_in_tx", q, 0), 0, "%s: queue %d", policy,
			     q);
		cr_assert_eq(counter("queue %d frames_idle", q, 0) +
				     counter("queue %d frames_in_fill", q, 0),
			     counter("queue %d frames_total", q, 0), "%s: queue %d", policy, q);
	}
	for (int w = 0; w < WORKERS; w++) {
		long rx = 0;

		for (int q = 0; q < nqueues; q++)
			rx += counter("worker %d queue %d rx_packets", w, q);
		cr_assert_eq(counter("worker %d rx_packets", w, 0), rx,
			     "%s: worker %d's packets are its sockets'", policy, w);
	}
}

Test(server_multiqueue, erew_serves_every_queue)
{
	start_policy("erew");
	run_clients();
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	assert_every_socket_served("erew");
	cr_assert_eq(server_counter(&srv, "put"), KEYS);
}

Test(server_multiqueue, crew_serves_every_queue)
{
	start_policy("crew");
	run_clients();
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	assert_every_socket_served("crew");
	cr_assert_eq(server_counter(&srv, "put"), KEYS);
}

Test(server_multiqueue, minos_serves_every_queue)
{
	start_policy("minos");
	run_clients();
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	assert_every_socket_served("minos");
	cr_assert_eq(server_counter(&srv, "put"), KEYS);
	/* large PUTs are built by the large worker and handed to the owner to link */
	cr_assert_gt(server_counter(&srv, "handoffs_taken"), 0);
	cr_assert_eq(server_counter(&srv, "handoffs_taken"), server_counter(&srv, "handoffs_sent"));
	cr_assert_eq(server_counter(&srv, "handoffs_refused"), 0);
}

Test(server_multiqueue, dcrew_serves_every_queue)
{
	start_policy("dcrew");
	run_clients();
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	assert_every_socket_served("dcrew");
	cr_assert_eq(server_counter(&srv, "put"), KEYS);
	/* each queue's XDP takes slots for the same workers: one writer still */
	cr_assert_eq(server_counter(&srv, "ewt_not_owner"), 0);
	cr_assert_gt(server_counter(&srv, "ewt_released"), KEYS, "every piece was held");
}

/* Whether python's check holds of d, the JSON of `xkv-loader stats --iface IF --json`. */
static bool stats_json_holds(const char *check)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "nsenter --net=/run/netns/%s %s stats --iface %s --json | python3 -c '"
		 "import json, sys; d = json.load(sys.stdin); sys.exit(not (%s))'",
		 srv.netns, XKV_LOADER_BIN, netns_env("XKV_IFACE"), check);
	return system(cmd) == 0;
}

Test(server_multiqueue, xkv_serves_every_queue)
{
	start_policy("xkv");
	run_clients();
	cr_assert(stats_json_holds("d[\"ewt\"][\"taken\"] > 0"), "stats shows no EWT section");
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	assert_every_socket_served("xkv");
	cr_assert_eq(server_counter(&srv, "put"), KEYS);
	/* XDP claims on every queue; PUTs in pieces join, large ones' items go to the holder */
	cr_assert_eq(server_counter(&srv, "ewt_not_owner"), 0);
	cr_assert_gt(server_counter(&srv, "ewt_joined"), 0);
	cr_assert_gt(server_counter(&srv, "handoffs_taken"), 0);
	cr_assert_eq(server_counter(&srv, "handoffs_refused"), 0);
}

/* xkv-loader stats shows each worker's socket on each queue, live, in text and JSON. */
Test(server_multiqueue, loader_stats_show_each_worker_on_each_queue)
{
	char what[64], check[768];
	long got = -1;

	start_policy("crew");
	run_clients();
	/* every worker publishes every 100 ms: wait for the last worker's last queue */
	snprintf(what, sizeof(what), "worker %d queue %d rx_packets", WORKERS - 1, nqueues - 1);
	for (int tries = 0; tries < 50 && got <= 0; tries++, usleep(50000))
		got = server_live_counter(&srv, XKV_LOADER_BIN, netns_env("XKV_IFACE"), what);
	cr_assert_gt(got, 0, "%s, live", what);
	snprintf(what, sizeof(what), "worker 0 queue %d rx_packets", nqueues);
	cr_assert_eq(server_live_counter(&srv, XKV_LOADER_BIN, netns_env("XKV_IFACE"), what), -1,
		     "only the queues a worker serves");

	snprintf(check, sizeof(check),
		 "all(len(w[\"queues\"]) == %d and [q[\"queue\"] for q in w[\"queues\"]] == "
		 "list(range(%d)) and all(q[\"rx_packets\"] > 0 and q[\"sockets\"] == 1 "
		 "and \"kernel\" in q for q in w[\"queues\"]) for w in d[\"workers\"]) "
		 "and all(sum(w[\"queues\"][q][k] for w in d[\"workers\"]) == d[\"queues\"][q][k] "
		 "for q in range(%d) for k in (\"rx_packets\", \"tx_packets\", \"sockets\")) "
		 "and all(sum(q[\"rx_packets\"] for q in w[\"queues\"]) == w[\"rx_packets\"] "
		 "for w in d[\"workers\"])",
		 nqueues, nqueues, nqueues);
	cr_assert(stats_json_holds(check), "stats --json: %s", check);
	cr_assert_eq(server_stop(&srv), 0);
}
