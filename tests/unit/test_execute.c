// SPDX-License-Identifier: MIT
/* Request execution: every op's reply, values in pieces, and replies a full transport loses. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xkv/hash.h>
#include "engine/execute.h"
#include "engine/worker.h"
#include "proto/mc_udp.h"

#define FRAME	 XKV_DGRAM_MAX
#define HDR	 ((uint32_t)sizeof(struct xkv_hdr))
#define FRAMES_MAX 1024

/* A transport that keeps what it is asked to send, and along which route. */
struct capture {
	struct xkv_tx tx;
	uint8_t frames[FRAMES_MAX][FRAME];
	size_t lens[FRAMES_MAX];
	uint8_t routes[FRAMES_MAX]; /* the route each frame went along: its origin's byte 0 */
	unsigned reserved, sent;
	unsigned room; /* buffers it will hand out before refusing */
};

static void *capture_reserve(const struct xkv_origin *to, size_t *cap)
{
	struct capture *c = (struct capture *)to->tx;

	if (c->reserved >= c->room || c->reserved == FRAMES_MAX)
		return NULL;
	*cap = FRAME;
	return c->frames[c->reserved++];
}

static void capture_send(const struct xkv_origin *to, void *buf, size_t len)
{
	struct capture *c = (struct capture *)to->tx;

	cr_assert_eq(buf, c->frames[c->sent], "sent in the order reserved");
	c->routes[c->sent] = to->route.bytes[0];
	c->lens[c->sent++] = len;
}

static struct capture *cap;
static struct xkv_store *store;
static struct xkv_exec x;
/* Where the suite's requests come from: a capture, a queue, a route (a test sets them). */
static struct xkv_origin origin;
/* Every network trusted: no reply is bounded, but in the suite's tests of the bound */
static const struct xkv_validate unbounded = {.trusted = {{.prefixlen = 0}}, .ntrusted = 1};
static uint32_t next_id = 1;

static void setup(void)
{
	struct xkv_store_config cfg = {
		.memory_limit = 8 << 20,
		.bucket_bits = 6,
		.overflow_buckets = 2,
	};

	cap = calloc(1, sizeof(*cap));
	cap->tx = (struct xkv_tx){.reserve = capture_reserve, .send = capture_send};
	origin = (struct xkv_origin){.tx = &cap->tx, .peer = {.port = 99}};
	cap->room = FRAMES_MAX;
	xkv_store_thread_online();
	store = xkv_store_create(&cfg);
	cr_assert_not_null(store);
	cr_assert_eq(xkv_exec_init(&x, store, &unbounded), 0);
}

/* Worker id of n under policy, on the suite's store, answering into the capture. */
static int worker_init(struct xkv_worker *w, uint32_t id, uint32_t n, enum xkv_policy policy,
		       const struct xkv_reasm_config *reasm)
{
	const struct xkv_worker_config cfg = {.id = id, .nworkers = n, .policy = policy,
					      .store = store, .tx = &cap->tx,
					      .validate = &unbounded, .reasm = *reasm};

	return xkv_worker_init(w, &cfg);
}

static void teardown(void)
{
	xkv_exec_fini(&x);
	xkv_store_destroy(store);
	xkv_store_thread_offline();
	free(cap);
}

TestSuite(execute, .init = setup, .fini = teardown);

static struct xkv_msg request(uint8_t op, const char *key, const void *value, uint32_t len)
{
	return (struct xkv_msg){
		.op = op,
		.key_len = strlen(key),
		.key = key,
		.request_id = next_id++,
		.timestamp = 0xabcdef0123ULL,
		.value_len = len,
		.frag_len = len,
		.frag = value,
	};
}

/* Runs one request; returns the first reply datagram, checks that it answers req. */
static struct xkv_msg run(const struct xkv_msg *req, unsigned want_datagrams)
{
	struct xkv_msg reply;

	cap->reserved = cap->sent = 0;
	xkv_execute(&x, &origin, req, xkv_hash(req->key, req->key_len));
	cr_assert_eq(cap->sent, want_datagrams, "reply datagrams: %u, want %u", cap->sent,
		     want_datagrams);
	cr_assert_eq(cap->reserved, cap->sent, "every reserved buffer was sent");
	for (unsigned i = 0; i < cap->sent; i++) {
		cr_assert_eq(xkv_decode(cap->frames[i], cap->lens[i], &reply), XKV_R_OK,
			     "reply %u decodes", i);
		cr_assert_eq(reply.op, req->op | XKV_OP_REPLY);
		cr_assert_eq(reply.request_id, req->request_id);
		cr_assert_eq(reply.timestamp, req->timestamp, "the timestamp is echoed");
	}
	xkv_decode(cap->frames[0], cap->lens[0], &reply);
	return reply;
}

Test(execute, every_op)
{
	struct xkv_msg get = request(XKV_OP_GET, "k", NULL, 0);
	struct xkv_msg put = request(XKV_OP_PUT, "k", "hello", 5);
	struct xkv_msg del = request(XKV_OP_DELETE, "k", NULL, 0);
	struct xkv_msg r;

	cr_assert_eq(run(&get, 1).status, XKV_S_NOT_FOUND);
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	r = run(&get, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.value_len, 5);
	cr_assert_eq(memcmp(r.frag, "hello", 5), 0);
	cr_assert_eq(run(&del, 1).status, XKV_S_OK);
	cr_assert_eq(run(&del, 1).status, XKV_S_NOT_FOUND);
	cr_assert_eq(run(&get, 1).status, XKV_S_NOT_FOUND);
	cr_assert_eq(x.stats.requests[XKV_OP_GET], 3);
	cr_assert_eq(x.stats.replies[XKV_S_NOT_FOUND], 3);
}

Test(execute, empty_value)
{
	struct xkv_msg put = request(XKV_OP_PUT, "e", "", 0);
	struct xkv_msg get = request(XKV_OP_GET, "e", NULL, 0);
	struct xkv_msg r;

	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	r = run(&get, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.value_len, 0);
}

/* Values that need several datagrams come back in pieces that tile the value exactly. */
static void check_pieces(uint32_t len)
{
	static uint8_t value[XKV_VALUE_MAX], got[XKV_VALUE_MAX];
	unsigned pieces = len <= FRAME - HDR ? 1 : (len + FRAME - HDR - 1) / (FRAME - HDR);
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, len);
	struct xkv_msg get = request(XKV_OP_GET, "big", NULL, 0);
	uint32_t covered = 0;

	for (uint32_t i = 0; i < len; i++)
		value[i] = (uint8_t)(i * 13 + len);
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	run(&get, pieces);
	for (unsigned i = 0; i < pieces; i++) {
		struct xkv_msg r;

		xkv_decode(cap->frames[i], cap->lens[i], &r);
		cr_assert_eq(r.value_len, len);
		cr_assert_eq(r.frag_offset, covered, "piece %u in order", i);
		memcpy(got + r.frag_offset, r.frag, r.frag_len);
		covered += r.frag_len;
	}
	cr_assert_eq(covered, len);
	cr_assert_eq(memcmp(got, value, len), 0, "%u bytes back, byte for byte", len);
}

Test(execute, values_in_pieces)
{
	check_pieces(FRAME - HDR);     /* exactly one datagram */
	check_pieces(FRAME - HDR + 1); /* one byte over */
	check_pieces(100000);
	cap->room = FRAMES_MAX;
	check_pieces(XKV_VALUE_MAX / 2);
}

/* A request a coherence directory steered here, version ver (docs/DIRECTORY.md). */
static struct xkv_msg steered(uint8_t op, const char *key, const void *value, uint32_t len,
			      uint64_t ver)
{
	struct xkv_msg m = request(op, key, value, len);

	m.dir = true;
	m.ext = (struct xkv_dir_ext){.key_hash = htobe64(xkv_hash(key, strlen(key))),
				     .ver = htobe64(ver),
				     .write_set = htonl(1u << 2),
				     .target = 3,
				     .dflags = XKV_DIR_STEERED};
	return m;
}

/* The version a reply to a steered request vouches for; fails if it vouches for none. */
static uint64_t vouched(const struct xkv_msg *req, const struct xkv_msg *r)
{
	cr_assert(r->dir, "a version 3 request gets a version 3 reply");
	cr_assert_eq(r->ext.dflags, XKV_DIR_STEERED, "it vouches for a version");
	cr_assert_eq(r->ext.key_hash, req->ext.key_hash);
	cr_assert_eq(r->ext.target, req->ext.target, "the addressed server, for the directory");
	return be64toh(r->ext.ver);
}

static void assert_value(const char *key, const char *want, uint64_t want_ver)
{
	struct xkv_msg get = steered(XKV_OP_GET, key, NULL, 0, 0);
	struct xkv_msg r = run(&get, 1);

	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(r.frag_len, strlen(want));
	cr_assert_eq(memcmp(r.frag, want, r.frag_len), 0, "the value");
	cr_assert_eq(vouched(&get, &r), want_ver);
}

/* Pegasus Sec. 6.3.1: a steered write applies only over an older version. */
Test(execute, a_steered_write_applies_only_over_an_older_version)
{
	struct xkv_msg put5 = steered(XKV_OP_PUT, "hot", "five", 4, 5);
	struct xkv_msg put4 = steered(XKV_OP_PUT, "hot", "four", 4, 4);
	struct xkv_msg put6 = steered(XKV_OP_PUT, "hot", "sixsix", 6, 6);
	struct xkv_msg del5 = steered(XKV_OP_DELETE, "hot", NULL, 0, 5);
	struct xkv_msg del7 = steered(XKV_OP_DELETE, "hot", NULL, 0, 7);
	struct xkv_msg del8 = steered(XKV_OP_DELETE, "hot", NULL, 0, 8);
	struct xkv_msg plain = request(XKV_OP_PUT, "hot", "plain", 5);
	struct xkv_msg put1 = steered(XKV_OP_PUT, "hot", "one", 3, 1);
	struct xkv_msg get = steered(XKV_OP_GET, "hot", NULL, 0, 0);
	struct xkv_msg r;

	r = run(&put5, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(vouched(&put5, &r), 5);
	assert_value("hot", "five", 5);
	/* a late, older write: answered with the newer version it lost to */
	r = run(&put4, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(vouched(&put4, &r), 5);
	assert_value("hot", "five", 5);
	cr_assert_eq(run(&put6, 1).status, XKV_S_OK);
	assert_value("hot", "sixsix", 6);
	r = run(&del5, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(vouched(&del5, &r), 6, "not deleted: 6 is newer");
	assert_value("hot", "sixsix", 6);
	r = run(&del7, 1);
	cr_assert_eq(r.status, XKV_S_OK);
	cr_assert_eq(vouched(&del7, &r), 7);
	r = run(&del8, 1);
	cr_assert_eq(r.status, XKV_S_OK, "absent here, which says nothing of the key");
	cr_assert_eq(vouched(&del8, &r), 8);
	/* the deletion's tombstone: a read vouches for it, an older write is stale */
	r = run(&get, 1);
	cr_assert_eq(r.status, XKV_S_NOT_FOUND);
	cr_assert_eq(vouched(&get, &r), 8);
	r = run(&put6, 1);
	cr_assert_eq(vouched(&put6, &r), 8, "a write older than the deletion");
	cr_assert_eq(run(&get, 1).status, XKV_S_NOT_FOUND);
	cr_assert_eq(x.stats.dir_applied, 4);
	cr_assert_eq(x.stats.dir_stale, 3);
	/* a write the directory did not steer leaves no version: any steered one follows */
	cr_assert_eq(run(&plain, 1).status, XKV_S_OK);
	cr_assert_eq(run(&put1, 1).status, XKV_S_OK);
	assert_value("hot", "one", 1);
}

/*
 * Replies carry the load and the time per request, and echo the directory's stamp; one
 * that read and wrote nothing vouches for no version.
 */
Test(execute, version_3_replies_carry_the_load_and_vouch_only_for_what_they_did)
{
	struct xkv_msg get = request(XKV_OP_GET, "k", NULL, 0);
	struct xkv_msg huge = steered(XKV_OP_PUT, "hot", "v", 1, 9);
	struct xkv_msg forged = steered(XKV_OP_GET, "hot", NULL, 0, 0);
	struct xkv_msg stamped = steered(XKV_OP_GET, "hot", NULL, 0, 0);
	struct xkv_msg r;

	x.load = 17;
	x.service = 300;
	get.dir = true; /* a client's, not steered: its extension zero */
	r = run(&get, 1);
	cr_assert(r.dir);
	cr_assert_eq(ntohl(r.ext.load), 17);
	cr_assert_eq(ntohs(r.ext.service), 300);
	stamped.ext.sent = htonl(0xfeedbeef);
	cr_assert_eq(ntohl(run(&stamped, 1).ext.sent), 0xfeedbeef, "the stamp times the reply");
	cr_assert_eq(r.ext.dflags, 0);
	cr_assert_eq(r.ext.ver, 0);
	get.dir = false;
	cr_assert_not(run(&get, 1).dir, "version 2 gets version 2");
	/* a value past the limit: refused, no version */
	huge.value_len = huge.frag_len = XKV_VALUE_MAX + 1;
	r = run(&huge, 1);
	cr_assert_eq(r.status, XKV_S_TOO_LARGE);
	cr_assert_eq(r.ext.dflags, XKV_DIR_STEERED | XKV_DIR_NO_VERSION);
	cr_assert_eq(ntohl(r.ext.load), 17);
	/* a hash that is not the key's: what was read is not what it names */
	forged.ext.key_hash ^= 1;
	r = run(&forged, 1);
	cr_assert_eq(r.ext.dflags, XKV_DIR_STEERED | XKV_DIR_NO_VERSION);
}

/* A steered GET's value in pieces: each after the extension, each vouching for its version. */
Test(execute, a_steered_value_in_pieces_carries_its_version_in_each)
{
	static uint8_t value[5000];
	struct xkv_msg put = steered(XKV_OP_PUT, "big", value, sizeof(value), 3);
	struct xkv_msg get = steered(XKV_OP_GET, "big", NULL, 0, 0);
	uint32_t covered = 0;

	for (uint32_t i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(i * 7);
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	run(&get, 4);
	for (unsigned i = 0; i < 4; i++) {
		struct xkv_msg r;

		cr_assert_eq(xkv_decode(cap->frames[i], cap->lens[i], &r), XKV_R_OK);
		cr_assert_eq(vouched(&get, &r), 3);
		cr_assert_eq(r.frag_offset, covered);
		cr_assert_eq(memcmp(r.frag, value + covered, r.frag_len), 0);
		covered += r.frag_len;
	}
	cr_assert_eq(covered, sizeof(value));
}

Test(execute, store_errors_become_statuses)
{
	static uint8_t big[XKV_VALUE_MAX];
	struct xkv_msg put;
	char key[16];
	int puts = 0;

	/* fill the 8 MiB store with 1 MiB values until it says no */
	for (;;) {
		snprintf(key, sizeof(key), "f%d", puts++);
		put = request(XKV_OP_PUT, key, big, XKV_VALUE_MAX);
		if (run(&put, 1).status != XKV_S_OK)
			break;
	}
	cr_assert_eq(run(&put, 1).status, XKV_S_NO_MEMORY);
	cr_assert_eq(puts, 8, "seven 1 MiB items and their headers fit in 8 MiB");
}

Test(execute, lost_replies_are_counted)
{
	static uint8_t value[10000];
	struct xkv_msg put = request(XKV_OP_PUT, "v", value, sizeof(value));
	struct xkv_msg get = request(XKV_OP_GET, "v", NULL, 0);

	run(&put, 1);
	cap->room = 3; /* of the 7 pieces only 3 find a buffer */
	cap->reserved = cap->sent = 0;
	xkv_execute(&x, &origin, &get, xkv_hash(get.key, get.key_len));
	cr_assert_eq(cap->sent, 3);
	cr_assert_eq(x.stats.tx_dropped, 1, "the reply was cut short, and counted");
	cap->room = 0;
	cap->reserved = cap->sent = 0;
	xkv_execute(&x, &origin, &get, xkv_hash(get.key, get.key_len));
	cr_assert_eq(cap->sent, 0);
	cr_assert_eq(x.stats.tx_dropped, 2);
}

Test(execute, echo_answers_without_the_store)
{
	struct xkv_msg put = request(XKV_OP_PUT, "k", "hello", 5);
	struct xkv_msg get = request(XKV_OP_GET, "k", NULL, 0);
	struct xkv_store_stats st;

	x.echo = true;
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	cr_assert_eq(run(&get, 1).status, XKV_S_NOT_FOUND, "nothing was stored");
	xkv_store_get_stats(store, &st);
	cr_assert_eq(st.items, 0);
	cr_assert_eq(x.stats.requests[XKV_OP_PUT], 1, "counted as requests all the same");
}

/* Invariant 1's backstop: a write for a partition this worker does not own is refused. */
/* Every policy XDP can steer by has its module, and a worker under no policy never starts. */
Test(execute, every_policy_is_registered_and_an_unknown_one_refused)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};
	struct xkv_worker w;

	for (uint32_t p = 0; p < XKV_POLICY_END; p++) {
		const struct xkv_policy_ops *ops = xkv_policy_ops((enum xkv_policy)p);

		cr_assert_not_null(ops, "%s has no module", xkv_policy_name(p));
		cr_assert_eq(ops->id, p, "%s's module is another's", xkv_policy_name(p));
		cr_assert(ops->writer && ops->foreign, "%s's module is incomplete", xkv_policy_name(p));
	}
	cr_assert_eq(worker_init(&w, 0, 1, XKV_POLICY_END, &reasm), -EINVAL);
}

Test(execute, worker_refuses_writes_it_does_not_own)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};
	struct xkv_worker w;
	uint8_t dgram[256];
	char key[16];
	struct xkv_msg put, reply;
	int len, n;

	cr_assert_eq(worker_init(&w, 1, 2, XKV_POLICY_CREW, &reasm), 0);
	/* a key of partition 0's owner (worker 0 of 2) */
	for (n = 0;; n++) {
		snprintf(key, sizeof(key), "own%d", n);
		if (xkv_partition_owner(xkv_partition(xkv_hash(key, strlen(key))), 2) == 0)
			break;
	}
	put = request(XKV_OP_PUT, key, "v", 1);
	len = xkv_encode(dgram, sizeof(dgram), &put);
	cap->reserved = cap->sent = 0;
	xkv_worker_datagram(&w, &origin, dgram, (size_t)len);
	cr_assert_eq(cap->sent, 1);
	cr_assert_eq(xkv_decode(cap->frames[0], cap->lens[0], &reply), XKV_R_OK);
	cr_assert_eq(reply.status, XKV_S_BUSY);
	cr_assert_eq(w.exec.stats.foreign_writes, 1);
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT], 0, "not executed");
	xkv_worker_fini(&w);
}

