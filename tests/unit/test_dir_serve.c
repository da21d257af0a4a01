// SPDX-License-Identifier: MIT
/*
 * A server's part in the directory's removals and collisions (Pegasus Sec. 6.5-6.6;
 * engine/replicas.h, engine/dir_serve.h): the controller's notices make the set a
 * worker knows; a steered request for a key outside it goes home, or is served plainly
 * at home, never vouched for; malformed notices change nothing. And the report of the
 * hot keys the controller asks for (engine/hot.h, Pegasus Sec. 7.3).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <xkv/hash.h>
#include "engine/hot.h"
#include "engine/replicas.h"
#include "engine/worker.h"

#define FRAMES 8
#define SELF   1 /* the worker's server id in the pool */
#define HOME   2 /* the id of the server the suite's clients address */
#define HOT_EPOCH_NS 1000000 /* the hot keys' epoch: 1 ms */

/* A transport that keeps the replies it sends and the requests it sends on. */
struct capture {
	struct xkv_tx tx;
	uint8_t frames[FRAMES][XKV_DGRAM_MAX];
	size_t lens[FRAMES];
	unsigned used, replies, forwards;
	struct xkv_dir_server forwarded_to;
};

static void *capture_reserve(const struct xkv_origin *to, size_t *cap)
{
	struct capture *c = (struct capture *)to->tx;

	cr_assert_lt(c->used, FRAMES);
	*cap = XKV_DGRAM_MAX;
	return c->frames[c->used];
}

static void capture_send(const struct xkv_origin *to, void *buf, size_t len)
{
	struct capture *c = (struct capture *)to->tx;

	cr_assert_eq(buf, c->frames[c->used]);
	c->lens[c->used++] = len;
	c->replies++;
}

static void capture_release(const struct xkv_origin *to, void *buf)
{
	(void)to, (void)buf;
}

static int capture_forward(const struct xkv_origin *to, void *buf, size_t len, uint32_t addr,
			   uint16_t port)
{
	struct capture *c = (struct capture *)to->tx;

	c->forwarded_to = (struct xkv_dir_server){.addr = addr, .port = port};
	capture_send(to, buf, len);
	c->replies--;
	c->forwards++;
	return 0;
}

static struct capture cap;
static struct xkv_store *store;
static struct xkv_replicas *replicas;
static struct xkv_hot *hot;
static struct xkv_worker w;
static struct xkv_origin origin;
static const struct xkv_validate unbounded = {.trusted = {{.prefixlen = 0}}, .ntrusted = 1};

static void setup(void)
{
	struct xkv_store_config scfg = {.memory_limit = 8 << 20, .bucket_bits = 6,
					.overflow_buckets = 2};
	struct xkv_worker_config cfg = {.nworkers = 1, .policy = XKV_POLICY_EREW,
					.tx = &cap.tx, .validate = &unbounded,
					.reasm = {.memory_limit = 1 << 20, .max_messages = 16,
						  .timeout_ns = 1000000000}};

	cap = (struct capture){.tx = {.reserve = capture_reserve, .send = capture_send,
				      .release = capture_release, .forward = capture_forward}};
	origin = (struct xkv_origin){.tx = &cap.tx, .peer = {.port = htons(40000)}};
	xkv_store_thread_online();
	store = xkv_store_create(&scfg);
	replicas = xkv_replicas_create();
	hot = xkv_hot_create(1, HOT_EPOCH_NS);
	cr_assert(store && replicas && hot);
	cfg.store = store;
	cfg.replicas = replicas;
	cfg.hot = hot;
	cr_assert_eq(xkv_worker_init(&w, &cfg), 0);
}

static void teardown(void)
{
	xkv_worker_fini(&w);
	xkv_replicas_destroy(replicas);
	xkv_hot_destroy(hot);
	xkv_store_destroy(store);
	xkv_store_thread_offline();
}

TestSuite(dir_serve, .init = setup, .fini = teardown);

/* Server id's address in the suite's pool. */
static struct xkv_dir_server server(uint32_t id)
{
	return (struct xkv_dir_server){.addr = htonl(0x0a000101 + id), .port = htons(7411)};
}

static struct xkv_dir_notice notice_of(enum xkv_dir_key_state state)
{
	struct xkv_dir_notice n = {.state = (uint8_t)state, .self = SELF, .nservers = 4};

	for (uint32_t id = 0; id < 4; id++)
		n.servers[id] = server(id);
	return n;
}

