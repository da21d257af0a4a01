// SPDX-License-Identifier: MIT
/*
 * dcrew and xkv end to end: 8 workers on this 2-core machine (for correctness, not
 * speed), many clients writing a few keys of two partitions as fast as they can, so
 * that writes of one partition are outstanding at once on the EWT all the time, and
 * reading them back. Every write must go to the worker holding its partition;
 * afterwards every slot must be empty (no lost release), XDP's takes and joins plus
 * the workers' own joins (xkv's PUTs in pieces) must equal the workers' releases,
 * and every value must be the last one written, byte for byte. Under xkv, values in
 * pieces above 2 KiB go to minos's large workers, which hand their items over.
 * Writes in frames longer than a socket takes, on the veth at a larger MTU, must hold
 * no slot: XDP drops them before it claims one.
 *
 * The checked build (the ASan pass, -DXKV_CHECKS) also marks the partition each
 * worker writes and aborts on any overlap: the storm then proves invariant 1 under
 * dcrew, and a second test, with a server whose workers let their slot go before
 * writing (tests/server/broken/early_release.c), proves that the check can fail.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <xkv/ewt.h>
#include <xkv/hash.h>
#include <xkv/memcached.h>
#include "bpfctl/bpfctl.h"
#include "client/client.h"
#include "proto/codec.h"
#include "server_proc.h"
#include "workloads.h"

#define WORKERS	       "8"
#define THREADS	       8
#define KEYS_PER_THREAD 2 /* one in each of the two partitions */
#define ROUNDS	       4000
#define READ_EVERY     4    /* a key is read back after its write every READ_EVERY rounds */
#define BUSY_TRIES     20   /* a write answered BUSY (xkv: a slot or a ring full) is retried */
#define PIECES_EVERY   16   /* one write in PIECES_EVERY is a value in pieces */
#define VALUE_MAX      5000 /* ... of 2 to 4 datagrams */

#define BIG_VALUE 1900   /* in one datagram: a frame over what a socket takes (2048 - 256) */
#define BIG_MTU	  "3000" /* lets it through whole: veth takes about 3.5 KB under XDP */
#define VETH_MTU  "1500" /* veth's own, which the other tests run at */

static struct server_proc srv;
static char allow[64];
static char keys[THREADS * KEYS_PER_THREAD][32];
static bool mtu_raised;

/* Both ends of run-in-netns.sh's veth at mtu; 0 or system's status. */
static int veth_mtu(const char *mtu)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip -n %s link set %s mtu %s && ip -n %s link set %s mtu %s",
		 netns_env("XKV_NS_SERVER"), netns_env("XKV_IFACE"), mtu,
		 netns_env("XKV_NS_CLIENT"), netns_env("XKV_IFACE_CLIENT"), mtu);
	return system(cmd);
}

static void setup(void)
{
	netns_test_setup(&srv, allow);
}

static void teardown(void)
{
	if (srv.pid > 0)
		kill(srv.pid, SIGCONT); /* a stopped server never sees the SIGTERM */
	server_stop(&srv);
	unlink(srv.out_path);
	if (mtu_raised && veth_mtu(VETH_MTU) == 0)
		mtu_raised = false;
}

TestSuite(server_dcrew, .init = setup, .fini = teardown, .timeout = 240);

/* Keys whose hashes fall in two partitions, half in each: every write contends. */
static void keys_pick(void)
{
	uint32_t parts[2], found[2] = {0, 0};
	const uint32_t per_part = THREADS * KEYS_PER_THREAD / 2;
	char key[32];

	snprintf(key, sizeof(key), "dcrew:0");
	parts[0] = xkv_partition(xkv_hash(key, strlen(key)));
	parts[1] = (parts[0] + 1) % XKV_PARTITIONS;
	for (uint32_t n = 0; found[0] < per_part || found[1] < per_part; n++) {
		uint32_t p;

		snprintf(key, sizeof(key), "dcrew:%u", n);
		p = xkv_partition(xkv_hash(key, strlen(key)));
		for (int i = 0; i < 2; i++) {
			if (p != parts[i] || found[i] == per_part)
				continue;
			/* thread t gets keys 2t (first partition) and 2t + 1 (second) */
			strcpy(keys[found[i] * 2 + i], key);
			found[i]++;
		}
	}
}