/* Encodes req into buf; returns its length. */
static size_t encode(uint8_t *buf, size_t cap_bytes, const struct xkv_msg *req)
{
	int len = xkv_encode(buf, cap_bytes, req);

	cr_assert_gt(len, 0);
	return (size_t)len;
}

/* The status of the only reply to the one datagram just handled, with its value in *value. */
static enum xkv_status only_reply(struct xkv_msg *value)
{
	cr_assert_eq(cap->sent, 1);
	cr_assert_eq(xkv_decode(cap->frames[0], cap->lens[0], value), XKV_R_OK);
	cap->reserved = cap->sent = 0;
	return value->status;
}

/*
 * Look-ahead keeps each key's hash for the datagram that follows; writes and reads
 * through it meet those that go without it, so a hash kept for the wrong datagram
 * would lose the value. Frames are reused from batch to batch, as a ring's are.
 */
Test(execute, look_ahead_hashes_serve_their_own_keys)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};
	static uint8_t frames[4][256];
	struct xkv_msg reqs[4], reply;
	size_t lens[4];
	struct xkv_worker w;

	cr_assert_eq(worker_init(&w, 0, 1, XKV_POLICY_CREW, &reasm), 0);
	for (int batch = 0; batch < 3; batch++) {
		char k1[16], k2[16];

		snprintf(k1, sizeof(k1), "a%d", batch);
		snprintf(k2, sizeof(k2), "b%d", batch);
		reqs[0] = request(XKV_OP_PUT, k1, "v1", 2);
		reqs[1] = request(XKV_OP_PUT, k2, "v2", 2);
		reqs[3] = request(XKV_OP_GET, k1, NULL, 0);
		for (int i = 0; i < 4; i++)
			lens[i] = i == 2 ? 40 : encode(frames[i], sizeof(frames[i]), &reqs[i]);
		memset(frames[2], 0xee, lens[2]); /* not a request: look-ahead skips it */

		for (int i = 0; i < 4; i++)
			xkv_worker_look_ahead(&w, frames[i], lens[i]);
		cap->reserved = cap->sent = 0;
		for (int i = 0; i < 4; i++) {
			xkv_worker_datagram(&w, &origin, frames[i], lens[i]);
			if (i == 2)
				continue;
			cr_assert_eq(only_reply(&reply), XKV_S_OK, "batch %d, datagram %d", batch, i);
		}
		cr_assert_eq(memcmp(reply.frag, "v1", 2), 0, "the GET read its own key");

		/* without look-ahead: the values are where the hashes of their keys say */
		reqs[0] = request(XKV_OP_GET, k2, NULL, 0);
		xkv_worker_datagram(&w, &origin, frames[0], encode(frames[0], sizeof(frames[0]),
								 &reqs[0]));
		cr_assert_eq(only_reply(&reply), XKV_S_OK);
		cr_assert_eq(memcmp(reply.frag, "v2", 2), 0);
	}
	xkv_worker_fini(&w);
}

/* dcrew: a worker of 2 (id 1) on an EWT of its own, and a frame of req to feed it. */
static struct xkv_ewt_slot ewt[XKV_EWT_SLOTS];

static void dcrew_worker(struct xkv_worker *w, uint64_t timeout_ns)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = 1 << 20, .max_messages = 4, .timeout_ns = timeout_ns};

	memset(ewt, 0, sizeof(ewt));
	cr_assert_eq(worker_init(w, 1, 2, XKV_POLICY_DCREW, &reasm), 0);
	xkv_worker_dcrew(w, ewt, NULL, NULL, NULL);
	cap->reserved = cap->sent = 0;
}

static struct xkv_ewt_slot *slot_of(const char *key)
{
	return &ewt[xkv_ewt_slot_of(xkv_partition(xkv_hash(key, strlen(key))))];
}

static void feed(struct xkv_worker *w, const struct xkv_msg *req)
{
	static uint8_t frame[FRAME];

	xkv_worker_datagram(w, &origin, frame, encode(frame, sizeof(frame), req));
}

/* A write is executed only while the EWT gives its slot to the worker, and let go after. */
Test(execute, dcrew_worker_writes_only_with_its_slot_and_releases_it)
{
	struct xkv_worker w;
	struct xkv_msg req, reply;

	dcrew_worker(&w, 0);
	req = request(XKV_OP_PUT, "k", "v", 1);
	feed(&w, &req);
	cr_assert_eq(only_reply(&reply), XKV_S_BUSY, "no slot: refused");
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed(&w, &req);
	cr_assert_eq(only_reply(&reply), XKV_S_BUSY, "worker 0's slot: refused");
	cr_assert_eq(slot_of("k")->writes, 1, "another's slot is left alone");
	cr_assert_eq(w.exec.stats.ewt_not_owner, 2);
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT], 0, "not executed");

	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 2};
	feed(&w, &req);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(slot_of("k")->writes, 1, "one of its two writes released");
	req = request(XKV_OP_DELETE, "k", NULL, 0);
	feed(&w, &req);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert(!slot_of("k")->writes && !slot_of("k")->owner, "the last one empties it");
	cr_assert_eq(w.exec.stats.ewt_released, 2);

	req = request(XKV_OP_GET, "k", NULL, 0);
	feed(&w, &req);
	cr_assert_eq(only_reply(&reply), XKV_S_NOT_FOUND, "a read needs no slot");
	xkv_worker_fini(&w);
}

#define PIECE_LEN 1000

/* Pieces of put, PIECE_LEN bytes each, the pieces' indices in order[]. */
static void feed_pieces(struct xkv_worker *w, struct xkv_msg put, const int *order, int n)
{
	const uint8_t *value = put.frag;

	for (int i = 0; i < n; i++) {
		uint32_t off = (uint32_t)order[i] * PIECE_LEN;

		put.frag_offset = off;
		put.frag_len = put.value_len - off < PIECE_LEN ? put.value_len - off : PIECE_LEN;
		put.frag = value + off;
		feed(w, &put);
	}
}

/* Every piece (a duplicate too) holds the slot until the whole PUT is answered. */
Test(execute, dcrew_pieces_hold_their_slot_until_the_reply)
{
	static const int order[] = {0, 2, 0, 1};
	static uint8_t value[3 * PIECE_LEN];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value)), reply;
	struct xkv_worker w;

	dcrew_worker(&w, 0);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 1, .writes = 4}; /* XDP, per piece */
	feed_pieces(&w, put, order, 3);
	cr_assert_eq(cap->sent, 0, "incomplete: no reply yet");
	cr_assert_eq(slot_of("big")->writes, 4, "held while pieces are missing");
	feed_pieces(&w, put, order + 3, 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(slot_of("big")->writes, 0, "all four let go with the reply");
	cr_assert_eq(w.exec.stats.ewt_released, 4);
	xkv_worker_fini(&w);
}

/* A PUT whose pieces stop coming lets its slot go when reassembly drops it. */
Test(execute, dcrew_pieces_dropped_unfinished_release_their_slot)
{
	static const int order[] = {0, 1};
	static uint8_t value[3 * PIECE_LEN];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value));
	struct xkv_worker w;

	dcrew_worker(&w, 1000000);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 1, .writes = 2};
	xkv_worker_tick(&w, 1);
	feed_pieces(&w, put, order, 2);
	cr_assert_eq(slot_of("big")->writes, 2);
	xkv_worker_tick(&w, 1 + 1000000000ULL); /* past the timeout and the next look at it */
	cr_assert_eq(slot_of("big")->writes, 0, "the dropped message's pieces let go");
	cr_assert_eq(w.exec.stats.ewt_released, 2);
	cr_assert_eq(cap->sent, 0, "nothing to answer: the client retries");
	xkv_worker_fini(&w);
}

/*
 * Pieces of a PUT stored and answered, sent again, open nothing and let their slot go;
 * the one that ends the value is answered again, as a client that lost the reply needs.
 */
Test(execute, dcrew_late_pieces_of_an_answered_put_let_their_slot_go)
{
	static const int order[] = {0, 1, 2, 1, 0, 2};
	static uint8_t value[3 * PIECE_LEN];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value)), reply;
	struct xkv_request_counters c;
	struct xkv_worker w;

	dcrew_worker(&w, 1000000);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 1, .writes = 6};
	xkv_worker_tick(&w, 1);
	feed_pieces(&w, put, order, 3);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	feed_pieces(&w, put, order + 3, 2);
	cr_assert_eq(cap->sent, 0, "pieces in the middle get no reply");
	feed_pieces(&w, put, order + 5, 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK, "the last piece gets the PUT's reply again");
	cr_assert_eq(reply.request_id, put.request_id);
	cr_assert_eq(slot_of("big")->writes, 0, "each late piece let its hold go");
	cr_assert_eq(w.exec.stats.ewt_released, 6);
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT], 1, "and stored once");
	xkv_worker_counters(&w, &c);
	cr_assert_eq(c.reassembly_late, 3);
	cr_assert_eq(c.reassembly_bytes, 0, "they opened nothing");
	xkv_worker_fini(&w);
}

/*
 * xkv: worker 0 small (it owns every partition), worker 1 large (classes above 11),
 * sharing one EWT and the hand-off rings between them.
 */
static struct xkv_roles_sync roles_sync;
static struct xkv_handoffs handoffs;
static struct xkv_worker xw[2];

static int record_nothing(void *ctx, uint64_t hash, uint32_t value_len)
{
	(void)ctx, (void)hash, (void)value_len;
	return 0;
}

static void forget_nothing(void *ctx, uint64_t hash)
{
	(void)ctx, (void)hash;
}

/*
 * Two workers following minos's roles, 0 small and 1 large, under policy (minos, or
 * xkv on one EWT); replies go to the capture.
 */