/* What the worker sent for m: the one datagram, decoded into *out. */
static void serve(const struct xkv_msg *m, struct xkv_msg *out)
{
	uint8_t dgram[XKV_DGRAM_MAX];
	int len = xkv_encode(dgram, sizeof(dgram), m);

	cr_assert_gt(len, 0);
	cap.used = cap.replies = cap.forwards = 0;
	xkv_worker_datagram(&w, &origin, dgram, (size_t)len);
	cr_assert_eq(cap.used, 1, "one datagram out, sent %u", cap.used);
	cr_assert_eq(xkv_decode(cap.frames[0], cap.lens[0], out), XKV_R_OK);
}

static struct xkv_msg message(uint8_t op, const char *key, const void *value, uint32_t len)
{
	static uint32_t id = 1;

	return (struct xkv_msg){.op = op, .key = key, .key_len = (uint16_t)strlen(key),
				.request_id = id++, .value_len = len, .frag_len = len,
				.frag = value, .dir = true};
}

/* A notice about key, as the controller sends it; the status it was answered. */
static uint8_t tell(const char *key, const void *notice, uint32_t len)
{
	struct xkv_msg m = message(XKV_OP_PUT, key, notice, len), r;

	m.ext.dflags = XKV_DIR_NOTICE;
	serve(&m, &r);
	cr_assert_eq(cap.replies, 1);
	cr_assert_eq(r.ext.dflags, XKV_DIR_NOTICE, "the notice's extension is echoed");
	return r.status;
}

static void tell_state(const char *key, enum xkv_dir_key_state state)
{
	struct xkv_dir_notice n = notice_of(state);

	cr_assert_eq(tell(key, &n, sizeof(n)), XKV_S_OK);
}

/* A request the directory steered here for key, version ver, its client having addressed target. */
static struct xkv_msg steered(uint8_t op, const char *key, const char *value, uint64_t ver,
			      uint8_t target)
{
	struct xkv_msg m = message(op, key, value, value ? (uint32_t)strlen(value) : 0);

	m.ext = (struct xkv_dir_ext){.key_hash = htobe64(xkv_hash(key, (uint32_t)strlen(key))),
				     .ver = htobe64(ver), .target = target,
				     .dflags = XKV_DIR_STEERED};
	return m;
}

static bool stored(const char *key, const char *want, uint64_t want_ver)
{
	uint32_t klen = (uint32_t)strlen(key), len;
	struct xkv_item_meta meta;
	char buf[64];

	if (xkv_store_get_meta(store, key, klen, xkv_hash(key, klen), buf, sizeof(buf), &len,
			       &meta))
		return !want;
	return want && len == strlen(want) && !memcmp(buf, want, len) && meta.ver == want_ver;
}

/* A replicated key's requests are served as the directory steered them, and vouched for. */
Test(dir_serve, a_replicated_keys_requests_are_served_as_steered)
{
	struct xkv_msg put = steered(XKV_OP_PUT, "hot", "v7", 7, HOME), r;

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	serve(&put, &r);
	cr_assert_eq(cap.replies, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.ext.dflags, XKV_DIR_STEERED, "vouched for");
	cr_assert_eq(be64toh(r.ext.ver), 7);
	cr_assert(stored("hot", "v7", 7));
	cr_assert_eq(w.exec.stats.dir_notices, 1);
	cr_assert_eq(w.exec.stats.dir_forwarded, 0);
}

/*
 * Sec. 6.6: a steered write for a key the server does not hold replicated (a late
 * packet, a collision) goes home as it came, marked, from its client; nothing here.
 */
Test(dir_serve, a_stray_goes_home_untouched)
{
	struct xkv_msg put = steered(XKV_OP_PUT, "cold", "late", 5, HOME), fwd;
	struct xkv_dir_server home = server(HOME);

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	serve(&put, &fwd);
	cr_assert_eq(cap.forwards, 1, "sent home, not answered");
	cr_assert_eq(cap.forwarded_to.addr, home.addr);
	cr_assert_eq(cap.forwarded_to.port, home.port);
	cr_assert_eq(fwd.op, XKV_OP_PUT);
	cr_assert_eq(fwd.key_len, 4);
	cr_assert_eq(memcmp(fwd.key, "cold", 4), 0);
	cr_assert_eq(fwd.frag_len, 4);
	cr_assert_eq(memcmp(fwd.frag, "late", 4), 0);
	cr_assert_eq(fwd.request_id, put.request_id, "the client's id: home answers it");
	cr_assert_eq(fwd.ext.dflags, XKV_DIR_STEERED | XKV_DIR_FORWARDED);
	cr_assert_eq(be64toh(fwd.ext.ver), 5);
	cr_assert(stored("cold", NULL, 0), "not written here");
	cr_assert_eq(w.exec.stats.dir_forwarded, 1);
}