/* Most values fit a datagram; one in PIECES_EVERY takes 2 to 4. */
static uint32_t value_len(uint32_t seed)
{
	uint32_t x = seed * 2654435761u;

	return x % PIECES_EVERY == 0 ? 1500 + (x >> 8) % (VALUE_MAX - 1500) : (x >> 8) % 1200;
}

struct storm_thread {
	pthread_t thread;
	const char *server;
	int id;
	int failed, first_err;
	int busy; /* writes answered BUSY, then retried */
	uint32_t last_seed[KEYS_PER_THREAD]; /* of the value each key must hold; 0: deleted */
	atomic_bool *stop;
};

/* A PUT, again while it is answered BUSY: minos and xkv answer so a ring or slot that is full. */
static int put_retrying(struct storm_thread *t, struct xkv_client *c, const char *key,
			const uint8_t *value, uint32_t len)
{
	int err = xkv_client_put(c, key, strlen(key), value, len);

	for (int i = 0; err == -EBUSY && i < BUSY_TRIES; i++, t->busy++, usleep(1000))
		err = xkv_client_put(c, key, strlen(key), value, len);
	return err;
}

/* The key's value is value[0..len), byte for byte; -EILSEQ if not. */
static int read_back(struct xkv_client *c, const char *key, const uint8_t *value, uint32_t len)
{
	uint32_t got_len = 0;
	void *got = NULL;
	int err = xkv_client_get(c, key, strlen(key), &got, &got_len);

	if (!err && (got_len != len || memcmp(got, value, len)))
		err = -EILSEQ;
	free(got);
	return err;
}

/*
 * Thread t writes its own keys, round after round; every 10th round deletes one first,
 * and every READ_EVERY-th reads it back.
 */
static void *storm_run(void *arg)
{
	struct storm_thread *t = arg;
	static _Thread_local uint8_t value[VALUE_MAX];
	const struct xkv_client_opts opts = {.timeout_ms = 200, .retries = 5};
	struct xkv_client *c = xkv_client_open(t->server, &opts);

	if (!c) {
		t->failed++;
		t->first_err = -errno;
		return NULL;
	}
	for (uint32_t r = 1; r <= ROUNDS && !atomic_load(t->stop); r++) {
		for (int k = 0; k < KEYS_PER_THREAD; k++) {
			const char *key = keys[t->id * KEYS_PER_THREAD + k];
			uint32_t seed = (uint32_t)t->id << 24 | r << 1 | (uint32_t)k;
			int err = 0;

			if (r % 10 == 0) {
				err = xkv_client_delete(c, key, strlen(key));
				if (err == -ENOENT)
					err = 0;
			}
			if (!err) {
				workload_fill(value, value_len(seed), seed);
				err = put_retrying(t, c, key, value, value_len(seed));
			}
			if (!err && r % READ_EVERY == 0)
				err = read_back(c, key, value, value_len(seed));
			if (err) {
				if (!t->failed++)
					t->first_err = err;
				atomic_store(t->stop, true); /* one failure says it all */
				break;
			}
			t->last_seed[k] = seed;
		}
	}
	xkv_client_close(c);
	return NULL;
}

/*
 * THREADS clients at once; returns the failed requests, the first error in *first_err,
 * the writes answered BUSY (and retried) in *busy.
 */
static int storm(struct storm_thread *t, int *first_err, int *busy)
{
	atomic_bool stop = false;
	int failed = 0;

	*busy = 0;
	keys_pick();
	for (int i = 0; i < THREADS; i++) {
		t[i] = (struct storm_thread){.server = server_addr(&srv), .id = i, .stop = &stop};
		cr_assert_eq(pthread_create(&t[i].thread, NULL, storm_run, &t[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i].thread, NULL);
		if (t[i].failed && !failed)
			*first_err = t[i].first_err;
		failed += t[i].failed;
		*busy += t[i].busy;
	}
	return failed;
}

/* The table and XDP's counters of it, as xkv-loader stats reads them. */
static struct bpfctl_ewt ewt_read(void)
{
	struct bpfctl_ewt ewt;
	int err = bpfctl_ewt(netns_env("XKV_IFACE"), &ewt);

	cr_assert_eq(err, 0, "reading the pinned EWT: %s", strerror(-err));
	return ewt;
}

/* Slots still held; a reply may overtake its release, so it waits a little for them. */
static __u32 ewt_held(void)
{
	__u32 held = ewt_read().active;

	for (int tries = 0; held && tries < 100; tries++, usleep(10000))
		held = ewt_read().active;
	return held;
}

/* The queue depths of workers 0 and 1 added up, as steering reads them. */
static __u64 depths(void)
{
	int fd = bpfctl_map_open(netns_env("XKV_IFACE"), "xkv_qdepth");
	struct xkv_qdepth qd;
	__u64 sum = 0;

	cr_assert_geq(fd, 0, "opening the pinned xkv_qdepth: %s", strerror(-fd));
	for (__u32 w = 0; w < 2; w++) {
		cr_assert_eq(bpf_map_lookup_elem(fd, &w, &qd), 0);
		sum += qd.depth;
	}
	close(fd);
	return sum;
}

/* xkv: minos's roles recomputed every 100 ms while the storm runs, so they move under it. */
static void start_policy(const char *policy)
{
	const char *args[] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"),
			      "--workers", WORKERS, "--allow", allow, "--policy", policy,
			      "--memory", "64M", "--minos-percentile", "90", "--minos-epoch-ms",
			      "100", NULL};
	int err = server_start(&srv, args);

	cr_assert_eq(err, 0, "%s server did not start: %s", policy, strerror(-err));
}