static void roles_workers(enum xkv_policy policy, uint64_t timeout_ns)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = 1 << 20, .max_messages = 4, .timeout_ns = timeout_ns};
	const struct xkv_large_keys keys = {.record = record_nothing, .forget = forget_nothing};
	struct xkv_roles r = {.gen = 1, .threshold = 11, .nsmall = 1, .nlarge = 1};

	r.small[0] = 0, r.large[0] = 1;
	for (int c = 12; c < XKV_SIZE_CLASSES; c++)
		r.classes[c] = (struct xkv_class_workers){.first = 0, .count = 1};
	memset(ewt, 0, sizeof(ewt));
	cr_assert_eq(xkv_roles_sync_init(&roles_sync, 2, &r), 0);
	cr_assert_eq(xkv_handoffs_init(&handoffs, 2), 0);
	for (uint32_t i = 0; i < 2; i++) {
		cr_assert_eq(worker_init(&xw[i], i, 2, policy, &reasm), 0);
		xkv_worker_minos(&xw[i], &roles_sync, &handoffs, &keys);
		if (xkv_policy_ewt(policy))
			xkv_worker_dcrew(&xw[i], ewt, NULL, NULL, NULL);
	}
	cap->reserved = cap->sent = 0;
}

static void xkv_workers(uint64_t timeout_ns)
{
	roles_workers(XKV_POLICY_XKV, timeout_ns);
}

static void xkv_workers_fini(void)
{
	for (uint32_t i = 0; i < 2; i++)
		xkv_worker_fini(&xw[i]);
	xkv_handoffs_fini(&handoffs);
	xkv_roles_sync_fini(&roles_sync);
}

/* The store holds key's value as value[0..len), byte for byte. */
static void expect_stored(const char *key, const uint8_t *value, uint32_t len)
{
	static uint8_t buf[4 * PIECE_LEN];
	uint32_t got;

	cr_assert_eq(xkv_store_get(store, key, strlen(key), xkv_hash(key, strlen(key)), buf,
				   sizeof(buf), &got),
		     0, "%s is stored", key);
	cr_assert_eq(got, len);
	cr_assert_eq(memcmp(buf, value, len), 0, "%s holds what was sent", key);
}

static const int in_order[] = {0, 1, 2};
static uint8_t big[3 * PIECE_LEN];

/* A PUT of big, filled with fill, to the key "big": three pieces. */
static struct xkv_msg big_put(char fill)
{
	memset(big, fill, sizeof(big));
	return request(XKV_OP_PUT, "big", big, sizeof(big));
}

/* A small worker whose PUT in pieces is whole takes the free slot, applies it, lets it go. */
Test(execute, xkv_whole_put_joins_and_its_holder_applies_and_releases)
{
	struct xkv_msg put = big_put('a'), reply;

	xkv_workers(0);
	feed_pieces(&xw[0], put, in_order, 2);
	cr_assert_eq(slot_of("big")->writes, 0, "a piece claims nothing");
	feed_pieces(&xw[0], put, in_order + 2, 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert(!slot_of("big")->writes && !slot_of("big")->owner, "its one write let go");
	cr_assert_eq(xw[0].exec.stats.ewt_joined, 1);
	cr_assert_eq(xw[0].exec.stats.ewt_released, 1);
	cr_assert_eq(xw[0].exec.stats.handoffs_sent, 0, "applied where it was whole");
	expect_stored("big", big, sizeof(big));
	xkv_workers_fini();
}

/*
 * The large worker's whole PUT: the slot held by worker 0 (a write XDP gave it) is
 * joined, the item handed to it; it installs, answers, and lets go the one joined.
 */
Test(execute, xkv_whole_put_for_another_holder_is_installed_by_it)
{
	struct xkv_msg put = big_put('b'), reply;

	xkv_workers(0);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert_eq(cap->sent, 0, "the holder answers");
	cr_assert_eq(slot_of("big")->writes, 2, "joined for the holder");
	cr_assert_eq(xw[1].exec.stats.ewt_joined, 1);
	cr_assert_eq(xw[1].exec.stats.handoffs_sent, 1);
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(reply.request_id, put.request_id);
	cr_assert(slot_of("big")->writes == 1 && slot_of("big")->owner == 0,
		  "the holder let go the joined write, and only it");
	cr_assert_eq(xw[0].exec.stats.ewt_released, 1);
	cr_assert_eq(xw[0].exec.stats.requests[XKV_OP_PUT], 1);
	expect_stored("big", big, sizeof(big));

	/* a free slot: the large worker's candidate is the partition's owner, worker 0 */
	*slot_of("big") = (struct xkv_ewt_slot){0};
	put = big_put('c');
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert(slot_of("big")->writes == 1 && slot_of("big")->owner == 0, "taken for worker 0");
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(slot_of("big")->writes, 0);
	expect_stored("big", big, sizeof(big));
	cr_assert_eq(xw[0].exec.stats.ewt_not_owner + xw[1].exec.stats.ewt_not_owner, 0);
	xkv_workers_fini();
}

/*
 * A steered PUT whose item another worker built is installed by its version, as one
 * applied in place: newer, installed with it; older, freed and answered with the newer.
 */
Test(execute, a_steered_put_installed_by_its_holder_goes_by_its_version)
{
	struct xkv_msg put = steered(XKV_OP_PUT, "big", big, sizeof(big), 9), reply;
	struct xkv_item_meta meta;
	uint32_t len;

	xkv_workers(0);
	memset(big, 'n', sizeof(big));
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(be64toh(reply.ext.ver), 9);
	cr_assert_eq(xkv_store_get_meta(store, "big", 3, xkv_hash("big", 3), NULL, 0, &len, &meta),
		     -ENOBUFS);
	cr_assert_eq(meta.ver, 9, "installed with its version");
	/* an older one, by the same way: freed, the newer kept and vouched for */
	put = steered(XKV_OP_PUT, "big", big, sizeof(big), 8);
	memset(big, 'o', sizeof(big));
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(be64toh(reply.ext.ver), 9, "an older write loses to the newer");
	memset(big, 'n', sizeof(big));
	expect_stored("big", big, sizeof(big));
	cr_assert_eq(xw[0].exec.stats.dir_stale, 1);
	xkv_workers_fini();
}

/* A hand-off that finds the ring full gives the joined write back and answers BUSY. */
Test(execute, xkv_failed_handoff_releases_the_joined_write_and_replies_busy)
{
	struct xkv_msg put = big_put('d'), reply;
	struct xkv_msg get = request(XKV_OP_GET, "other", NULL, 0);

	xkv_workers(0);
	for (int i = 0; i < XKV_HANDOFF_RING; i++)
		cr_assert(xkv_handoffs_push(&handoffs, 1, 0,
					    xkv_handoff_new(XKV_HANDOFF_GET, &origin, &get, 0)));
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert_eq(only_reply(&reply), XKV_S_BUSY);
	cr_assert(slot_of("big")->writes == 1 && slot_of("big")->owner == 0,
		  "the joined write given back, the holder's own kept");
	cr_assert_eq(xw[1].exec.stats.ewt_released, 1);
	cr_assert_eq(xw[1].exec.stats.handoffs_refused, 1);
	cr_assert_eq(xkv_store_value_len(store, "big", 3, xkv_hash("big", 3), &(uint32_t){0}),
		     -ENOENT, "nothing was written");
	xkv_workers_fini();
}

/* A full slot: the join gives up after its tries, answers BUSY, and changes nothing. */
Test(execute, xkv_join_of_a_full_slot_replies_busy)
{
	struct xkv_msg put = big_put('d'), reply;
	const struct xkv_ewt_slot full = {.owner = 0, .writes = XKV_EWT_WRITES_MAX};

	xkv_workers(0);
	*slot_of("big") = full;
	feed_pieces(&xw[0], put, in_order, 3);
	cr_assert_eq(only_reply(&reply), XKV_S_BUSY);
	cr_assert_eq(memcmp(slot_of("big"), &full, sizeof(full)), 0);
	cr_assert_eq(xw[0].exec.stats.ewt_join_busy, 1);
	cr_assert_eq(xw[0].exec.stats.ewt_joined + xw[0].exec.stats.ewt_released, 0);
	xkv_workers_fini();
}

/*
 * Pieces never let a write go under xkv: not refused, late or dropped unfinished. The
 * slot keeps the holder's one write (XDP's, for another request) throughout.
 */
Test(execute, xkv_pieces_never_release)
{
	static const int late[] = {0, 1, 2, 1, 2}; /* whole at the third, then two late */
	struct xkv_msg put = big_put('d'), reply;
	struct xkv_msg bad = put;

	xkv_workers(1000000);
	xkv_worker_tick(&xw[0], 1);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed_pieces(&xw[0], put, late, 3);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	feed_pieces(&xw[0], put, late + 3, 2);
	cr_assert_eq(only_reply(&reply), XKV_S_OK, "the late last piece answered again");
	bad.request_id = next_id++;
	feed_pieces(&xw[0], bad, in_order, 1);
	bad.value_len++; /* contradicts its message: refused */
	feed_pieces(&xw[0], bad, in_order + 1, 1);
	cr_assert_eq(only_reply(&reply), XKV_S_BAD_REQUEST);
	xkv_worker_tick(&xw[0], 1 + 1000000000ULL); /* the first piece's message times out */
	cr_assert(slot_of("big")->writes == 1 && slot_of("big")->owner == 0,
		  "only the whole PUT's own join was let go");
	cr_assert_eq(xw[0].exec.stats.ewt_released, 1);
	cr_assert_eq(xw[0].exec.stats.ewt_not_owner, 0);
	xkv_workers_fini();
}

/* A write in one datagram runs only with the slot XDP gave it, as under dcrew. */
Test(execute, xkv_one_datagram_write_needs_its_slot)
{
	struct xkv_msg req = request(XKV_OP_PUT, "k", "v", 1), reply;

	xkv_workers(0);
	feed(&xw[0], &req);
	cr_assert_eq(only_reply(&reply), XKV_S_BUSY, "no slot: refused");
	cr_assert_eq(xw[0].exec.stats.ewt_not_owner, 1);
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	feed(&xw[0], &req);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(slot_of("k")->writes, 0);
	cr_assert_eq(xw[0].exec.stats.ewt_joined, 0, "XDP claimed it: no join");
	xkv_workers_fini();
}

/* Anti-amplification (docs/PROTOCOL.md, "Amplification"): a source without a token. */
static struct xkv_validate validate;

static void validating(void)
{
	cr_assert_eq(xkv_validate_init(&validate), 0);
	x.validate = &validate;
	x.now_ns = 5 * validate.window_ns + 1;
}

/* Bytes of every datagram the last run sent. */
static uint64_t sent_bytes(void)
{
	uint64_t bytes = 0;

	for (unsigned i = 0; i < cap->sent; i++)
		bytes += cap->lens[i];
	return bytes;
}

static uint64_t request_bytes(const struct xkv_msg *req)
{
	return HDR + req->key_len + req->frag_len;
}

Test(execute, large_get_without_token_is_answered_validate)
{
	static uint8_t value[XKV_VALUE_MAX];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value));
	struct xkv_msg get = request(XKV_OP_GET, "big", NULL, 0), r;

	validating();
	cr_assert_eq(run(&put, 1).status, XKV_S_OK, "a PUT's reply is small: answered");
	r = run(&get, 1);
	cr_assert_eq(r.status, XKV_S_VALIDATE);
	cr_assert_eq(r.value_len, 0, "no byte of the value");
	cr_assert_neq(r.token, 0, "the token to ask again with");
	cr_assert_leq(sent_bytes(), XKV_AMPLIFY_MAX * request_bytes(&get));
	get.token = r.token ^ 1;
	cr_assert_eq(run(&get, 1).status, XKV_S_VALIDATE, "a forged token is no token");

	get.token = r.token;
	r = run(&get, (XKV_VALUE_MAX + FRAME - HDR - 1) / (FRAME - HDR));
	cr_assert_eq(r.status, XKV_S_OK, "with the token: the whole value");
	cr_assert_eq(r.token, get.token, "and the token, for the next request");
	cr_assert_eq(x.stats.replies[XKV_S_VALIDATE], 2);
}

Test(execute, small_replies_need_no_token)
{
	/* 3x a GET with a 1-byte key, header and value together, and a byte over */
	static const char value[3 * 41 - 40 + 1];
	struct xkv_msg put = request(XKV_OP_PUT, "s", value, sizeof(value) - 1);
	struct xkv_msg get = request(XKV_OP_GET, "s", NULL, 0);
	struct xkv_msg del = request(XKV_OP_DELETE, "s", NULL, 0), r;

	_Static_assert(HDR == 40, "value sized for a 40-byte header");
	validating();
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	r = run(&get, 1);
	cr_assert_eq(r.status, XKV_S_OK, "exactly 3x: served");
	cr_assert_eq(r.token, 0, "no token made for a small reply");
	cr_assert_eq(sent_bytes(), XKV_AMPLIFY_MAX * request_bytes(&get));
	put.value_len = put.frag_len = sizeof(value);
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	cr_assert_eq(run(&get, 1).status, XKV_S_VALIDATE, "a byte over 3x: a token first");
	cr_assert_eq(run(&del, 1).status, XKV_S_OK, "a DELETE's reply is small: answered");
	cr_assert_eq(run(&get, 1).status, XKV_S_NOT_FOUND);
}

Test(execute, trusted_networks_are_not_bound)
{
	struct xkv_origin v4 = {.tx = &cap->tx,
				.peer.addr = {[10] = 0xff, [11] = 0xff, 10, 1, 2, 3}};
	static uint8_t value[4000];
	struct xkv_msg put = request(XKV_OP_PUT, "t", value, sizeof(value));
	struct xkv_msg get = request(XKV_OP_GET, "t", NULL, 0);

	validating();
	validate.trusted[validate.ntrusted++] = (struct xkv_allow_key){
		.prefixlen = 96 + 16, .addr = {[10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1}};
	cr_assert_eq(run(&put, 1).status, XKV_S_OK);
	cr_assert_eq(run(&get, 1).status, XKV_S_VALIDATE, "peer is not in 10.1.0.0/16");
	cap->reserved = cap->sent = 0;
	xkv_execute(&x, &v4, &get, xkv_hash("t", 1));
	cr_assert_eq(cap->sent, 3, "10.1.2.3 is: the value in three datagrams");
}

/* Compaction: a worker of 1 with windows that last slo - 1 mean service times. */
static void compact_worker(struct xkv_worker *w, uint32_t slo)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};

	cr_assert_eq(worker_init(w, 0, 1, XKV_POLICY_CREW, &reasm), 0);
	cr_assert_eq(xkv_worker_compaction(w, slo), 0);
	cap->reserved = cap->sent = 0;
}