/* The same key's hash, another key: the set is of keys, not of hashes. */
Test(dir_serve, a_key_colliding_with_a_replicated_ones_hash_is_a_stray)
{
	struct xkv_dir_server home;

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	cr_assert_eq(xkv_replicas_route(replicas, "hot", 3, 42, false, HOME, false, &home),
		     XKV_REPLICA_FORWARD, "hot under another hash is not hot");
	cr_assert_eq(xkv_replicas_route(replicas, "hot", 3, xkv_hash("hot", 3), false, HOME,
					false, &home),
		     XKV_REPLICA_SERVE);
	cr_assert_eq(xkv_replicas_route(replicas, "hou", 3, xkv_hash("hot", 3), false, HOME,
					false, &home),
		     XKV_REPLICA_FORWARD, "another key under hot's hash is not hot");
}

/*
 * At its home, a stray is served as the unsteered request it is: applied whatever
 * version it carries (the version is another key's, or from before a removal), and
 * answered without vouching, its source already the address its client sent to.
 */
Test(dir_serve, at_home_a_stray_is_served_plainly)
{
	struct xkv_msg put = steered(XKV_OP_PUT, "cold", "new", 3, SELF), r;
	struct xkv_msg old = message(XKV_OP_PUT, "cold", "older", 5);

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	old.dir = false;
	serve(&old, &r);
	put.ext.dflags |= XKV_DIR_FORWARDED; /* a server sent it here */
	serve(&put, &r);
	cr_assert_eq(cap.replies, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.ext.dflags, 0, "neither steered nor vouching");
	cr_assert(stored("cold", "new", 0), "applied plainly, at no version");
	cr_assert_eq(w.exec.stats.dir_unreplicated, 1);
	cr_assert_eq(w.exec.stats.dir_applied + w.exec.stats.dir_stale, 0);
}

/*
 * Sec. 6.5: while a key is removed its reads are served where they land, its writes
 * go home; home applies them by version and vouches, for the directory's quiescence.
 */
Test(dir_serve, a_migrating_keys_writes_go_home)
{
	struct xkv_msg get = steered(XKV_OP_GET, "hot", NULL, 0, HOME), r;
	struct xkv_msg put = steered(XKV_OP_PUT, "hot", "v9", 9, HOME);

	tell_state("hot", XKV_DIR_KEY_MIGRATING);
	serve(&get, &r);
	cr_assert_eq(cap.replies, 1, "a read is served");
	cr_assert_eq(r.ext.dflags, XKV_DIR_STEERED);
	serve(&put, &r);
	cr_assert_eq(cap.forwards, 1, "a write goes home");
	put = steered(XKV_OP_PUT, "hot", "v9", 9, SELF);
	put.ext.dflags |= XKV_DIR_FORWARDED;
	serve(&put, &r);
	cr_assert_eq(cap.replies, 1, "home applies it");
	cr_assert_eq(r.ext.dflags & (XKV_DIR_STEERED | XKV_DIR_NO_VERSION), XKV_DIR_STEERED);
	cr_assert_eq(be64toh(r.ext.ver), 9);
	cr_assert(stored("hot", "v9", 9));
}

/* REMOVE-COMPLETE: a key gone is a stray again. */
Test(dir_serve, a_key_gone_is_a_stray_again)
{
	struct xkv_msg get = steered(XKV_OP_GET, "hot", NULL, 0, HOME), r;

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	tell_state("hot", XKV_DIR_KEY_GONE);
	serve(&get, &r);
	cr_assert_eq(cap.forwards, 1);
}

/* Never sent on twice, nor to a server outside the pool: refused, counted. */
Test(dir_serve, a_stray_with_nowhere_to_go_is_refused)
{
	struct xkv_msg twice = steered(XKV_OP_GET, "cold", NULL, 0, HOME), r;
	struct xkv_msg nowhere = steered(XKV_OP_GET, "cold", NULL, 0, 9);

	tell_state("hot", XKV_DIR_KEY_REPLICATED);
	twice.ext.dflags |= XKV_DIR_FORWARDED;
	serve(&twice, &r);
	cr_assert_eq(r.status, XKV_S_BAD_REQUEST);
	serve(&nowhere, &r);
	cr_assert_eq(r.status, XKV_S_BAD_REQUEST);
	cr_assert_eq(cap.forwards, 0);
	cr_assert_eq(w.exec.stats.dir_strays_refused, 2);
}