/* The storm under policy, and everything that must hold after it. */
static void storm_keeps_one_writer_and_every_value(const char *policy)
{
	struct storm_thread t[THREADS];
	struct xkv_client *c;
	struct xkv_ewt_counters ewt, before;
	static uint8_t want[VALUE_MAX];
	int first_err = 0, failed, busy;
	long joined, released;

	start_policy(policy);
	/* a server killed before us (the next test's) leaves its pins, and XDP's counts */
	before = ewt_read().counters;
	failed = storm(t, &first_err, &busy);
	cr_assert_eq(failed, 0, "%d requests failed, the first: %s", failed,
		     strerror(-first_err));

	cr_assert_eq(ewt_held(), 0, "EWT slots still held after every write was answered");
	c = xkv_client_open(server_addr(&srv), NULL);
	cr_assert_not_null(c);
	for (int i = 0; i < THREADS; i++) {
		for (int k = 0; k < KEYS_PER_THREAD; k++) {
			const char *key = keys[i * KEYS_PER_THREAD + k];
			uint32_t seed = t[i].last_seed[k], len = 0;
			void *got = NULL;

			workload_fill(want, value_len(seed), seed);
			cr_assert_eq(xkv_client_get(c, key, strlen(key), &got, &len), 0, "%s", key);
			cr_assert(len == value_len(seed) && !memcmp(got, want, len),
				  "%s: not the last value written (%u bytes, want %u)", key, len,
				  value_len(seed));
			free(got);
		}
	}
	xkv_client_close(c);
	ewt = ewt_read().counters;
	ewt.taken -= before.taken;
	ewt.joined -= before.joined;
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	joined = server_counter(&srv, "ewt_joined");
	released = server_counter(&srv, "ewt_released");
	cr_log_info("%s: EWT taken %llu joined %llu cas_retry %llu dropped %llu; workers joined "
		    "%ld released %ld; hand-offs %ld; BUSY retried %d",
		    policy, (unsigned long long)ewt.taken, (unsigned long long)ewt.joined,
		    (unsigned long long)ewt.cas_retry, (unsigned long long)ewt.dropped, joined,
		    released, server_counter(&srv, "handoffs_sent"), busy);
	cr_assert_eq(server_counter(&srv, "ewt_not_owner"), 0,
		     "a write came to a worker that did not hold its slot");
	cr_assert_eq((long)(ewt.taken + ewt.joined) + joined, released,
		     "every write counted on a slot, by XDP or a worker, was released once");
	cr_assert_gt(ewt.joined, 0, "no write ever found its partition held: nothing contended");
	cr_assert_eq(server_counter(&srv, "frames_unaccounted"), 0, "a UMEM frame leaked");
}

Test(server_dcrew, write_storm_keeps_one_writer_and_every_value)
{
	storm_keeps_one_writer_and_every_value("dcrew");
	cr_assert_eq(server_counter(&srv, "ewt_joined"), 0, "dcrew: XDP counts every piece");
}