/* A batch as a ring hands it over: look-ahead over every frame, then each in turn. */
struct batch {
	struct xkv_msg reqs[XKV_WORKER_AHEAD];
	uint8_t frames[XKV_WORKER_AHEAD][FRAME];
	size_t lens[XKV_WORKER_AHEAD];
	unsigned n;
};

static void batch_add(struct batch *b, struct xkv_msg req)
{
	cr_assert_lt(b->n, XKV_WORKER_AHEAD);
	b->reqs[b->n] = req;
	b->lens[b->n] = encode(b->frames[b->n], FRAME, &req);
	b->n++;
}

static void batch_look_ahead(struct xkv_worker *w, const struct batch *b)
{
	xkv_worker_tick(w, xkv_now_ns());
	for (unsigned i = 0; i < b->n; i++)
		xkv_worker_look_ahead(w, b->frames[i], b->lens[i]);
}

/* Datagram i of b, arriving along route i + 1. */
static void batch_serve(struct xkv_worker *w, const struct batch *b, unsigned i)
{
	origin.route.bytes[0] = (uint8_t)(i + 1);
	xkv_worker_datagram(w, &origin, b->frames[i], b->lens[i]);
}

/* Reply k of those sent so far: it answers b's request i, with status, along its route. */
static void assert_reply(const struct batch *b, unsigned k, unsigned i, enum xkv_status status)
{
	struct xkv_msg reply;

	cr_assert_lt(k, cap->sent);
	cr_assert_eq(xkv_decode(cap->frames[k], cap->lens[k], &reply), XKV_R_OK);
	cr_assert_eq(reply.request_id, b->reqs[i].request_id, "reply %u answers request %u", k,
		     i);
	cr_assert_eq(reply.status, status, "reply %u: status %u", k, reply.status);
	cr_assert_eq(cap->routes[k], i + 1, "reply %u goes back along its request's route", k);
}

/* What the store holds for key now, read by a worker of its own: "" when nothing. */
static const char *stored(const char *key)
{
	static char value[64];
	struct xkv_msg get = request(XKV_OP_GET, key, NULL, 0), reply;
	unsigned mark = cap->sent;

	cap->reserved = cap->sent;
	xkv_execute(&x, &origin, &get, xkv_hash(key, strlen(key)));
	cr_assert_eq(cap->sent, mark + 1);
	cr_assert_eq(xkv_decode(cap->frames[mark], cap->lens[mark], &reply), XKV_R_OK);
	cap->reserved = cap->sent = mark;
	if (reply.status != XKV_S_OK)
		return "";
	cr_assert_lt(reply.frag_len, sizeof(value));
	memcpy(value, reply.frag, reply.frag_len);
	value[reply.frag_len] = '\0';
	return value;
}

/*
 * PUTs to one key that queue up are applied once, with the last value, and answered
 * only then; a read in between sees the value from before the window, and a PUT to a
 * key with no second PUT in sight is not held.
 */
Test(execute, compaction_applies_a_window_once_and_answers_after)
{
	static struct batch b;
	struct xkv_worker w;

	compact_worker(&w, 100000); /* a deadline far off: only the dry rings close it */
	batch_add(&b, request(XKV_OP_PUT, "hot", "v1", 2));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v2", 2));
	batch_add(&b, request(XKV_OP_GET, "hot", NULL, 0));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v3", 2));
	batch_add(&b, request(XKV_OP_PUT, "cold", "c", 1));
	batch_look_ahead(&w, &b);
	batch_serve(&w, &b, 0);
	batch_serve(&w, &b, 1);
	cr_assert_eq(cap->sent, 0, "both PUTs held");
	batch_serve(&w, &b, 2);
	assert_reply(&b, 0, 2, XKV_S_NOT_FOUND); /* the value before the window */
	batch_serve(&w, &b, 3);
	batch_serve(&w, &b, 4);
	cr_assert_eq(cap->sent, 2, "the third PUT held too; the cold key's answered at once");
	assert_reply(&b, 1, 4, XKV_S_OK);
	cr_assert_str_eq(stored("hot"), "", "nothing applied while the window is open");

	xkv_worker_round_end(&w, false);
	cr_assert_eq(cap->sent, 2, "rings not dry, deadline not reached: still open");
	origin.route.bytes[0] = 99; /* whatever came last, each PUT goes back along its own */
	xkv_worker_round_end(&w, true);
	cr_assert_eq(cap->sent, 5);
	assert_reply(&b, 2, 0, XKV_S_OK);
	assert_reply(&b, 3, 1, XKV_S_OK);
	assert_reply(&b, 4, 3, XKV_S_OK);
	cr_assert_str_eq(stored("hot"), "v3", "the last value wins");
	cr_assert_eq(w.exec.stats.store_writes, 2, "one write for the window, one for cold");
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT], 4, "every PUT counts as executed");
	cr_assert_eq(w.exec.stats.compact_windows, 1);
	cr_assert_eq(w.exec.stats.compact_writes, 3);
	cr_assert_eq(w.exec.stats.compact_window_max, 3);
	xkv_worker_fini(&w);
}

/* The timed histogram (op, class 0..2 bytes' lt4, interval) of a recorder, whole. */
static struct xkv_lat_hist *timed(const struct xkv_latency *l, enum xkv_lat_op op,
				  enum xkv_lat_interval interval)
{
	static struct xkv_lat_hist h;

	memset(&h, 0, sizeof(h));
	xkv_lat_hist_add_dir(&h, l->dir, l->chunks, op, xkv_size_class(2), interval);
	return &h;
}

/*
 * Latency: a PUT held in a compaction window is queued until the window closes; its
 * service is the window's write and reply, not the wait.
 */
Test(execute, latency_of_a_held_put_counts_its_window_as_queued)
{
	static struct batch b;
	struct xkv_latency lat = {.dir = calloc(1, sizeof(struct xkv_latency_dir)),
				  .chunks = calloc(XKV_LAT_CHUNKS, sizeof(struct xkv_latency_chunk))};
	struct xkv_origin stamped = origin;
	struct xkv_worker w;

	compact_worker(&w, 100000); /* only the dry rings close it */
	w.exec.lat = &lat;
	batch_add(&b, request(XKV_OP_PUT, "hot", "v1", 2));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v2", 2));
	batch_look_ahead(&w, &b);
	stamped.peer.arrival_ns = xkv_now_ns();
	for (unsigned i = 0; i < b.n; i++)
		xkv_worker_datagram(&w, &stamped, b.frames[i], b.lens[i]);
	cr_assert_eq(cap->sent, 0, "both held");
	usleep(20000);
	xkv_worker_round_end(&w, true);
	cr_assert_eq(cap->sent, 2);
	cr_assert_eq(xkv_lat_hist_count(timed(&lat, XKV_LAT_PUT, XKV_LAT_QUEUED)), 2);
	cr_assert_geq(xkv_lat_hist_percentile(timed(&lat, XKV_LAT_PUT, XKV_LAT_QUEUED), 0.01),
		      19800000, "each PUT queued for the 20 ms its window stayed open");
	cr_assert_lt(xkv_lat_hist_percentile(timed(&lat, XKV_LAT_PUT, XKV_LAT_SERVED), 1.0),
		     10000000, "served: the write and the reply, not the wait");
	cr_assert_geq(w.exec.stats.compact_wait_ns, 2 * 19800000ULL);
	cr_assert_eq(w.exec.stats.lat_unstamped, 0);
	xkv_worker_fini(&w);
	free(lat.chunks);
	free(lat.dir);
}

/* A window closes on the first request that completes after its deadline. */
Test(execute, compaction_window_closes_at_its_deadline)
{
	static struct batch b;
	struct xkv_worker w;

	/* 20 ms: S is 1 us until measured; long enough that no preemption closes it early */
	compact_worker(&w, 20001);
	batch_add(&b, request(XKV_OP_PUT, "hot", "v1", 2));
	batch_add(&b, request(XKV_OP_GET, "other", NULL, 0));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v2", 2));
	batch_look_ahead(&w, &b);
	batch_serve(&w, &b, 0);
	cr_assert_eq(cap->sent, 0);
	usleep(30000);
	batch_serve(&w, &b, 1);
	cr_assert_eq(cap->sent, 2, "the GET's reply, then the window's");
	assert_reply(&b, 0, 1, XKV_S_NOT_FOUND);
	assert_reply(&b, 1, 0, XKV_S_OK);
	cr_assert_str_eq(stored("hot"), "v1");
	batch_serve(&w, &b, 2);
	assert_reply(&b, 2, 2, XKV_S_OK); /* nothing after it: no window */
	cr_assert_eq(w.exec.stats.compact_windows, 1);
	cr_assert_eq(w.exec.stats.compact_writes, 1);
	xkv_worker_fini(&w);
}

/* A window holds XKV_COMPACT_WRITES PUTs: the one that fills it closes it. */
Test(execute, compaction_full_window_closes_at_once)
{
	static struct batch b;
	struct xkv_worker w;
	char value[8];

	_Static_assert(XKV_COMPACT_WRITES <= XKV_WORKER_AHEAD, "one batch fills a window");
	compact_worker(&w, 100000);
	for (unsigned i = 0; i < XKV_COMPACT_WRITES; i++) {
		snprintf(value, sizeof(value), "v%u", i);
		batch_add(&b, request(XKV_OP_PUT, "hot", strdup(value),
							 strlen(value)));
	}
	batch_look_ahead(&w, &b);
	for (unsigned i = 0; i + 1 < b.n; i++)
		batch_serve(&w, &b, i);
	cr_assert_eq(cap->sent, 0);
	batch_serve(&w, &b, b.n - 1);
	cr_assert_eq(cap->sent, XKV_COMPACT_WRITES, "full: applied and answered");
	for (unsigned i = 0; i < b.n; i++)
		assert_reply(&b, i, i, XKV_S_OK);
	snprintf(value, sizeof(value), "v%u", XKV_COMPACT_WRITES - 1);
	cr_assert_str_eq(stored("hot"), value);
	cr_assert_eq(w.exec.stats.store_writes, 1);
	cr_assert_eq(w.exec.stats.compact_window_max, XKV_COMPACT_WRITES);
	for (unsigned i = 0; i < b.n; i++)
		free((void *)b.reqs[i].frag);
	xkv_worker_fini(&w);
}

/*
 * Any other write to the key closes its window first: a DELETE finds the window's
 * value; a PUT in pieces is never held half-reassembled, and goes after the window.
 */
Test(execute, compaction_other_writes_to_the_key_go_after_the_window)
{
	static uint8_t whole[2 * PIECE_LEN];
	static struct batch b;
	struct xkv_msg piece = request(XKV_OP_PUT, "hot", whole, sizeof(whole));
	struct xkv_worker w;
	uint32_t len;

	memset(whole, 'B', sizeof(whole));
	compact_worker(&w, 100000);
	piece.frag_len = PIECE_LEN;
	batch_add(&b, request(XKV_OP_PUT, "hot", "v1", 2));
	batch_add(&b, piece);
	batch_add(&b, request(XKV_OP_PUT, "hot", "v2", 2));
	piece.frag_offset = PIECE_LEN;
	piece.frag = whole + PIECE_LEN;
	batch_add(&b, piece);
	batch_add(&b, request(XKV_OP_PUT, "hot", "v3", 2));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v4", 2));
	batch_add(&b, request(XKV_OP_DELETE, "hot", NULL, 0));
	batch_look_ahead(&w, &b);
	for (unsigned i = 0; i < 3; i++)
		batch_serve(&w, &b, i);
	cr_assert_eq(cap->sent, 0, "v1, v2 held; the first piece waits for the second");
	batch_serve(&w, &b, 3);
	cr_assert_eq(cap->sent, 3, "the whole PUT closed the window, then was applied");
	assert_reply(&b, 0, 0, XKV_S_OK);
	assert_reply(&b, 1, 2, XKV_S_OK);
	assert_reply(&b, 2, 3, XKV_S_OK);
	cr_assert_eq(xkv_store_value_len(store, "hot", 3, xkv_hash("hot", 3), &len), 0);
	cr_assert_eq(len, sizeof(whole), "the whole PUT's value, after the window's");
	batch_serve(&w, &b, 4);
	batch_serve(&w, &b, 5);
	batch_serve(&w, &b, 6);
	cr_assert_eq(cap->sent, 6, "v3 and v4 held, then answered before the DELETE");
	assert_reply(&b, 3, 4, XKV_S_OK);
	assert_reply(&b, 4, 5, XKV_S_OK);
	assert_reply(&b, 5, 6, XKV_S_OK); /* it found v4 */
	cr_assert_str_eq(stored("hot"), "");
	cr_assert_eq(w.exec.stats.compact_windows, 2);
	cr_assert_eq(w.exec.stats.store_writes, 4, "v2, the whole PUT, v4, the DELETE");
	xkv_worker_fini(&w);
}

/* dcrew: a held PUT keeps its EWT hold until its window's write is applied and answered. */
Test(execute, compaction_keeps_the_slot_until_the_window_closes)
{
	static struct batch b;
	struct xkv_worker w;

	dcrew_worker(&w, 0);
	cr_assert_eq(xkv_worker_compaction(&w, 100000), 0);
	*slot_of("hot") = (struct xkv_ewt_slot){.owner = 1, .writes = 3};
	for (int i = 0; i < 3; i++)
		batch_add(&b, request(XKV_OP_PUT, "hot", "v", 1));
	batch_look_ahead(&w, &b);
	for (unsigned i = 0; i < b.n; i++)
		batch_serve(&w, &b, i);
	cr_assert_eq(cap->sent, 0);
	cr_assert_eq(slot_of("hot")->writes, 3, "held writes keep their slot");
	xkv_worker_round_end(&w, true);
	cr_assert_eq(cap->sent, 3);
	cr_assert_eq(slot_of("hot")->writes, 0, "let go after the replies");
	cr_assert_eq(w.exec.stats.ewt_released, 3);
	xkv_worker_fini(&w);
}