/* A server no controller told anything serves steered requests as it did before. */
Test(dir_serve, untold_a_server_serves_every_steered_request)
{
	struct xkv_msg put = steered(XKV_OP_PUT, "cold", "v4", 4, HOME), r;

	serve(&put, &r);
	cr_assert_eq(cap.replies, 1);
	cr_assert_eq(r.ext.dflags, XKV_DIR_STEERED);
	cr_assert(stored("cold", "v4", 4));
}

/* Notices that are not: refused, the set as it was. */
Test(dir_serve, malformed_notices_change_nothing)
{
	struct xkv_dir_notice n = notice_of(XKV_DIR_KEY_REPLICATED), bad;
	struct xkv_msg get = message(XKV_OP_GET, "hot", NULL, 0), r;
	struct xkv_dir_server home;

	bad = n, bad.state = 3;
	cr_assert_eq(tell("hot", &bad, sizeof(bad)), XKV_S_BAD_REQUEST);
	bad = n, bad.nservers = 0;
	cr_assert_eq(tell("hot", &bad, sizeof(bad)), XKV_S_BAD_REQUEST);
	bad = n, bad.nservers = XKV_DIR_SERVERS + 1;
	cr_assert_eq(tell("hot", &bad, sizeof(bad)), XKV_S_BAD_REQUEST);
	bad = n, bad.self = 4;
	cr_assert_eq(tell("hot", &bad, sizeof(bad)), XKV_S_BAD_REQUEST);
	bad = n, bad.pad = 1;
	cr_assert_eq(tell("hot", &bad, sizeof(bad)), XKV_S_BAD_REQUEST);
	cr_assert_eq(tell("hot", &n, sizeof(n) - 1), XKV_S_BAD_REQUEST);
	get.ext.dflags = XKV_DIR_NOTICE; /* a notice is a PUT */
	serve(&get, &r);
	cr_assert_eq(r.status, XKV_S_BAD_REQUEST);
	cr_assert_eq(w.exec.stats.dir_notices_refused, 7);
	cr_assert_eq(xkv_replicas_route(replicas, "cold", 4, 1, true, HOME, false, &home),
		     XKV_REPLICA_SERVE, "still untold");
}

/* As many keys as a directory holds and as many again, and no more. */
Test(dir_serve, the_set_holds_as_many_keys_as_a_directory)
{
	struct xkv_dir_notice n = notice_of(XKV_DIR_KEY_REPLICATED);
	char key[16];

	for (int i = 0; i < XKV_REPLICAS_MAX; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		cr_assert_eq(xkv_replicas_notice(replicas, key, (uint16_t)strlen(key),
						 xkv_hash(key, (uint32_t)strlen(key)), &n, sizeof(n)),
			     0);
		urcu_qsbr_quiescent_state(); /* the snapshot replaced may go */
	}
	cr_assert_eq(xkv_replicas_notice(replicas, "one more", 8, xkv_hash("one more", 8), &n,
					 sizeof(n)),
		     -ENOSPC);
	cr_assert_eq(xkv_replicas_notice(replicas, "k7", 2, xkv_hash("k7", 2), &n, sizeof(n)), 0,
		     "a key held already is no more");
	urcu_qsbr_quiescent_state(); /* the snapshots replaced meanwhile may go */
}

/* m to the worker, whatever it sends. */
static void inject(const struct xkv_msg *m)
{
	uint8_t dgram[XKV_DGRAM_MAX];
	int len = xkv_encode(dgram, sizeof(dgram), m);

	cr_assert_gt(len, 0);
	xkv_worker_datagram(&w, &origin, dgram, (size_t)len);
}

/* A report, v[0 .. len), decoded: its keys' entries and names; how many. */
static uint16_t decode(const uint8_t *v, size_t len, struct xkv_dir_report_key *keys,
		       char names[][16], uint64_t *requests)
{
	struct xkv_dir_report head;
	size_t at = sizeof(head);

	cr_assert_geq(len, sizeof(head));
	memcpy(&head, v, sizeof(head));
	cr_assert_eq(ntohl(head.epoch_ms), 1);
	*requests = be64toh(head.requests);
	for (uint16_t i = 0; i < ntohs(head.n); i++) {
		uint16_t klen;

		memcpy(&keys[i], v + at, sizeof(keys[i]));
		klen = ntohs(keys[i].len);
		cr_assert_lt(klen, 16);
		memcpy(names[i], v + at + sizeof(keys[i]), klen);
		names[i][klen] = '\0';
		at += sizeof(keys[i]) + klen;
	}
	cr_assert_eq(at, len, "the keys end the value");
	return ntohs(head.n);
}