/* xkv: PUTs in pieces join from userspace, and large ones are handed to their holder. */
Test(server_dcrew, xkv_write_storm_keeps_one_writer_and_every_value)
{
	storm_keeps_one_writer_and_every_value("xkv");
	cr_assert_gt(server_counter(&srv, "ewt_joined"), 0, "no PUT in pieces joined its slot");
	cr_assert_gt(server_counter(&srv, "handoffs_taken"), 0, "no item was handed over");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A UDP socket in the client host, connected to the server's xkv port. */
static int udp_to_server(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(srv.port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, netns_env("XKV_SERVER_IP"), &to.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	return fd;
}

/*
 * The server stopped (SIGSTOP) while writes pour in: XDP claims their slots, the
 * kernel drops what the full rings cannot take, and nothing will ever release those
 * holds. Within a second of the server going on, every slot is empty again (healed,
 * never two writers: the checked build aborts on one), the counts balance, and
 * writes go on as before.
 */
static void dropped_writes_heal(const char *policy)
{
	const char *args[] = {"--backend", "xdp", "--iface", netns_env("XKV_IFACE"),
			      "--workers", "2", "--allow", allow, "--policy", policy, NULL};
	static uint8_t dgram[2048];
	struct xkv_ewt_counters ewt, before;
	struct storm_thread t[THREADS];
	int first_err = 0, busy, fd, err;
	long released, healed, joined;
	uint64_t start, waited;

	err = server_start(&srv, args);
	cr_assert_eq(err, 0, "server did not start: %s", strerror(-err));
	before = ewt_read().counters;
	fd = udp_to_server();
	cr_assert_eq(kill(srv.pid, SIGSTOP), 0);
	for (uint32_t i = 0; i < 12000; i++) {
		char key[16];

		snprintf(key, sizeof(key), "stuck%u", i % 64);
		send(fd, dgram, workload_put_datagram(dgram, key, i + 1, 64, 64), 0);
	}
	close(fd);
	usleep(100000); /* veth's XDP runs a little after the send */
	cr_assert_gt(ewt_read().active, 0, "no slot held while the server was stopped");
	cr_assert_eq(kill(srv.pid, SIGCONT), 0);
	start = now_ms();
	while (ewt_read().active && now_ms() - start < 5000)
		usleep(5000);
	waited = now_ms() - start;
	cr_assert_eq(ewt_read().active, 0, "slots still held %lu ms after the stall", waited);
	cr_assert_leq(waited, 1000, "the holds healed only after %lu ms", waited);
	cr_log_info("%s: every slot empty %lu ms after the stall ended", policy, waited);
	/* the writes the kernel dropped no longer count on the queue depths steering reads */
	while (depths() && now_ms() - start < 5000)
		usleep(5000);
	cr_assert_eq(depths(), 0, "queue depths still %llu %lu ms after the stall: the kernel's "
		     "drops were never taken off", (unsigned long long)depths(), now_ms() - start);

	/* writes balanced as before: the storm's writes take and release slots */
	cr_assert_eq(storm(t, &first_err, &busy), 0, "after the heal: %s", strerror(-first_err));
	cr_assert_eq(ewt_held(), 0, "slots held after the storm");
	ewt = ewt_read().counters;
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	joined = server_counter(&srv, "ewt_joined");
	released = server_counter(&srv, "ewt_released");
	healed = server_counter(&srv, "ewt_healed");
	cr_log_info("%s: EWT taken %llu joined %llu dropped %llu; workers joined %ld released "
		    "%ld healed %ld in %ld heals; kernel rx_dropped %ld fill_empty %ld",
		    policy, (unsigned long long)(ewt.taken - before.taken),
		    (unsigned long long)(ewt.joined - before.joined),
		    (unsigned long long)(ewt.dropped - before.dropped), joined, released, healed,
		    server_counter(&srv, "ewt_heals"), server_counter(&srv, "kernel rx_dropped"),
		    server_counter(&srv, "kernel rx_fill_ring_empty"));
	cr_assert_gt(healed, 0, "nothing healed: did the kernel drop no claimed write?");
	cr_assert_eq((long)(ewt.taken - before.taken + ewt.joined - before.joined) + joined,
		     released + healed, "every hold counted was released or healed, once");
	cr_assert_eq(server_counter(&srv, "ewt_not_owner"), 0);
}

Test(server_dcrew, dcrew_writes_the_kernel_dropped_heal)
{
	dropped_writes_heal("dcrew");
}

Test(server_dcrew, xkv_writes_the_kernel_dropped_heal)
{
	dropped_writes_heal("xkv");
}

/* count PUTs of BIG_VALUE bytes, each in one datagram: xkv's, and memcached's ASCII set. */
static void big_puts(int count)
{
	static uint8_t value[BIG_VALUE];
	struct sockaddr_in to = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint8_t buf[4096];

	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, srv.host, &to.sin_addr);
	for (int i = 0; i < count; i++) {
		struct xkv_mc_frame frame = {.request_id = htons(i), .total = htons(1)};
		struct xkv_msg m = {.op = XKV_OP_PUT, .request_id = i + 1, .value_len = BIG_VALUE,
				    .frag_len = BIG_VALUE, .frag = value};
		char key[32];
		int len;

		m.key_len = snprintf(key, sizeof(key), "big:%d", i);
		m.key = key;
		len = xkv_encode(buf, sizeof(buf), &m);
		cr_assert_gt(len, 0);
		to.sin_port = htons(srv.port);
		cr_assert_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), len);

		memcpy(buf, &frame, sizeof(frame));
		len = sizeof(frame);
		len += snprintf((char *)buf + len, sizeof(buf) - len, "set %s 0 0 %u\r\n", key,
				BIG_VALUE);
		memcpy(buf + len, value, BIG_VALUE);
		len += BIG_VALUE;
		memcpy(buf + len, "\r\n", 2);
		len += 2;
		to.sin_port = htons(XKV_MC_DEFAULT_PORT);
		cr_assert_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), len);
	}
	close(fd);
}