/*
 * A window's deadline holds on rounds that serve no datagram (hand-offs alone, TCP
 * completions): its PUTs are answered and its holds let go once the time is up.
 */
Test(execute, compaction_deadline_holds_on_rounds_without_datagrams)
{
	static struct batch b;
	struct xkv_worker w;

	dcrew_worker(&w, 0);
	cr_assert_eq(xkv_worker_compaction(&w, 10000), 0); /* S x 9999: ~10 ms at first */
	*slot_of("hot") = (struct xkv_ewt_slot){.owner = 1, .writes = 2};
	batch_add(&b, request(XKV_OP_PUT, "hot", "v1", 2));
	batch_add(&b, request(XKV_OP_PUT, "hot", "v2", 2));
	batch_look_ahead(&w, &b);
	batch_serve(&w, &b, 0);
	cr_assert_eq(cap->sent, 0, "held: another PUT to its key comes next");
	usleep(30000);
	xkv_worker_tick(&w, xkv_now_ns());
	xkv_worker_round_end(&w, false); /* busy with something else, past the deadline */
	cr_assert_eq(cap->sent, 1, "answered at its window's deadline");
	cr_assert_eq(slot_of("hot")->writes, 1, "its hold let go");
	cr_assert_str_eq(stored("hot"), "v1");
	xkv_worker_fini(&w);
}

/* A window's PUTs came on two sockets (rx queues): each reply leaves on its own. */
Test(execute, compaction_answers_each_put_on_the_socket_it_came_on)
{
	struct capture *other = calloc(1, sizeof(*other));
	static struct batch b;
	struct xkv_worker w;

	cr_assert_not_null(other);
	other->tx = cap->tx;
	other->room = FRAMES_MAX;
	compact_worker(&w, 100000);
	for (int i = 0; i < 4; i++)
		batch_add(&b, request(XKV_OP_PUT, "hot", "v", 1));
	batch_look_ahead(&w, &b);
	for (unsigned i = 0; i < b.n; i++) {
		origin.tx = i % 2 ? &other->tx : &cap->tx; /* the socket of its queue */
		batch_serve(&w, &b, i);
	}
	xkv_worker_round_end(&w, true);
	cr_assert_eq(cap->sent, 2, "PUTs 0 and 2 answered on the first socket");
	cr_assert_eq(other->sent, 2, "PUTs 1 and 3 on the second");
	assert_reply(&b, 0, 0, XKV_S_OK);
	assert_reply(&b, 1, 2, XKV_S_OK);
	xkv_worker_fini(&w);
	free(other);
}

/*
 * The worker's local order (engine/order.h), through xkv_worker_batch as a transport
 * calls it: a batch of a GET for a 40 KB value, then 8 GETs for 64 B ones. In
 * arrival order (fifo) the large one is always answered first; under rml, smaller
 * values first, it is almost never (P = 10 / 10010 a batch). Whatever the order, each
 * reply goes to its own request's origin, and every request is answered once.
 */
static unsigned large_first(const char *order, unsigned batches)
{
	static uint8_t value[40000], frames[9][FRAME];
	const struct xkv_msg put_big = request(XKV_OP_PUT, "big", value, sizeof(value));
	const struct xkv_msg put_small = request(XKV_OP_PUT, "small", "v", 1);
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};
	struct xkv_origin from[9];
	struct xkv_dgram d[9];
	struct xkv_msg req[9], reply;
	/* the large value's reply: as many datagrams as hold 40 KB after a header and "big" */
	const unsigned pieces = (sizeof(value) + FRAME - HDR - 3 - 1) / (FRAME - HDR - 3);
	unsigned first = 0;
	struct xkv_worker w;

	run(&put_big, 1);
	run(&put_small, 1);
	cr_assert_eq(xkv_worker_init(&w, &(struct xkv_worker_config){
					     .nworkers = 1, .policy = XKV_POLICY_CREW,
					     .store = store, .tx = &cap->tx,
					     .validate = &unbounded, .reasm = reasm,
					     .order = order}),
		     0);
	for (unsigned b = 0; b < batches; b++) {
		cap->reserved = cap->sent = 0;
		for (unsigned i = 0; i < 9; i++) {
			req[i] = request(XKV_OP_GET, i ? "small" : "big", NULL, 0);
			from[i] = origin;
			from[i].route.bytes[0] = (uint8_t)(100 + i);
			d[i] = (struct xkv_dgram){.from = &from[i], .data = frames[i],
						  .len = (uint32_t)encode(frames[i], FRAME, &req[i])};
		}
		xkv_worker_tick(&w, xkv_now_ns());
		xkv_worker_batch(&w, d, 9);
		cr_assert_eq(cap->sent, 8 + pieces, "8 small replies and the large one's pieces: %u",
			     cap->sent);
		for (unsigned k = 0; k < cap->sent; k++) {
			cr_assert_eq(xkv_decode(cap->frames[k], cap->lens[k], &reply), XKV_R_OK);
			cr_assert_geq(reply.request_id, req[0].request_id);
			cr_assert_eq(cap->routes[k], 100 + reply.request_id - req[0].request_id,
				     "a reply goes to its own request's origin");
		}
		cr_assert_eq(xkv_decode(cap->frames[0], cap->lens[0], &reply), XKV_R_OK);
		first += reply.request_id == req[0].request_id;
	}
	cr_assert_eq(w.exec.stats.requests[XKV_OP_GET], 9 * batches, "each served once");
	xkv_worker_fini(&w);
	return first;
}

Test(execute, rml_serves_smaller_values_first_each_reply_to_its_origin)
{
	cr_assert_eq(large_first("fifo", 20), 20, "fifo: in arrival order");
	cr_assert_leq(large_first("rml", 20), 1, "rml: the small ones first");
	cr_assert_eq(xkv_worker_init(&(struct xkv_worker){0}, &(struct xkv_worker_config){
					     .nworkers = 1, .store = store, .tx = &cap->tx,
					     .validate = &unbounded, .order = "lifo"}),
		     -EINVAL, "an order nobody registered");
}

/*
 * Hector's weights: a level q of n is drawn in proportion to alpha^(n - q + 1), here
 * 10^4 for a value in one datagram against 10^3 for one in a few: the smaller first
 * 10 times in 11, the larger never starved (first 1 time in 11).
 */
Test(execute, rml_draws_levels_in_proportion_to_their_weights)
{
	const struct xkv_order_ops *rml = xkv_order_find("rml");
	struct xkv_worker w = {.rng = 7};
	const unsigned n = 11000;
	unsigned small_first = 0;
	uint8_t out[2];

	cr_assert_not_null(rml);
	w.ahead[0] = (struct xkv_ahead){.valid = true, .op = XKV_OP_PUT, .value_len = 5000};
	w.ahead[1] = (struct xkv_ahead){.valid = true, .op = XKV_OP_PUT, .value_len = 100};
	for (unsigned i = 0; i < n; i++) {
		rml->order(&w, 2, out);
		cr_assert(out[0] != out[1] && out[0] < 2 && out[1] < 2, "a permutation");
		small_first += out[0] == 1;
	}
	cr_assert(small_first > 9800 && small_first < 10200, "the smaller first %u times of %u",
		  small_first, n);
}

/* A key whose partition is worker `owner`'s when two small workers share them. */
static const char *key_of_owner(uint32_t owner)
{
	static char key[16];

	for (int i = 0;; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		if (xkv_partition(xkv_hash(key, strlen(key))) % 2 == owner)
			return key;
	}
}

/*
 * Holds that heal (engine/holds.h): worker 1 of 2 on the EWT, with this test as the
 * server's main thread (the fence) and as worker 0 (its rounds).
 */
static struct xkv_holds_shared heal_shared = {.nworkers = 2};

static void healing_worker(struct xkv_worker *w)
{
	struct xkv_reasm_config reasm = {
		.memory_limit = 1 << 20, .max_messages = 4, .timeout_ns = 60000000000ULL};

	memset(ewt, 0, sizeof(ewt));
	memset(heal_shared.beat, 0, sizeof(heal_shared.beat));
	cr_assert_eq(worker_init(w, 1, 2, XKV_POLICY_DCREW, &reasm), 0);
	xkv_worker_dcrew(w, ewt, &heal_shared, NULL, NULL);
	xkv_worker_tick(w, xkv_now_ns()); /* pieces come now, not at boot */
	cap->reserved = cap->sent = 0;
}

/* Dry rounds until the worker asks for a fence; false if it never does. */
static bool rounds_until_fence(struct xkv_worker *w)
{
	uint64_t asked[XKV_WORKERS_MAX];

	for (int i = 0; i < 50; i++) {
		xkv_worker_tick(w, xkv_now_ns());
		xkv_worker_round_end(w, true);
		if (xkv_holds_fences_asked(&heal_shared, asked))
			return true;
		usleep(XKV_HOLDS_SCAN_NS / 1000 / 2);
	}
	return false;
}

/* Main's fence, worker 0's next round, then worker 1's rounds up to the end of its heal. */
static void fence_and_heal(struct xkv_worker *w)
{
	uint64_t asked[XKV_WORKERS_MAX];

	cr_assert(xkv_holds_fences_asked(&heal_shared, asked));
	xkv_holds_fences_made(&heal_shared, asked);
	atomic_fetch_add(&heal_shared.beat[0].rounds, 1);
	for (int i = 0; i < 4; i++) {
		xkv_worker_tick(w, xkv_now_ns());
		xkv_worker_round_end(w, false);
	}
	cr_assert_eq(w->holds.phase, XKV_HEAL_IDLE, "the heal is over");
}

/*
 * Writes XDP claimed for the worker that the kernel then dropped (a full RX ring): the
 * slot counts holds nothing will release. They are given back, and the partition
 * takes writes again, balanced as before.
 */
Test(execute, holds_the_kernel_dropped_heal)
{
	struct xkv_msg put = request(XKV_OP_PUT, "k", "v", 1);
	struct xkv_worker w;

	healing_worker(&w);
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 3};
	cr_assert(rounds_until_fence(&w), "the worker saw holds it never got");
	cr_assert(slot_of("k")->healing, "frozen while it counts");
	cr_assert_eq(xkv_ewt_join(ewt, xkv_partition(xkv_hash("k", 1)), 0, XKV_EWT_TRIES),
		     -EBUSY, "no write joins a healing slot");
	fence_and_heal(&w);
	cr_assert_eq(*xkv_ewt_word_of(ewt, xkv_partition(xkv_hash("k", 1))), 0, "empty again");
	cr_assert_eq(w.holds.healed, 3);
	cr_assert_eq(w.holds.heals, 1);

	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1}; /* as XDP takes it */
	feed(&w, &put);
	cr_assert_eq(cap->sent, 1);
	cr_assert_eq(slot_of("k")->writes, 0, "taken and let go as before");
	xkv_worker_fini(&w);
}

/*
 * What the worker has in hand is never healed: a PUT in pieces (dcrew: each piece
 * holds) keeps its holds through a heal, and lets them go with its reply.
 */
Test(execute, holds_in_hand_survive_a_heal)
{
	static const int order[] = {0, 1, 2};
	static uint8_t value[3 * PIECE_LEN];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value)), reply;
	struct xkv_worker w;

	healing_worker(&w);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 1, .writes = 5}; /* 3 lost */
	feed_pieces(&w, put, order, 2);
	cr_assert(rounds_until_fence(&w));
	fence_and_heal(&w);
	cr_assert(slot_of("big")->writes == 2 && slot_of("big")->owner == 1 &&
			  !slot_of("big")->healing,
		  "the two pieces in hand still hold it: writes %u", slot_of("big")->writes);
	cr_assert_eq(w.holds.healed, 3);
	slot_of("big")->writes++; /* XDP claims the last piece */
	feed_pieces(&w, put, order + 2, 1);
	cr_assert_eq(only_reply(&reply), XKV_S_OK);
	cr_assert_eq(*xkv_ewt_word_of(ewt, xkv_partition(xkv_hash("big", 3))), 0);
	xkv_worker_fini(&w);
}

/*
 * A closed-loop client writing a hot key: its next write is claimed as the last reply
 * leaves, so at every look the slot counts one more than the worker has in hand. It
 * is on its way, not lost: the slot is never frozen (its writes would be dropped).
 */
Test(execute, holds_on_their_way_to_a_busy_worker_are_left_alone)
{
	uint64_t asked[XKV_WORKERS_MAX], start = xkv_now_ns();
	struct xkv_worker w;

	healing_worker(&w);
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1};
	while (xkv_now_ns() - start < 8 * XKV_HOLDS_SCAN_NS) {
		struct xkv_msg put = request(XKV_OP_PUT, "k", "v", 1);

		xkv_worker_tick(&w, xkv_now_ns());
		feed(&w, &put);
		*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1}; /* the next one */
		xkv_worker_round_end(&w, true);
		cr_assert_not(xkv_holds_fences_asked(&heal_shared, asked), "a busy slot frozen");
		usleep(1000);
	}
	cr_assert_eq(w.holds.heals, 0);
	xkv_worker_fini(&w);
}

/* A slot whose every hold is in hand, or held by another worker, is never frozen. */
Test(execute, holds_all_in_hand_are_left_alone)
{
	static const int order[] = {0, 1};
	static uint8_t value[3 * PIECE_LEN];
	struct xkv_msg put = request(XKV_OP_PUT, "big", value, sizeof(value));
	struct xkv_worker w;

	healing_worker(&w);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 1, .writes = 2};
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 0, .writes = 7};
	feed_pieces(&w, put, order, 2);
	cr_assert_not(rounds_until_fence(&w));
	cr_assert_eq(slot_of("big")->writes, 2);
	cr_assert_eq(slot_of("k")->writes, 7);
	xkv_worker_fini(&w);
}

/*
 * A write another worker joined for this one, still on its way (in a hand-off ring,
 * or about to be given back), is not taken for lost: the heal waits for every other
 * worker to begin a round, and takes its hand-offs, before it counts.
 */