/* The report the worker answers a GET marked XKV_DIR_REPORT with, decoded. */
static uint16_t report(struct xkv_dir_report_key *keys, char names[][16], uint64_t *requests)
{
	struct xkv_msg ask = message(XKV_OP_GET, "xkv-dir:report", NULL, 0), r;

	ask.ext.dflags = XKV_DIR_REPORT;
	serve(&ask, &r);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.frag_len, r.value_len, "a report this small is one datagram");
	return decode(r.frag, r.value_len, keys, names, requests);
}

/* Workers' tops merged: a key two workers served counts both, and ranks by the sum. */
Test(dir_serve, a_report_sums_a_key_over_the_workers)
{
	struct xkv_hot *two = xkv_hot_create(2, HOT_EPOCH_NS);
	struct xkv_dir_report_key keys[4];
	uint8_t buf[1024];
	char names[4][16];
	uint64_t requests;

	cr_assert_not_null(two);
	xkv_hot_tick(two, 0, 1);
	xkv_hot_tick(two, 1, 1);
	for (int i = 0; i < 3; i++)
		xkv_hot_count(two, 0, "a", 1, xkv_hash("a", 1));
	for (int i = 0; i < 2; i++)
		xkv_hot_count(two, 1, "a", 1, xkv_hash("a", 1));
	for (int i = 0; i < 4; i++)
		xkv_hot_count(two, 1, "b", 1, xkv_hash("b", 1));
	xkv_hot_tick(two, 0, 1 + HOT_EPOCH_NS);
	xkv_hot_tick(two, 1, 1 + HOT_EPOCH_NS);
	cr_assert_eq(decode(buf, xkv_hot_report(two, buf, sizeof(buf)), keys, names, &requests), 2);
	cr_assert_eq(requests, 9);
	cr_assert_str_eq(names[0], "a");
	cr_assert_eq(be64toh(keys[0].count), 5);
	cr_assert_str_eq(names[1], "b");
	cr_assert_eq(be64toh(keys[1].count), 4);
	/* room for the header and one key: the hottest */
	cr_assert_eq(decode(buf, xkv_hot_report(two, buf, sizeof(struct xkv_dir_report) + 11),
			    keys, names, &requests),
		     1);
	cr_assert_str_eq(names[0], "a");
	xkv_hot_destroy(two);
}

/*
 * The keys of the requests served in the last epoch, hottest first, with their counts
 * (a value in pieces counted once); nothing before an epoch has ended; a report asked
 * by a PUT refused.
 */
Test(dir_serve, the_report_names_the_last_epochs_hot_keys)
{
	struct xkv_dir_report_key keys[8];
	struct xkv_msg m, r;
	char names[8][16];
	uint64_t requests;
	uint8_t big[2000] = {0};

	xkv_worker_tick(&w, 1000); /* the epoch starts */
	for (int i = 0; i < 5; i++) {
		m = message(XKV_OP_GET, "hot:a", NULL, 0);
		serve(&m, &r);
	}
	for (int i = 0; i < 3; i++) {
		m = message(XKV_OP_GET, "hot:b", NULL, 0);
		serve(&m, &r);
	}
	cap.used = cap.replies = 0;
	m = message(XKV_OP_PUT, "cold", big, sizeof(big)); /* two pieces, one request */
	m.frag_len = 1300;
	inject(&m);
	m.frag_offset = 1300;
	m.frag = big + 1300;
	m.frag_len = sizeof(big) - 1300;
	inject(&m);
	cr_assert_eq(cap.replies, 1, "the PUT answered once whole");
	cr_assert_eq(report(keys, names, &requests), 0, "no epoch has ended yet");
	xkv_worker_tick(&w, 1000 + HOT_EPOCH_NS);
	cr_assert_eq(report(keys, names, &requests), 3);
	cr_assert_eq(requests, 9, "5 + 3 + 1: a value's pieces are one request");
	cr_assert_str_eq(names[0], "hot:a");
	cr_assert_eq(be64toh(keys[0].count), 5);
	cr_assert_str_eq(names[1], "hot:b");
	cr_assert_eq(be64toh(keys[1].count), 3);
	cr_assert_str_eq(names[2], "cold");
	cr_assert_eq(w.exec.stats.dir_reports, 2);
	m = message(XKV_OP_PUT, "xkv-dir:report", "x", 1);
	m.ext.dflags = XKV_DIR_REPORT;
	serve(&m, &r);
	cr_assert_eq(r.status, XKV_S_BAD_REQUEST);
}