/*
 * Writes in one datagram whose frames no socket takes, on a link whose MTU lets them
 * through: XDP drops them before it claims their EWT slots (frame_too_large), where the
 * kernel would refuse them after the claim, leaving holds that only a heal gives back.
 */
Test(server_dcrew, writes_too_large_for_a_socket_hold_no_slot)
{
	const int count = 64;
	struct xkv_ewt_counters ewt, ewt_before;
	struct bpfctl_stats before, after;
	struct xkv_client *c;

	cr_assert_eq(veth_mtu(BIG_MTU), 0, "veth at mtu " BIG_MTU);
	mtu_raised = true;
	start_policy("xkv");
	cr_assert_eq(bpfctl_stats(netns_env("XKV_IFACE"), &before), 0);
	ewt_before = ewt_read().counters;
	big_puts(count);
	/* a request that fits is still served, and all that came before it was seen */
	c = xkv_client_open(server_addr(&srv), NULL);
	cr_assert_not_null(c);
	cr_assert_eq(xkv_client_put(c, "small", 5, "ok", 2), 0);
	xkv_client_close(c);
	/* the holds would heal after a while: none may be taken in the first place */
	ewt = ewt_read().counters;
	cr_assert_eq(ewt.taken + ewt.joined - ewt_before.taken - ewt_before.joined, 1,
		     "XDP claimed EWT slots for writes no socket takes");
	cr_assert_eq(ewt_held(), 0, "EWT slots held by writes no worker received");
	cr_assert_eq(bpfctl_stats(netns_env("XKV_IFACE"), &after), 0);
	cr_assert_eq(after.slots[XKV_R_FRAME_TOO_LARGE] - before.slots[XKV_R_FRAME_TOO_LARGE],
		     2 * count, "xkv-loader stats: frame_too_large");
	cr_assert_eq(server_stop(&srv), 0, "clean exit");
	cr_assert_eq(server_counter(&srv, "steering dropped frame_too_large"), 2 * count);
	cr_assert_eq(server_counter(&srv, "kernel rx_dropped"), 0, "the kernel refused some");
	cr_assert_eq(server_counter(&srv, "ewt_healed"), 0, "holds healed: some were taken");
}

#ifdef XKV_CHECKS
/* Workers that let the slot go before writing: two of them must meet in a partition. */
static void early_release_is_caught(const char *policy)
{
	struct storm_thread t[THREADS];
	int first_err = 0, busy;

	srv.bin = XKV_EARLY_RELEASE_BIN;
	start_policy(policy);
	storm(t, &first_err, &busy);
	cr_assert_eq(server_stop(&srv), -1, "%s: the server survived overlapping writers",
		     policy);
	cr_assert_eq(srv.term_signal, SIGABRT, "it died of signal %d, not the check's abort",
		     srv.term_signal);
}

Test(server_dcrew, early_release_is_caught_by_the_overlap_check)
{
	early_release_is_caught("dcrew");
}

/* the same under xkv, where compaction holds PUTs too (on by default) */
Test(server_dcrew, xkv_early_release_is_caught_by_the_overlap_check)
{
	early_release_is_caught("xkv");
}
#endif