Test(execute, holds_wait_for_the_other_workers_rounds)
{
	struct xkv_worker w;

	healing_worker(&w);
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1};
	cr_assert(rounds_until_fence(&w));
	uint64_t asked[XKV_WORKERS_MAX];

	cr_assert(xkv_holds_fences_asked(&heal_shared, asked));
	xkv_holds_fences_made(&heal_shared, asked);
	for (int i = 0; i < 10; i++) {
		xkv_worker_tick(&w, xkv_now_ns());
		xkv_worker_round_end(&w, true);
	}
	cr_assert_eq(slot_of("k")->writes, 1, "worker 0 has not begun a round: no count yet");
	cr_assert(slot_of("k")->healing);
	xkv_ewt_release(ewt, xkv_partition(xkv_hash("k", 1)), 1, 1); /* worker 0 gives it back */
	atomic_fetch_add(&heal_shared.beat[0].rounds, 1);
	for (int i = 0; i < 2; i++) {
		xkv_worker_tick(&w, xkv_now_ns());
		xkv_worker_round_end(&w, true);
	}
	cr_assert_eq(*xkv_ewt_word_of(ewt, xkv_partition(xkv_hash("k", 1))), 0);
	cr_assert_eq(w.holds.healed, 0, "nothing was lost: the release emptied it");
	xkv_worker_fini(&w);
}

/*
 * minos with compaction: new roles that give a held key's partition to another worker
 * apply the window first, under the roles it was opened by; open after the adoption,
 * its write would land beside the new owner's (invariant 1).
 */
Test(execute, compaction_windows_close_before_new_roles)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};
	const struct xkv_large_keys keys = {.record = record_nothing, .forget = forget_nothing};
	struct xkv_roles r = {.gen = 1, .threshold = 11, .nsmall = 2};
	const char *hot = key_of_owner(1);
	static struct batch b;

	r.small[0] = 0, r.small[1] = 1;
	cr_assert_eq(xkv_roles_sync_init(&roles_sync, 2, &r), 0);
	cr_assert_eq(xkv_handoffs_init(&handoffs, 2), 0);
	for (uint32_t i = 0; i < 2; i++) {
		cr_assert_eq(worker_init(&xw[i], i, 2, XKV_POLICY_MINOS, &reasm), 0);
		xkv_worker_minos(&xw[i], &roles_sync, &handoffs, &keys);
	}
	cr_assert_eq(xkv_worker_compaction(&xw[1], 100000), 0);
	cap->reserved = cap->sent = 0;
	xkv_worker_sleep(&xw[0]); /* holds no request: worker 1 adopts without waiting */

	batch_add(&b, request(XKV_OP_PUT, hot, "v1", 2));
	batch_add(&b, request(XKV_OP_PUT, hot, "v2", 2));
	batch_add(&b, request(XKV_OP_GET, "other", NULL, 0));
	batch_look_ahead(&xw[1], &b);
	batch_serve(&xw[1], &b, 0);
	batch_serve(&xw[1], &b, 1);
	cr_assert_eq(cap->sent, 0, "both PUTs held by the partition's owner, worker 1");

	r.gen = 2, r.nsmall = 1; /* every partition is worker 0's from now */
	xkv_roles_publish(&roles_sync, &r);
	batch_serve(&xw[1], &b, 2);
	cr_assert_eq(xw[1].roles.gen, 2, "adopted");
	cr_assert_str_eq(stored(hot), "v2", "the window applied before the adoption");
	cr_assert_eq(cap->sent, 3, "its PUTs answered, then the GET");
	cr_assert_eq(xw[1].compact->nopen, 0);
	xkv_worker_wake(&xw[0]);
	for (uint32_t i = 0; i < 2; i++)
		xkv_worker_fini(&xw[i]);
	xkv_handoffs_fini(&handoffs);
	xkv_roles_sync_fini(&roles_sync);
}

struct round_loop {
	struct xkv_worker *w;
	atomic_bool stop;
};

/* A worker whose rounds serve nothing the roles look at: TCP reads, refused datagrams. */
static void *rounds_without_requests(void *arg)
{
	static const uint8_t no_line_end[] = {0, 1, 0, 0, 0, 1, 0, 0, 'g', 'e', 't', ' ', 'k'};
	struct round_loop *l = arg;

	xkv_store_thread_online();
	while (!atomic_load(&l->stop)) {
		xkv_worker_tick(l->w, xkv_now_ns());
		xkv_worker_mc_datagram(l->w, &origin, no_line_end, sizeof(no_line_end));
		xkv_worker_round_end(l->w, false);
		xkv_store_quiescent();
	}
	xkv_worker_sleep(l->w);
	xkv_store_thread_offline();
	return NULL;
}

/*
 * New roles are adopted by a worker whatever its rounds serve: one that only refuses
 * malformed memcached datagrams (or serves TCP reads) must not keep the others, who
 * wait for it before they act on roles that move owners, spinning with their rings
 * filling.
 */
Test(execute, roles_are_adopted_by_a_worker_that_serves_no_request, .timeout = 10)
{
	struct round_loop loop = {.w = &xw[1]};
	struct xkv_msg get = request(XKV_OP_GET, "k", NULL, 0);
	struct xkv_roles r;
	pthread_t t;

	xkv_workers(0);
	r = roles_sync.roles;
	cr_assert_eq(pthread_create(&t, NULL, rounds_without_requests, &loop), 0);
	r.gen = 2;
	r.small[0] = 1, r.large[0] = 0; /* the partitions move: worker 0 waits for worker 1 */
	xkv_roles_publish(&roles_sync, &r);
	feed(&xw[0], &get); /* worker 0 adopts between requests */
	cr_assert_eq(xw[0].roles.gen, 2, "worker 0 adopted, so worker 1 did too");
	atomic_store(&loop.stop, true);
	pthread_join(t, NULL);
	cr_assert_eq(xw[1].roles.gen, 2);
	cr_assert_eq(xw[1].exec.stats.mc_dropped + xw[1].exec.stats.mc_errors > 0, true,
		     "its rounds did refuse datagrams");
	xkv_workers_fini();
}

/*
 * A hand-off is answered on the receiving worker's socket of the rx queue its request
 * came on (on veth, TX queue i lands on the peer's rx queue i): neither on the
 * sender's socket nor on the receiver's of another queue.
 */
Test(execute, handoff_is_answered_on_its_request_queue)
{
	struct capture *q1_large = calloc(1, sizeof(*q1_large));
	struct capture *q1_small = calloc(1, sizeof(*q1_small));
	struct xkv_msg put = big_put('q'), reply;

	cr_assert(q1_large && q1_small);
	*q1_large = (struct capture){.tx = cap->tx, .room = FRAMES_MAX};
	*q1_small = (struct capture){.tx = cap->tx, .room = FRAMES_MAX};
	xkv_workers(0);
	*slot_of("big") = (struct xkv_ewt_slot){.owner = 0, .writes = 1};
	xkv_worker_queue(&xw[0], 1, &q1_small->tx); /* worker 0 polls queues 1 and 0 */
	xkv_worker_queue(&xw[0], 0, &cap->tx);
	xkv_worker_queue(&xw[1], 1, &q1_large->tx); /* the PUT comes to worker 1 on queue 1 */
	origin.tx = &q1_large->tx;
	origin.queue = 1;
	feed_pieces(&xw[1], put, in_order, 3);
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 1);
	cr_assert_eq(cap->sent, 0, "not on queue 0's socket");
	cr_assert_eq(q1_large->sent, 0, "nor on the sender's");
	cr_assert_eq(q1_small->sent, 1, "on the receiver's socket of queue 1");
	cr_assert_eq(xkv_decode(q1_small->frames[0], q1_small->lens[0], &reply), XKV_R_OK);
	cr_assert_eq(reply.request_id, put.request_id);
	cr_assert_eq(reply.status, XKV_S_OK);
	xkv_workers_fini();
	free(q1_large);
	free(q1_small);
}

/* memcached over UDP (proto/mc_udp.h, engine/mc_serve.h): datagrams to its port. */
#define MC_FRAME sizeof(struct xkv_mc_frame)
#define MC_BIN_HDR sizeof(struct xkv_mc_bin_hdr)

static uint8_t mc_out[XKV_EXEC_SCRATCH + 1]; /* the last reply, its datagrams joined */
static size_t mc_out_len;
static uint16_t mc_id = 100;

/* A worker of 1, plain: no compaction, no EWT, no roles. */
static void mc_worker(struct xkv_worker *w, uint32_t id, uint32_t nworkers)
{
	struct xkv_reasm_config reasm = {.memory_limit = 1 << 20, .max_messages = 4};

	cr_assert_eq(worker_init(w, id, nworkers, XKV_POLICY_CREW, &reasm), 0);
	cap->reserved = cap->sent = 0;
}

/* body behind a frame of id, sequence 0 of 1, into dgram; returns the datagram's length. */
static size_t mc_dgram(uint8_t *dgram, uint16_t id, const void *body, size_t len)
{
	cr_assert_leq(len + MC_FRAME, FRAME);
	xkv_mc_frame(dgram, id, 0, 1);
	memcpy(dgram + MC_FRAME, body, len);
	return len + MC_FRAME;
}

/*
 * The datagrams sent from mark on, joined into mc_out: each within XKV_MC_DGRAM_MAX,
 * its frame answering id, numbered 0..n-1 of n. Returns n.
 */
static unsigned mc_reply(unsigned mark, uint16_t id)
{
	unsigned n = cap->sent - mark;

	mc_out_len = 0;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *d = cap->frames[mark + i];
		size_t len = cap->lens[mark + i];
		struct xkv_mc_frame f;

		cr_assert(len > MC_FRAME && len <= XKV_MC_DGRAM_MAX, "datagram %u: %zu bytes", i,
			  len);
		memcpy(&f, d, sizeof(f));
		cr_assert_eq(ntohs(f.request_id), id, "datagram %u answers its request", i);
		cr_assert_eq(ntohs(f.seq), i, "datagram %u numbered in order", i);
		cr_assert_eq(ntohs(f.total), n, "datagram %u says how many", i);
		cr_assert_eq(f.reserved, 0);
		memcpy(mc_out + mc_out_len, d + MC_FRAME, len - MC_FRAME);
		mc_out_len += len - MC_FRAME;
	}
	mc_out[mc_out_len] = '\0';
	return n;
}

/* Reply k of those sent so far, one datagram answering id, into mc_out. */
static void mc_reply_one(unsigned k, uint16_t id)
{
	unsigned sent = cap->sent;

	cr_assert_lt(k, sent);
	cap->sent = k + 1;
	cr_assert_eq(mc_reply(k, id), 1, "reply %u: one datagram", k);
	cap->sent = sent;
}

/* An ASCII command from src to w: its reply, as text ("" when none came). */
static const char *mc_ascii_from(struct xkv_worker *w, const struct xkv_origin *src,
				 const char *cmd)
{
	static uint8_t dgram[FRAME];

	cap->reserved = cap->sent = 0;
	mc_id++;
	xkv_worker_mc_datagram(w, src, dgram, mc_dgram(dgram, mc_id, cmd, strlen(cmd)));
	mc_reply(0, mc_id);
	return (const char *)mc_out;
}

static const char *mc_ascii(struct xkv_worker *w, const char *cmd)
{
	return mc_ascii_from(w, &origin, cmd);
}

/* A binary request's body: extras (a SET's flags and no expiry), key, value. */
static size_t mc_bin_request(uint8_t *p, uint8_t opcode, const char *key, const void *value,
			     uint32_t len, uint32_t flags)
{
	bool set = opcode == XKV_MC_BIN_SET || opcode == XKV_MC_BIN_SETQ;
	uint32_t extras = set ? XKV_MC_SET_EXTRAS : 0, key_len = (uint32_t)strlen(key);
	const struct xkv_mc_bin_hdr h = {
		.magic = XKV_MC_BIN_REQUEST,
		.opcode = opcode,
		.key_len = htons((uint16_t)key_len),
		.extras_len = (uint8_t)extras,
		.body_len = htonl(extras + key_len + len),
		.opaque = htonl(0xc0de0000u + mc_id),
	};
	const uint32_t ext[2] = {htonl(flags), 0};

	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), ext, extras);
	memcpy(p + sizeof(h) + extras, key, key_len);
	if (len)
		memcpy(p + sizeof(h) + extras + key_len, value, len);
	return sizeof(h) + extras + key_len + len;
}

/*
 * A binary request to w from src: whether a reply came; if so its header in *h
 * (checked to answer the request's opcode and opaque) and its body in mc_out after it.
 */
static bool mc_binary_from(struct xkv_worker *w, const struct xkv_origin *src, uint8_t opcode,
			   const char *key, const void *value, uint32_t len, uint32_t flags,
			   struct xkv_mc_bin_hdr *h)
{
	static uint8_t body[FRAME], dgram[FRAME];

	cap->reserved = cap->sent = 0;
	mc_id++;
	len = (uint32_t)mc_bin_request(body, opcode, key, value, len, flags);
	xkv_worker_mc_datagram(w, src, dgram, mc_dgram(dgram, mc_id, body, len));
	if (!mc_reply(0, mc_id))
		return false;
	cr_assert_geq(mc_out_len, sizeof(*h));
	memcpy(h, mc_out, sizeof(*h));
	cr_assert_eq(h->magic, XKV_MC_BIN_RESPONSE);
	cr_assert_eq(h->opcode, opcode, "the request's opcode");
	cr_assert_eq(ntohl(h->opaque), 0xc0de0000u + mc_id, "the request's opaque");
	cr_assert_eq(ntohl(h->body_len), mc_out_len - sizeof(*h));
	return true;
}

static bool mc_binary(struct xkv_worker *w, uint8_t opcode, const char *key, const void *value,
		      uint32_t len, uint32_t flags, struct xkv_mc_bin_hdr *h)
{
	return mc_binary_from(w, &origin, opcode, key, value, len, flags, h);
}

Test(execute, mc_ascii_get_set_delete)
{
	unsigned long long cas;
	struct xkv_worker w;

	mc_worker(&w, 0, 1);
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "END\r\n");
	cr_assert_str_eq(mc_ascii(&w, "set k 42 0 5\r\nhello\r\n"), "STORED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "VALUE k 42 5\r\nhello\r\nEND\r\n");
	cr_assert_eq(sscanf(mc_ascii(&w, "gets k\r\n"), "VALUE k 42 5 %llu\r\n", &cas), 1);
	cr_assert_neq(cas, 0, "gets: the CAS");
	cr_assert_str_eq(mc_ascii(&w, "set k2 4294967295 0 1\nx\r\n"), "STORED\r\n",
			 "a line may end in \\n alone");
	cr_assert_str_eq(mc_ascii(&w, "get k none  k2\r\n"),
			 "VALUE k 42 5\r\nhello\r\nVALUE k2 4294967295 1\r\nx\r\nEND\r\n",
			 "every hit in order, misses left out");
	cr_assert_str_eq(mc_ascii(&w, "set e 0 0 0\r\n\r\n"), "STORED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "set f 4294967297 -1 1 yesreply\r\nf\r\n"), "STORED\r\n",
			 "flags kept to 32 bits, a word after the arguments ignored, as memcached");
	cr_assert_str_eq(mc_ascii(&w, "get f\r\n"), "END\r\n", "a negative exptime: expired");
	cr_assert_str_eq(mc_ascii(&w, "set f 4294967297 0 1\r\nf\r\n"), "STORED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get f\r\n"), "VALUE f 1 1\r\nf\r\nEND\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get e\r\n"), "VALUE e 0 0\r\n\r\nEND\r\n");
	cr_assert_str_eq(mc_ascii(&w, "delete k\r\n"), "DELETED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "delete k 0\r\n"), "NOT_FOUND\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "END\r\n");
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT], 5);
	cr_assert_eq(w.exec.stats.requests[XKV_OP_DELETE], 2);
	cr_assert_eq(w.exec.stats.requests[XKV_OP_GET], 10, "each key of a get counts");
	cr_assert_eq(w.exec.stats.mc_errors + w.exec.stats.mc_dropped, 0);
	xkv_worker_fini(&w);
}

/* The binary protocol's expiration is unsigned: 2^31 and up are Unix times, far off. */
Test(execute, mc_binary_expiration_is_unsigned)
{
	static uint8_t body[FRAME], dgram[FRAME];
	const uint32_t far = htonl(0x80000000u);
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;
	uint32_t len;

	mc_worker(&w, 0, 1);
	len = (uint32_t)mc_bin_request(body, XKV_MC_BIN_SET, "far", "v", 1, 0);
	memcpy(body + MC_BIN_HDR + 4, &far, sizeof(far)); /* after the flags */
	mc_id++;
	xkv_worker_mc_datagram(&w, &origin, dgram, mc_dgram(dgram, mc_id, body, len));
	cr_assert(mc_reply(0, mc_id));
	cr_assert(mc_binary(&w, XKV_MC_BIN_GET, "far", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK, "expired at once, as a negative time");
	xkv_worker_fini(&w);
}

Test(execute, mc_ascii_noreply_sends_nothing)
{
	struct xkv_worker w;

	mc_worker(&w, 0, 1);
	cr_assert_str_eq(mc_ascii(&w, "set k 1 0 1 noreply\r\nA\r\n"), "");
	cr_assert_eq(cap->sent, 0);
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "VALUE k 1 1\r\nA\r\nEND\r\n", "stored");
	cr_assert_str_eq(mc_ascii(&w, "delete k noreply\r\n"), "");
	cr_assert_str_eq(mc_ascii(&w, "delete k 0 noreply\r\n"), "", "not even NOT_FOUND");
	cr_assert_eq(cap->sent, 0);
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "END\r\n", "deleted");
	xkv_worker_fini(&w);
}

Test(execute, mc_binary_every_op)
{
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;
	uint64_t cas;

	mc_worker(&w, 0, 1);
	cr_assert(mc_binary(&w, XKV_MC_BIN_GET, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_NOT_FOUND);
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR, "Not found", 9), 0);
	cr_assert(mc_binary(&w, XKV_MC_BIN_GETK, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_NOT_FOUND);
	cr_assert_eq(ntohs(h.key_len), 1, "GETK's miss carries the key");
	cr_assert_eq(mc_out[MC_BIN_HDR], 'k');
	cr_assert_not(mc_binary(&w, XKV_MC_BIN_GETQ, "k", NULL, 0, 0, &h), "GETQ: a miss is quiet");
	cr_assert_not(mc_binary(&w, XKV_MC_BIN_GETKQ, "k", NULL, 0, 0, &h));

	cr_assert(mc_binary(&w, XKV_MC_BIN_SET, "k", "hello", 5, 7, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert_eq(ntohl(h.body_len), 0);
	cas = xkv_be64(h.cas);
	cr_assert_neq(cas, 0, "a SET's reply carries its CAS");
	cr_assert(mc_binary(&w, XKV_MC_BIN_GET, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert_eq(h.extras_len, 4);
	cr_assert_eq(ntohs(h.key_len), 0);
	cr_assert_eq(xkv_be64(h.cas), cas);
	cr_assert_eq(mc_out_len, MC_BIN_HDR + 4 + 5);
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR, "\0\0\0\7hello", 9), 0, "flags, then the value");
	cr_assert(mc_binary(&w, XKV_MC_BIN_GETKQ, "k", NULL, 0, 0, &h), "a hit is answered");
	cr_assert_eq(ntohs(h.key_len), 1);
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR, "\0\0\0\7khello", 10), 0);

	cr_assert_not(mc_binary(&w, XKV_MC_BIN_SETQ, "k", "bye", 3, 9, &h), "SETQ: quiet");
	cr_assert(mc_binary(&w, XKV_MC_BIN_GETK, "k", NULL, 0, 0, &h));
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR, "\0\0\0\tkbye", 8), 0);
	cr_assert_neq(xkv_be64(h.cas), cas, "a new version, a new CAS");
	cr_assert(mc_binary(&w, XKV_MC_BIN_DELETE, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert(mc_binary(&w, XKV_MC_BIN_DELETEQ, "k", NULL, 0, 0, &h), "quiet, but a miss");
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_NOT_FOUND);
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR, "Not found", 9), 0);
	cr_assert(mc_binary(&w, XKV_MC_BIN_SET, "k", "", 0, 0, &h));
	cr_assert_not(mc_binary(&w, XKV_MC_BIN_DELETEQ, "k", NULL, 0, 0, &h), "done: quiet");
	cr_assert_not(mc_binary(&w, XKV_MC_BIN_GETQ, "k", NULL, 0, 0, &h), "deleted");
	xkv_worker_fini(&w);
}

/* A value over one datagram: memcached's split, sequence numbers and total in each. */
static void mc_check_split(struct xkv_worker *w, uint32_t len)
{
	static uint8_t value[XKV_VALUE_MAX];
	struct xkv_item_meta meta = {.flags = 9};
	char head[64], text[64];
	size_t want, n;

	for (uint32_t i = 0; i < len; i++)
		value[i] = (uint8_t)(i * 7 + len);
	cr_assert_eq(xkv_store_put_meta(store, "big", 3, xkv_hash("big", 3), value, len, &meta), 0);
	snprintf(text, sizeof(text), "get big\r\n");
	n = (size_t)snprintf(head, sizeof(head), "VALUE big 9 %u\r\n", len);
	want = n + len + 2 + 5;
	mc_ascii(w, text);
	cr_assert_eq(cap->sent, (want + XKV_MC_DGRAM_MAX - MC_FRAME - 1) /
				       (XKV_MC_DGRAM_MAX - MC_FRAME), "%u bytes: %u datagrams",
		     len, cap->sent);
	cr_assert_eq(mc_out_len, want);
	cr_assert_eq(memcmp(mc_out, head, n), 0);
	cr_assert_eq(memcmp(mc_out + n, value, len), 0, "%u bytes back, byte for byte", len);
	cr_assert_eq(memcmp(mc_out + n + len, "\r\nEND\r\n", 7), 0);
}

Test(execute, mc_replies_over_one_datagram_are_split_in_sequence)
{
	static uint8_t value[100000];
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;

	mc_worker(&w, 0, 1);
	mc_check_split(&w, 1392 - 25); /* "VALUE big 9 1367\r\n" and END: 1392, one datagram */
	cr_assert_eq(cap->sent, 1);
	mc_check_split(&w, 1392 - 24); /* a byte over */
	cr_assert_eq(cap->sent, 2);
	mc_check_split(&w, 100000);
	mc_check_split(&w, XKV_VALUE_MAX);
	for (uint32_t i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(i * 7 + sizeof(value));
	cr_assert_eq(xkv_store_put(store, "big", 3, xkv_hash("big", 3), value, sizeof(value)), 0);
	cr_assert(mc_binary(&w, XKV_MC_BIN_GET, "big", NULL, 0, 0, &h));
	cr_assert_eq(cap->sent, (MC_BIN_HDR + 4 + sizeof(value) + 1391) / 1392);
	cr_assert_eq(mc_out_len, MC_BIN_HDR + 4 + sizeof(value));
	cr_assert_eq(memcmp(mc_out + MC_BIN_HDR + 4, value, sizeof(value)), 0);
	xkv_worker_fini(&w);
}

/*
 * memcached SETs join compaction windows as xkv PUTs do, and the window's close
 * answers each in its own dialect, with its own frame id, once the last value (and
 * its flags) is stored; a noreply SET held there gets nothing.
 */
Test(execute, mc_compaction_answers_held_sets_in_their_dialect)
{
	static const char *const ascii[] = {"set hot 1 0 2\r\nv1\r\n", NULL, "get hot\r\n",
					    "set hot 3 0 2 noreply\r\nv3\r\n",
					    "set hot 4 0 2\r\nv4\r\n"};
	static uint8_t frames[5][FRAME];
	size_t lens[5];
	uint8_t body[FRAME];
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;

	compact_worker(&w, 100000); /* a deadline far off: only the dry rings close it */
	for (unsigned i = 0; i < 5; i++) {
		size_t len = ascii[i] ? strlen(ascii[i])
				      : mc_bin_request(body, XKV_MC_BIN_SET, "hot", "v2", 2, 2);

		lens[i] = mc_dgram(frames[i], (uint16_t)(500 + i),
				   ascii[i] ? ascii[i] : (const void *)body, len);
	}
	xkv_worker_tick(&w, xkv_now_ns());
	for (unsigned i = 0; i < 5; i++)
		xkv_worker_mc_look_ahead(&w, frames[i], lens[i]);
	xkv_worker_mc_datagram(&w, &origin, frames[0], lens[0]);
	xkv_worker_mc_datagram(&w, &origin, frames[1], lens[1]);
	cr_assert_eq(cap->sent, 0, "both SETs held");
	xkv_worker_mc_datagram(&w, &origin, frames[2], lens[2]);
	mc_reply_one(0, 502);
	cr_assert_str_eq((char *)mc_out, "END\r\n", "the value before the window");
	xkv_worker_mc_datagram(&w, &origin, frames[3], lens[3]);
	xkv_worker_mc_datagram(&w, &origin, frames[4], lens[4]);
	cr_assert_eq(cap->sent, 1, "every SET held");
	xkv_worker_round_end(&w, true);
	cr_assert_eq(cap->sent, 4, "three replies: the noreply SET gets none");
	mc_reply_one(1, 500);
	cr_assert_str_eq((char *)mc_out, "STORED\r\n");
	mc_reply_one(2, 501);
	memcpy(&h, mc_out, sizeof(h));
	cr_assert_eq(h.magic, XKV_MC_BIN_RESPONSE, "the binary SET in binary");
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert_neq(h.cas, 0);
	mc_reply_one(3, 504);
	cr_assert_str_eq((char *)mc_out, "STORED\r\n");
	cr_assert_eq(w.exec.stats.compact_windows, 1);
	cr_assert_eq(w.exec.stats.compact_writes, 4);
	cr_assert_eq(w.exec.stats.store_writes, 1, "one store write for four SETs");
	cr_assert_str_eq(mc_ascii(&w, "get hot\r\n"), "VALUE hot 4 2\r\nv4\r\nEND\r\n",
			 "the last value, with its flags");
	xkv_worker_fini(&w);
}

/* A frame that is not sequence 0 of 1 with reserved 0, or nothing after it: dropped. */
Test(execute, mc_bad_frames_are_dropped_and_counted)
{
	/* each a good request behind a bad frame */
	static const uint8_t bad[][15] = {
		{0, 1, 0, 1, 0, 1, 0, 0, 'g', 'e', 't', ' ', 'k', '\r', '\n'}, /* sequence 1 */
		{0, 1, 0, 0, 0, 2, 0, 0, 'g', 'e', 't', ' ', 'k', '\r', '\n'}, /* of 2 */
		{0, 1, 0, 0, 0, 0, 0, 0, 'g', 'e', 't', ' ', 'k', '\r', '\n'}, /* of 0 */
		{0, 1, 0, 0, 0, 1, 0, 1, 'g', 'e', 't', ' ', 'k', '\r', '\n'}, /* reserved */
	};
	static const char get[] = "\0\1\0\0\0\1\0\0get k\r\n";
	struct xkv_worker w;

	mc_worker(&w, 0, 1);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		xkv_worker_mc_datagram(&w, &origin, bad[i], sizeof(bad[i]));
	xkv_worker_mc_datagram(&w, &origin, get, 8); /* a frame alone */
	xkv_worker_mc_datagram(&w, &origin, get, 5); /* not even that */
	xkv_worker_mc_datagram(&w, &origin, get, sizeof(get) - 3); /* no line end */
	cr_assert_eq(cap->sent, 0);
	cr_assert_eq(w.exec.stats.mc_dropped, 7);
	xkv_worker_mc_datagram(&w, &origin, get, sizeof(get) - 1);
	cr_assert_eq(mc_reply(0, 1), 1, "the same bytes whole are served");
	cr_assert_str_eq((char *)mc_out, "END\r\n");
	xkv_worker_fini(&w);
}

Test(execute, mc_ascii_errors_get_memcached_replies)
{
	static const char delete_usage[] =
		"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n";
	static char long_key[300] = "get ";
	static const struct {
		const char *cmd, *reply;
	} rows[] = {
		{"bogus\r\n", "ERROR\r\n"},
		{"\r\n", "ERROR\r\n"},
		{"get\r\n", "ERROR\r\n"},
		{"incr k 1\r\n", "ERROR\r\n"},
		{"set k 0 0\r\n", "ERROR\r\n"},
		{"set k 0 0 1 noreply more\r\nA\r\n", "ERROR\r\n"},
		{"set k x 0 1\r\nA\r\n", "CLIENT_ERROR bad command line format\r\n"},
		{"set k 0 0 -1\r\n\r\n", "CLIENT_ERROR bad command line format\r\n"},
		{"set k 18446744073709551616 0 1\r\nA\r\n",
		 "CLIENT_ERROR bad command line format\r\n"},
		{"set k 0 9223372036854775808 1\r\nA\r\n",
		 "CLIENT_ERROR bad command line format\r\n"},
		{"set k 0 0 5\r\nabc\r\n", "CLIENT_ERROR bad data chunk\r\n"},
		{"set k 0 0 2\r\nabXY", "CLIENT_ERROR bad data chunk\r\n"},
		{"set k 0 0 2\r\nab", "CLIENT_ERROR bad data chunk\r\n"},
		{"set k 0 0 2000000\r\n", "SERVER_ERROR object too large for cache\r\n"},
		{"delete k 5\r\n", delete_usage},
		{"delete k noreply 0\r\n", delete_usage},
		{"delete k 0 noreply more\r\n", "ERROR\r\n"},
		{"delete\r\n", "ERROR\r\n"},
		{long_key, "CLIENT_ERROR bad command line format\r\n"},
	};
	struct xkv_worker w;

	memset(long_key + 4, 'a', 251);
	strcpy(long_key + 4 + 251, "\r\n");
	mc_worker(&w, 0, 1);
	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_assert_str_eq(mc_ascii(&w, rows[i].cmd), rows[i].reply, "row %u: %s", i,
				 rows[i].cmd);
	cr_assert_eq(w.exec.stats.mc_errors, sizeof(rows) / sizeof(rows[0]));
	cr_assert_eq(w.exec.stats.requests[XKV_OP_PUT] + w.exec.stats.requests[XKV_OP_GET] +
			     w.exec.stats.requests[XKV_OP_DELETE], 0, "nothing executed");
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "END\r\n", "nothing stored");
	/* memcached 1.6.18 keeps strtol's long in an int32_t: 2^31 is no error, as over TCP */
	cr_assert_str_eq(mc_ascii(&w, "set k 0 2147483648 1\r\nA\r\n"), "STORED\r\n");
	xkv_worker_fini(&w);
}

/* A binary request's header as rows give it, host order; its body is len bytes of 'k'. */
struct mc_bin_row {
	uint8_t opcode, extras_len, data_type;
	uint16_t key_len;
	uint32_t body_len; /* as the header claims it */
	uint64_t cas;
	size_t len;	   /* body bytes sent */
	uint16_t status;   /* the reply's; 0: dropped, no reply */
};

/* Sends row's request to w: its reply, or NULL when none came. */
static const char *mc_bin_raw(struct xkv_worker *w, const struct mc_bin_row *row)
{
	static uint8_t dgram[FRAME], body[FRAME];
	const struct xkv_mc_bin_hdr h = {
		.magic = XKV_MC_BIN_REQUEST,
		.opcode = row->opcode,
		.key_len = htons(row->key_len),
		.extras_len = row->extras_len,
		.data_type = row->data_type,
		.body_len = htonl(row->body_len),
		.cas = row->cas,
	};

	cap->reserved = cap->sent = 0;
	memset(body, 'k', sizeof(body));
	memcpy(body, &h, sizeof(h));
	xkv_worker_mc_datagram(w, &origin, dgram,
			       mc_dgram(dgram, ++mc_id, body, MC_BIN_HDR + row->len));
	return mc_reply(0, mc_id) ? (const char *)mc_out : NULL;
}

Test(execute, mc_binary_errors_get_their_status_or_are_dropped)
{
	static const struct mc_bin_row rows[] = {
		{.opcode = 0x30, .key_len = 1, .body_len = 1, .len = 1,
		 .status = XKV_MC_BIN_S_UNKNOWN},
		{.opcode = XKV_MC_BIN_GET, .extras_len = 4, .key_len = 1, .body_len = 5, .len = 5,
		 .status = XKV_MC_BIN_S_EINVAL},
		{.opcode = XKV_MC_BIN_SET, .key_len = 1, .body_len = 2, .len = 2,
		 .status = XKV_MC_BIN_S_EINVAL}, /* no extras */
		{.opcode = XKV_MC_BIN_DELETE, .key_len = 1, .body_len = 3, .len = 3,
		 .status = XKV_MC_BIN_S_EINVAL}, /* a value */
		{.opcode = XKV_MC_BIN_GET, .status = XKV_MC_BIN_S_EINVAL}, /* no key */
		{.opcode = XKV_MC_BIN_GET, .key_len = 251, .body_len = 251, .len = 251,
		 .status = XKV_MC_BIN_S_EINVAL},
		{.opcode = XKV_MC_BIN_GET, .data_type = 1, .key_len = 1, .body_len = 1, .len = 1,
		 .status = XKV_MC_BIN_S_EINVAL},
		{.opcode = XKV_MC_BIN_SET, .extras_len = 8, .key_len = 1, .body_len = 9, .cas = 5,
		 .len = 9, .status = XKV_MC_BIN_S_NOT_SUPPORTED},
		{.opcode = XKV_MC_BIN_GET, .key_len = 1, .body_len = 100, .len = 1}, /* lies */
		{.opcode = XKV_MC_BIN_GET, .key_len = 1, .body_len = 1, .len = 2},
	};
	uint8_t short_hdr[MC_FRAME + 10] = {0, 1, 0, 0, 0, 1, 0, 0, XKV_MC_BIN_REQUEST};
	unsigned errors = 0, drops = 0;
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;
	const char *reply;

	mc_worker(&w, 0, 1);
	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		reply = mc_bin_raw(&w, &rows[i]);
		if (!rows[i].status) {
			cr_assert_null(reply, "row %u: dropped", i);
			drops++;
			continue;
		}
		cr_assert_not_null(reply, "row %u: answered", i);
		memcpy(&h, reply, sizeof(h));
		cr_assert_eq(ntohs(h.status), rows[i].status, "row %u: status %#x", i,
			     ntohs(h.status));
		cr_assert_eq(h.opcode, rows[i].opcode);
		cr_assert_eq(ntohl(h.body_len), strlen(xkv_mc_bin_status_text(rows[i].status)));
		cr_assert_eq(memcmp(reply + MC_BIN_HDR, xkv_mc_bin_status_text(rows[i].status),
				    ntohl(h.body_len)), 0, "row %u: memcached's message", i);
		errors++;
	}
	xkv_worker_mc_datagram(&w, &origin, short_hdr, sizeof(short_hdr));
	cr_assert_eq(cap->sent, 0, "a header cut short: dropped");
	cr_assert_eq(w.exec.stats.mc_errors, errors);
	cr_assert_eq(w.exec.stats.mc_dropped, drops + 1);
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "END\r\n", "nothing stored");
	xkv_worker_fini(&w);
}

/*
 * memcached has no token to show: a reply over XKV_AMPLIFY_MAX times its request goes
 * only to a trusted network; another source gets a short error, counted.
 */
Test(execute, mc_large_replies_go_only_to_trusted_sources)
{
	struct xkv_origin v4 = {.tx = &cap->tx,
				.peer.addr = {[10] = 0xff, [11] = 0xff, 10, 1, 2, 3}};
	static char set[300] = "set k 0 0 200\r\n";
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;
	uint64_t bytes;

	mc_worker(&w, 0, 1);
	w.exec.validate = &validate;
	validating();
	validate.trusted[validate.ntrusted++] = (struct xkv_allow_key){
		.prefixlen = 96 + 16, .addr = {[10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1}};
	cr_assert_str_eq(mc_ascii(&w, "set s 0 0 10\r\n0123456789\r\n"), "STORED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get s\r\n"), "VALUE s 0 10\r\n0123456789\r\nEND\r\n",
			 "36 bytes for 15: within 3x");
	memset(set + strlen(set), 'v', 200);
	strcat(set, "\r\n");
	cr_assert_str_eq(mc_ascii(&w, set), "STORED\r\n");
	cr_assert_str_eq(mc_ascii(&w, "get k\r\n"), "SERVER_ERROR reply too large\r\n");
	bytes = cap->lens[0];
	cr_assert_leq(bytes, XKV_AMPLIFY_MAX * (MC_FRAME + 7));
	cr_assert(mc_binary(&w, XKV_MC_BIN_GET, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_INTERNAL);
	cr_assert_eq(w.exec.stats.mc_amplify_refused, 2);
	cr_assert_eq(strncmp(mc_ascii_from(&w, &v4, "get k\r\n"), "VALUE k 0 200\r\n", 15), 0,
		     "10.1.2.3 is trusted: the value");
	cr_assert(mc_binary_from(&w, &v4, XKV_MC_BIN_GET, "k", NULL, 0, 0, &h));
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert_eq(w.exec.stats.mc_amplify_refused, 2);
	xkv_worker_fini(&w);
}

/* Invariant 1 holds for memcached's writes too: refused, in memcached's words. */
Test(execute, mc_writes_it_does_not_own_are_refused)
{
	struct xkv_mc_bin_hdr h;
	struct xkv_worker w;
	char key[16], cmd[64];

	for (int n = 0;; n++) {
		snprintf(key, sizeof(key), "own%d", n);
		if (xkv_partition_owner(xkv_partition(xkv_hash(key, strlen(key))), 2) == 0)
			break;
	}
	mc_worker(&w, 1, 2);
	snprintf(cmd, sizeof(cmd), "set %s 0 0 1\r\nv\r\n", key);
	cr_assert_str_eq(mc_ascii(&w, cmd), "SERVER_ERROR busy\r\n");
	cr_assert(mc_binary(&w, XKV_MC_BIN_DELETEQ, key, NULL, 0, 0, &h), "an error is not quiet");
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_BUSY);
	cr_assert_eq(w.exec.stats.foreign_writes, 2);
	xkv_worker_fini(&w);
}

/*
 * Under minos a write that reached another worker is handed to its partition's owner,
 * which answers it later in memcached's format, along the request's route, with the
 * flags stored; quiet ones get nothing.
 */
Test(execute, mc_writes_handed_over_are_answered_in_their_dialect)
{
	static uint8_t dgram[3][FRAME];
	static const char set[] = "set hand 5 0 3\r\nabc\r\n";
	static const char quiet[] = "delete gone noreply\r\n";
	uint8_t body[FRAME];
	struct xkv_mc_bin_hdr h;
	size_t len[3];

	roles_workers(XKV_POLICY_MINOS, 0); /* the roles' owner, worker 0, writes */
	len[0] = mc_dgram(dgram[0], 700, set, strlen(set));
	len[1] = mc_dgram(dgram[1], 701, body,
			  mc_bin_request(body, XKV_MC_BIN_SET, "hand2", "xyz", 3, 6));
	len[2] = mc_dgram(dgram[2], 702, quiet, strlen(quiet));
	for (unsigned i = 0; i < 3; i++) {
		origin.route.bytes[0] = (uint8_t)(i + 1);
		xkv_worker_mc_datagram(&xw[1], &origin, dgram[i], len[i]);
	}
	cr_assert_eq(cap->sent, 0, "the large worker applies none of them");
	cr_assert_eq(xw[1].exec.stats.handoffs_sent, 3);
	origin.route.bytes[0] = 99;
	cr_assert_eq(xkv_worker_handoffs(&xw[0]), 3);
	cr_assert_eq(cap->sent, 2, "the owner answers both SETs, not the noreply DELETE");
	cr_assert_eq(cap->routes[0], 1, "along the request's route");
	cr_assert_eq(cap->routes[1], 2);
	mc_reply_one(0, 700);
	cr_assert_str_eq((char *)mc_out, "STORED\r\n");
	mc_reply_one(1, 701);
	memcpy(&h, mc_out, sizeof(h));
	cr_assert_eq(h.magic, XKV_MC_BIN_RESPONSE);
	cr_assert_eq(ntohs(h.status), XKV_MC_BIN_S_OK);
	cr_assert_neq(h.cas, 0, "the CAS the owner's write gave");
	cr_assert_str_eq(mc_ascii(&xw[1], "get hand hand2\r\n"),
			 "VALUE hand 5 3\r\nabc\r\nVALUE hand2 6 3\r\nxyz\r\nEND\r\n",
			 "stored with their flags, read from any worker");
	xkv_workers_fini();
}

/*
 * XDP steers a memcached write by its command and key, and under dcrew and xkv claims
 * its EWT slot; one the worker then refuses (or drops) must let that slot go, or the
 * partition would stay with this worker for good.
 */
Test(execute, mc_refused_writes_let_their_ewt_slot_go)
{
	static const char *const ascii[] = {
		"set k 0 0 5\r\nabc\r\n", "set k 0 0\r\nxx", "set k 0 0 x\r\n\r\n",
		"delete k 5\r\n", "delete k 0 noreply more\r\n", "delete k x", /* no line end */
	};
	static const struct mc_bin_row binary[] = {
		{.opcode = XKV_MC_BIN_SET, .extras_len = 8, .key_len = 1, .body_len = 9, .cas = 5,
		 .len = 9},
		{.opcode = XKV_MC_BIN_DELETE, .data_type = 1, .key_len = 1, .body_len = 1, .len = 1},
	};
	const unsigned n = sizeof(ascii) / sizeof(ascii[0]) + sizeof(binary) / sizeof(binary[0]);
	struct xkv_worker w;

	dcrew_worker(&w, 0);
	for (unsigned i = 0; i < n; i++) {
		*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1}; /* as XDP took it */
		if (i < sizeof(ascii) / sizeof(ascii[0]))
			mc_ascii(&w, ascii[i]);
		else
			mc_bin_raw(&w, &binary[i - sizeof(ascii) / sizeof(ascii[0])]);
		cr_assert(!slot_of("k")->writes && !slot_of("k")->owner, "request %u: slot let go",
			  i);
	}
	cr_assert_eq(w.exec.stats.ewt_released, n);
	cr_assert_eq(w.exec.stats.mc_errors + w.exec.stats.mc_dropped, n);
	*slot_of("k") = (struct xkv_ewt_slot){.owner = 1, .writes = 1};
	mc_ascii(&w, "get k k k\r\n");
	mc_ascii(&w, "bogus k\r\n");
	cr_assert_eq(slot_of("k")->writes, 1, "a read and an unknown command hold nothing");
	xkv_worker_fini(&w);
}
