// SPDX-License-Identifier: MIT
/*
 * xkv-trace: the model's semantics, the checker on hand-made replies, gen's frames
 * and determinism, the pcap files, and gen + check against the server's own worker.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gen.h"
#include "net/packet.h"
#include "pcapio.h"
#include "pcapng.h"
#include "engine/worker.h"

#define DGRAM_MAX XKV_DGRAM_MAX

static const struct xkv_peer alice = {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 2},
				      .port = 0x409c};
static const struct xkv_peer bob = {.addr = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 3},
				    .port = 0x409c};

static struct xkv_msg msg(uint8_t op, const char *key, const char *value)
{
	uint32_t len = value ? (uint32_t)strlen(value) : 0;

	return (struct xkv_msg){
		.op = op,
		.key_len = (uint16_t)strlen(key),
		.key = key,
		.value_len = len,
		.frag_len = len,
		.frag = value,
	};
}

/* ---- the checker on hand-made requests and replies ---- */

static struct trace_check *check;
static struct trace_check_report report;
static uint64_t frames_fed; /* numbers the datagrams given to the checker */
static uint64_t now;	    /* capture time of the next reply datagram, ns */
static char history[] = "/tmp/xkv-test-history.XXXXXX";

static void check_setup(void)
{
	int fd;

	check = trace_check_create();
	cr_assert_not_null(check);
	frames_fed = 0;
	now = 1000000;
	strcpy(history, "/tmp/xkv-test-history.XXXXXX");
	fd = mkstemp(history);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void check_teardown(void)
{
	trace_check_destroy(check);
	unlink(history);
}

TestSuite(check, .init = check_setup, .fini = check_teardown);

/* The datagram of m, whose key, frag_offset and frag_len are set; value is the whole. */
static int send_piece(const struct xkv_peer *client, struct xkv_msg m, bool reply)
{
	uint8_t buf[DGRAM_MAX];
	int len = xkv_encode(buf, sizeof(buf), &m);

	cr_assert_gt(len, 0, "encodes");
	now += 1000;
	return reply ? trace_check_reply(check, client, ++frames_fed, now, buf, (size_t)len)
		     : trace_check_request(check, client, ++frames_fed, buf, (size_t)len);
}

static int request(const struct xkv_peer *client, uint8_t op, uint32_t id, const char *key,
		   const char *value)
{
	struct xkv_msg m = msg(op, key, value);

	m.request_id = id;
	m.timestamp = 1000 + id;
	return send_piece(client, m, false);
}

static void reply(const struct xkv_peer *client, uint8_t op, uint32_t id, uint8_t status,
		  const char *value)
{
	struct xkv_msg m = msg(op | XKV_OP_REPLY, "", value);

	m.key_len = 0;
	m.status = status;
	m.request_id = id;
	m.timestamp = 1000 + id;
	cr_assert_eq(send_piece(client, m, true), 0);
}

/* Alice's request id on key "k" seen leaving at sent_us, its reply captured at reply_us. */
static void timed(uint8_t op, uint32_t id, const char *value, uint64_t sent_us, uint8_t status,
		  const char *got, uint64_t reply_us)
{
	struct xkv_msg m = msg(op, "k", op == XKV_OP_PUT ? value : NULL);
	uint8_t buf[DGRAM_MAX];
	int len;

	m.request_id = id;
	m.timestamp = 1000 + id;
	len = xkv_encode(buf, sizeof(buf), &m);
	cr_assert_gt(len, 0, "encodes");
	trace_check_sent(check, &alice, sent_us * 1000, buf, (size_t)len);
	if (!reply_us)
		return; /* no reply */
	now = reply_us * 1000 - 1000; /* send_piece adds 1000 */
	reply(&alice, op, id, status, got);
}

/* xkv-lincheck's verdict on the history trace_check_finish wrote: its exit status. */
static int verdict(void)
{
	char exe[4096], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	pid_t pid;
	int status;

	cr_assert_gt(n, 0);
	exe[n] = 0;
	dir = strrchr(exe, '/');
	strcpy(dir, "/../xkv-lincheck"); /* build/tests/.. */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		freopen("/dev/null", "w", stdout);
		execl(exe, exe, history, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Four requests on one key and their right replies, less the one numbered skip. */
static void four(uint32_t skip)
{
	cr_assert_eq(request(&alice, XKV_OP_PUT, 1, "key", "value"), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "key", NULL), 0);
	cr_assert_eq(request(&alice, XKV_OP_DELETE, 3, "key", NULL), 0);
	cr_assert_eq(request(&alice, XKV_OP_DELETE, 4, "key", NULL), 0);
	if (skip != 1)
		reply(&alice, XKV_OP_PUT, 1, XKV_S_OK, NULL);
	if (skip != 2)
		reply(&alice, XKV_OP_GET, 2, XKV_S_OK, "value");
	if (skip != 3)
		reply(&alice, XKV_OP_DELETE, 3, XKV_S_OK, NULL);
	if (skip != 4)
		reply(&alice, XKV_OP_DELETE, 4, XKV_S_NOT_FOUND, NULL);
}

/* Finishes and asserts that exactly the problems in want[] were found. */
static void expect_problems(const uint64_t want[TRACE_P_COUNT])
{
	cr_assert_eq(trace_check_finish(check, history, &report), 0);
	for (int k = 0; k < TRACE_P_COUNT; k++)
		cr_assert_eq(report.count[k], want[k], "problem %d: %llu, want %llu", k,
			     (unsigned long long)report.count[k], (unsigned long long)want[k]);
}

Test(check, all_good)
{
	four(0);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert(trace_check_passed(&report));
	cr_assert_eq(report.requests, 4);
	cr_assert_eq(report.answered, 4);
	cr_assert_eq(report.unseen_sent, 4);
	cr_assert_eq(verdict(), 0);
}

Test(check, missing)
{
	four(2);
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_MISSING] = 1});
	cr_assert_not(trace_check_passed(&report));
	cr_assert(strstr(report.first[TRACE_P_MISSING][0], "GET key (id 2"), "%s",
		  report.first[TRACE_P_MISSING][0]);
	cr_assert_eq(report.answered, 3);
}

/* A write without a reply may or may not have taken effect: both are right. */
Test(check, a_write_unanswered_is_unknown)
{
	four(1);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.unknown_writes, 1);
	cr_assert_eq(verdict(), 0, "the GET saw it, the DELETE removed it");
}

Test(check, duplicate)
{
	four(0);
	reply(&alice, XKV_OP_DELETE, 3, XKV_S_OK, NULL);
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_DUPLICATE] = 1});
}

Test(check, unexpected)
{
	four(0);
	reply(&alice, XKV_OP_GET, 99, XKV_S_NOT_FOUND, NULL); /* no such id */
	reply(&bob, XKV_OP_GET, 2, XKV_S_OK, "value");	      /* alice's id, to bob */
	reply(&alice, XKV_OP_PUT, 2, XKV_S_OK, NULL);	      /* another op */
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_UNEXPECTED] = 3});
}

/* A GET answered NOT_FOUND with this timestamp and token: not its answer unless 1001 and 0. */
static void get_answered(uint64_t timestamp, uint64_t token)
{
	struct xkv_msg m = msg(XKV_OP_GET | XKV_OP_REPLY, "", NULL);

	cr_assert_eq(request(&alice, XKV_OP_GET, 1, "key", NULL), 0);
	m.key_len = 0;
	m.status = XKV_S_NOT_FOUND;
	m.request_id = 1;
	m.timestamp = timestamp;
	m.token = token;
	cr_assert_eq(send_piece(&alice, m, true), 0);
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_UNEXPECTED] = 1, [TRACE_P_MISSING] = 1});
}

Test(check, timestamp_not_echoed)
{
	get_answered(7, 0);
}

/* A trace cannot echo a token: a server that gives one does not trust the replay link. */
Test(check, token_in_a_reply)
{
	get_answered(1001, 0x5eed);
	cr_assert(strstr(report.first[TRACE_P_UNEXPECTED][0], "validation token"), "%s",
		  report.first[TRACE_P_UNEXPECTED][0]);
}

/* Statuses the op cannot have are the check's; BUSY and NO_MEMORY had no effect. */
Test(check, wrong_status)
{
	cr_assert_eq(request(&alice, XKV_OP_PUT, 1, "k", "v"), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "k", NULL), 0);
	cr_assert_eq(request(&alice, XKV_OP_PUT, 3, "k", "w"), 0);
	cr_assert_eq(request(&alice, XKV_OP_PUT, 4, "k", "x"), 0);
	reply(&alice, XKV_OP_PUT, 1, XKV_S_NOT_FOUND, NULL);
	reply(&alice, XKV_OP_GET, 2, XKV_S_BAD_REQUEST, NULL);
	reply(&alice, XKV_OP_PUT, 3, XKV_S_BUSY, NULL);
	reply(&alice, XKV_OP_PUT, 4, XKV_S_NO_MEMORY, NULL);
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_WRONG_STATUS] = 2});
	cr_assert(strstr(report.first[TRACE_P_WRONG_STATUS][0], "PUT k (id 1"), "%s",
		  report.first[TRACE_P_WRONG_STATUS][0]);
	cr_assert(strstr(report.first[TRACE_P_WRONG_STATUS][1], "answered bad_request"), "%s",
		  report.first[TRACE_P_WRONG_STATUS][1]);
	cr_assert_eq(report.refused, 2);
}

/* Two DELETEs of the one value both found it: no order explains that. */
Test(check, deleted_twice)
{
	four(4);
	reply(&alice, XKV_OP_DELETE, 4, XKV_S_OK, NULL);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(verdict(), 1);
}

Test(check, a_value_never_written)
{
	cr_assert_eq(request(&alice, XKV_OP_PUT, 1, "k", "new"), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "k", NULL), 0);
	timed(XKV_OP_PUT, 1, "new", 10, XKV_S_OK, NULL, 20);
	timed(XKV_OP_GET, 2, NULL, 30, XKV_S_OK, "old", 40); /* same length, other bytes */
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.unseen_sent, 0);
	cr_assert_eq(verdict(), 1);
}

/* Writes v then w, each answered before the next began; two GETs after them. */
static void stale(uint64_t get1_sent, const char *get1, uint64_t get2_sent, const char *get2)
{
	cr_assert_eq(request(&alice, XKV_OP_PUT, 1, "k", "v"), 0);
	cr_assert_eq(request(&alice, XKV_OP_PUT, 2, "k", "w"), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 3, "k", NULL), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 4, "k", NULL), 0);
	timed(XKV_OP_PUT, 1, "v", 10, XKV_S_OK, NULL, 20);
	timed(XKV_OP_PUT, 2, "w", 30, XKV_S_OK, NULL, 60);
	timed(XKV_OP_GET, 3, NULL, get1_sent, XKV_S_OK, get1, get1_sent + 5);
	timed(XKV_OP_GET, 4, NULL, get2_sent, XKV_S_OK, get2, get2_sent + 5);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
}

/* A GET that overlaps the write of w may see v or w, whoever served it. */
Test(check, overlapping_reads_see_either)
{
	stale(35, "w", 50, "w");
	cr_assert_eq(verdict(), 0);
	check_teardown();
	check_setup();
	stale(35, "v", 50, "w");
	cr_assert_eq(verdict(), 0);
}

/* But not v after w was returned to a GET that ended before it began. */
Test(check, an_older_value_after_a_newer_one)
{
	stale(35, "w", 50, "v");
	cr_assert_eq(verdict(), 1);
}

/* Nor v once w's write was answered before the GET began. */
Test(check, a_value_overwritten_before_the_read)
{
	stale(70, "w", 80, "v");
	cr_assert_eq(verdict(), 1);
}

/* Latency runs from a request's last datagram leaving to its reply's: 5, 5, 10, 30 us. */
Test(check, latency_percentiles)
{
	stale(70, "w", 80, "w");
	cr_assert_eq(report.timed, 4);
	cr_assert_eq(report.latency_p50, 5000);
	cr_assert_eq(report.latency_p99, 30000);
	cr_assert_eq(report.latency_p999, 30000);
	cr_assert_eq(report.latency_max, 30000);
}

/* A refused PUT had no effect: a GET that returns its value is wrong. */
Test(check, a_refused_write_has_no_effect)
{
	cr_assert_eq(request(&alice, XKV_OP_PUT, 1, "k", "v"), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "k", NULL), 0);
	timed(XKV_OP_PUT, 1, "v", 10, XKV_S_BUSY, NULL, 20);
	timed(XKV_OP_GET, 2, NULL, 30, XKV_S_OK, "v", 40);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.refused, 1);
	cr_assert_eq(verdict(), 1);
}

Test(check, malformed)
{
	uint8_t junk[40] = {0x58, 0x4b, 1, 0x81};

	four(0);
	cr_assert_eq(trace_check_reply(check, &alice, ++frames_fed, now, junk, sizeof(junk)), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 9, "k", NULL), -EALREADY, "requests come first");
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_MALFORMED] = 1});
}

Test(check, requests_refused)
{
	uint8_t junk[40] = {0x58, 0x4b, 1, 0x01};

	cr_assert_eq(trace_check_request(check, &alice, ++frames_fed, junk, sizeof(junk)), -ENOMSG);
	cr_assert_eq(request(&alice, XKV_OP_GET, 1, "k", NULL), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 1, "k", NULL), -EEXIST, "ids are unique");
	cr_assert_eq(request(&bob, XKV_OP_GET, 1, "k", NULL), 0, "per client");
	cr_assert_eq(trace_check_finish(check, history, &report), 0);
	cr_assert_eq(report.not_requests, 1);
	cr_assert_eq(report.requests, 2);
}

#define BIG 5000 /* a value in four pieces */
static char big[BIG + 1];

/* Piece [off, off + len) of big, for a GET reply (reply) or a PUT request. */
static int big_piece(uint32_t id, uint32_t off, uint32_t len, bool is_reply)
{
	struct xkv_msg m =
		msg(is_reply ? XKV_OP_GET | XKV_OP_REPLY : XKV_OP_PUT, is_reply ? "" : "big", NULL);

	m.key_len = is_reply ? 0 : 3;
	m.request_id = id;
	m.timestamp = 1000 + id;
	m.value_len = BIG;
	m.frag_offset = off;
	m.frag_len = len;
	m.frag = big + off;
	return send_piece(&alice, m, is_reply);
}

/* A PUT of big in pieces, then a GET of it; the caller sends the GET's reply. */
static void big_requests(void)
{
	for (uint32_t i = 0; i < BIG; i++)
		big[i] = (char)('a' + i * 7 % 26);
	/* out of order: the PUT takes effect at whichever piece completes it */
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(big_piece(1, (i * 3 + 1) % 4 * 1250, 1250, false), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "big", NULL), 0);
	reply(&alice, XKV_OP_PUT, 1, XKV_S_OK, NULL);
}

Test(check, pieces_good)
{
	big_requests();
	for (int i = 3; i >= 0; i--)
		cr_assert_eq(big_piece(2, (uint32_t)i * 1250, 1250, true), 0);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.answered, 2);
	cr_assert_eq(report.request_dgrams, 5);
	cr_assert_eq(verdict(), 0);
}

Test(check, pieces_missing)
{
	big_requests();
	for (int i = 0; i < 3; i++)
		cr_assert_eq(big_piece(2, (uint32_t)i * 1250, 1250, true), 0);
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_MISSING] = 1});
	cr_assert(strstr(report.first[TRACE_P_MISSING][0], "some pieces"), "%s",
		  report.first[TRACE_P_MISSING][0]);
}

Test(check, pieces_duplicate)
{
	big_requests();
	cr_assert_eq(big_piece(2, 0, 1250, true), 0);
	cr_assert_eq(big_piece(2, 0, 1250, true), 0);
	for (int i = 1; i < 4; i++)
		cr_assert_eq(big_piece(2, (uint32_t)i * 1250, 1250, true), 0);
	cr_assert_eq(big_piece(2, 1250, 1250, true), 0); /* after the value was whole */
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_DUPLICATE] = 2});
	cr_assert_eq(report.answered, 2);
}

Test(check, pieces_wrong_value)
{
	big_requests();
	big[4999] ^= 1; /* a value the PUT did not write, in pieces that agree */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(big_piece(2, (uint32_t)i * 1250, 1250, true), 0);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(verdict(), 1);
}

Test(check, unfinished_put_wants_no_reply)
{
	cr_assert_eq(big_piece(1, 0, 1250, false), 0);
	cr_assert_eq(big_piece(1, 2500, 1250, false), 0);
	cr_assert_eq(request(&alice, XKV_OP_GET, 2, "big", NULL), 0);
	reply(&alice, XKV_OP_GET, 2, XKV_S_NOT_FOUND, NULL);
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.unfinished_puts, 1);
}

/* ---- the workload spec ---- */

Test(spec, defaults_and_fields)
{
	struct trace_spec s;
	char why[200];

	cr_assert_eq(trace_spec_parse("", &s, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(s.keys, 1000);
	cr_assert_eq(s.key_size, 16);
	cr_assert_float_eq(s.weight[XKV_OP_GET], 0.9, 1e-12);
	cr_assert_float_eq(s.weight[XKV_OP_PUT], 0.1, 1e-12);
	cr_assert_eq(s.value_min, 64);
	cr_assert_eq(s.value_max, 64);

	cr_assert_eq(trace_spec_parse("keys=1000,get=0.9,put=0.08,del=0.02,value=64,zipf=0.99", &s,
				      why, sizeof(why)),
		     0, "%s", why);
	cr_assert_float_eq(s.weight[XKV_OP_DELETE], 0.02, 1e-12);
	cr_assert_float_eq(s.zipf, 0.99, 1e-12);

	cr_assert_eq(trace_spec_parse("put=1,value=10-200000,key=8,keys=50", &s, why, sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(s.weight[XKV_OP_GET], 0, "weights given replace the default mix");
	cr_assert_eq(s.value_min, 10);
	cr_assert_eq(s.value_max, 200000);
	cr_assert_eq(s.key_size, 8);
	cr_assert_eq(s.keys, 50);
}

Test(spec, errors)
{
	static const char *const bad[] = {
		"keys",	     "color=red",     "keys=ten",
		"keys=0",    "get=0.5",	      "get=1.5,put=-0.5",
		"value=9-3", "value=2000000", "key=2,keys=1000",
		"zipf=-1",   "value=1-2-3",   "get=1,,put=0",
	};
	struct trace_spec s;
	char why[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		cr_assert_eq(trace_spec_parse(bad[i], &s, why, sizeof(why)), -EINVAL, "%s", bad[i]);
		cr_assert_neq(why[0], 0, "%s: a reason", bad[i]);
	}
}

/* ---- gen ---- */

struct frames {
	uint8_t *data;
	uint32_t *len;
	uint64_t *ns;
	size_t n, cap;
};

static int keep_frame(void *ctx, uint64_t ns, const uint8_t *frame, uint32_t len)
{
	struct frames *f = ctx;

	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 256;
		f->data = realloc(f->data, f->cap * TRACE_FRAME_MAX);
		f->len = realloc(f->len, f->cap * sizeof(*f->len));
		f->ns = realloc(f->ns, f->cap * sizeof(*f->ns));
		cr_assert(f->data && f->len && f->ns);
	}
	cr_assert_leq(len, TRACE_FRAME_MAX);
	memcpy(f->data + f->n * TRACE_FRAME_MAX, frame, len);
	f->len[f->n] = len;
	f->ns[f->n++] = ns;
	return 0;
}

static void frames_free(struct frames *f)
{
	free(f->data);
	free(f->len);
	free(f->ns);
	*f = (struct frames){0};
}

static const uint8_t *frame_at(const struct frames *f, size_t i)
{
	return f->data + i * TRACE_FRAME_MAX;
}

static struct trace_gen_opts gen_opts(const char *spec, uint64_t count, uint64_t seed)
{
	struct trace_gen_opts o = {
		.count = count,
		.seed = seed,
		.pps = 1000,
		.src = {.mac = {2, 0, 0, 0, 0, 2}, .ip = {10, 0, 0, 2}, .port = htons(40000)},
		.dst = {.mac = {2, 0, 0, 0, 0, 1}, .ip = {10, 0, 0, 1}, .port = htons(7411)},
	};
	char why[200];

	cr_assert_eq(trace_spec_parse(spec, &o.spec, why, sizeof(why)), 0, "%s", why);
	return o;
}

static void gen(const struct trace_gen_opts *o, struct frames *f, struct trace_gen_stats *stats)
{
	*f = (struct frames){0};
	cr_assert_eq(trace_gen(o, keep_frame, f, stats), 0);
	cr_assert_eq(f->n, stats->frames);
}

static const char mixed[] = "keys=50,key=12,get=0.5,put=0.4,del=0.1,value=0-4000,zipf=0.99";

Test(gen, deterministic)
{
	struct trace_gen_opts o = gen_opts(mixed, 500, 42);
	struct trace_gen_stats s1, s2;
	struct frames a, b, c;

	gen(&o, &a, &s1);
	gen(&o, &b, &s2);
	cr_assert_eq(a.n, b.n);
	for (size_t i = 0; i < a.n; i++)
		cr_assert(a.len[i] == b.len[i] &&
				  !memcmp(frame_at(&a, i), frame_at(&b, i), a.len[i]),
			  "frame %zu is the same for the same seed", i);
	o.seed = 43;
	gen(&o, &c, &s2);
	cr_assert(c.n != a.n || memcmp(c.data, a.data, a.n * TRACE_FRAME_MAX),
		  "another seed, another trace");
	frames_free(&a);
	frames_free(&b);
	frames_free(&c);
}

static uint16_t ip_sum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

Test(gen, frames_are_valid_requests)
{
	struct trace_gen_opts o = gen_opts(mixed, 2000, 7);
	uint64_t ops[XKV_OP_DELETE + 1] = {0}, pieces = 0;
	uint32_t id = 0, got = 0, whole = 0;
	struct trace_gen_stats stats;
	struct frames f;

	gen(&o, &f, &stats);
	cr_assert_gt(stats.split_puts, 100, "values up to 4000 bytes go in pieces");
	for (size_t i = 0; i < f.n; i++) {
		const uint8_t *fr = frame_at(&f, i);
		uint32_t off, len;
		struct xkv_route r;
		struct xkv_msg m;

		cr_assert_eq(xkv_frame_parse(fr, f.len[i], &r, &off, &len), 0, "frame %zu", i);
		cr_assert(!memcmp(r.eth_src, o.src.mac, 6) && !memcmp(r.eth_dst, o.dst.mac, 6));
		cr_assert(!memcmp(r.ip_src, o.src.ip, 4) && !memcmp(r.ip_dst, o.dst.ip, 4));
		cr_assert(r.port_src == o.src.port && r.port_dst == o.dst.port);
		cr_assert_eq(ip_sum(fr + 14, 20), 0xffff, "frame %zu: IPv4 header checksum", i);
		cr_assert_eq(off + len, f.len[i], "no padding");
		cr_assert_leq(len, DGRAM_MAX, "a datagram fits a 1500-byte MTU");
		cr_assert_eq(xkv_decode(fr + off, len, &m), XKV_R_OK, "frame %zu decodes", i);
		cr_assert_eq(m.op & XKV_OP_REPLY, 0);
		cr_assert_eq(m.key_len, 12);
		cr_assert_eq(m.timestamp, f.ns[i], "the timestamp is the send time");
		cr_assert_eq(f.ns[i], i * 1000000, "1000 frames a second");
		if (m.frag_offset == 0) { /* a new request: ids run 1, 2, 3, ... */
			cr_assert_eq(got, whole, "request %u: every piece was sent", id);
			cr_assert_eq(m.request_id, ++id, "frame %zu: ids are unique and in order",
				     i);
			ops[m.op]++;
			got = 0;
			whole = m.value_len;
			cr_assert_leq(m.value_len, 4000);
		} else {
			cr_assert_eq(m.request_id, id, "pieces follow each other");
			cr_assert_eq(m.frag_offset, got, "in order, without holes");
			pieces++;
		}
		got += m.frag_len;
		cr_assert_leq(got, m.value_len);
	}
	cr_assert_eq(id, 2000);
	cr_assert_eq(got, whole);
	for (int op = XKV_OP_GET; op <= XKV_OP_DELETE; op++)
		cr_assert_eq(ops[op], stats.requests[op]);
	/* 2000 draws: each share within 5 points of its weight */
	cr_assert(ops[XKV_OP_GET] > 900 && ops[XKV_OP_GET] < 1100, "%lu GETs", ops[XKV_OP_GET]);
	cr_assert(ops[XKV_OP_DELETE] > 100 && ops[XKV_OP_DELETE] < 300);
	cr_assert_eq(f.n, 2000 + pieces);
	frames_free(&f);
}

/* ---- pcap files ---- */

struct readback {
	const struct frames *want;
	size_t n;
	bool exact; /* nanoseconds (pcapng); else microseconds (pcap) */
};

static int compare_frame(void *ctx, uint64_t frame, uint64_t ns, const uint8_t *data,
			 uint32_t len)
{
	struct readback *rb = ctx;

	cr_assert_eq(frame, rb->n + 1, "frames count from 1");
	cr_assert_eq(ns, rb->exact ? rb->want->ns[rb->n] : rb->want->ns[rb->n] / 1000 * 1000);
	cr_assert_eq(len, rb->want->len[rb->n]);
	cr_assert_eq(memcmp(data, frame_at(rb->want, rb->n), len), 0);
	rb->n++;
	return 0;
}

static void tmp_path(char *path, size_t len, const char *name)
{
	snprintf(path, len, "/tmp/xkv-test-trace-%d-%s.pcap", getpid(), name);
}

Test(pcap, write_and_read_back)
{
	struct trace_gen_opts o = gen_opts(mixed, 300, 5);
	struct trace_gen_stats stats;
	struct trace_pcap_out out;
	struct frames f;
	struct readback rb = {.want = &f};
	char path[128], why[256];

	gen(&o, &f, &stats);
	tmp_path(path, sizeof(path), "rw");
	cr_assert_eq(trace_pcap_create(&out, path, NULL, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(trace_gen(&o, trace_pcap_write_at, &out, &stats), 0);
	cr_assert_eq(trace_pcap_close(&out), 0);
	cr_assert_eq(trace_pcap_each(path, compare_frame, &rb, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(rb.n, f.n);
	unlink(path);
	frames_free(&f);
}

static int never(void *ctx, uint64_t frame, uint64_t ns, const uint8_t *data, uint32_t len)
{
	(void)ctx, (void)frame, (void)ns, (void)data, (void)len;
	cr_assert_fail("no frame may be handed on");
	return 0;
}

Test(pcap, refuses_what_it_cannot_check)
{
	uint8_t frame[100] = {0};
	struct pcap_pkthdr cut = {.caplen = 60, .len = 100};
	struct trace_pcap_out out = {0};
	char path[128], why[256];

	cr_assert_eq(trace_pcap_each("/nonexistent/x.pcap", never, NULL, why, sizeof(why)), -EIO);
	tmp_path(path, sizeof(path), "cut");
	cr_assert_eq(trace_pcap_create(&out, path, NULL, why, sizeof(why)), 0, "%s", why);
	trace_pcap_write(&out, &cut, frame);
	cr_assert_eq(trace_pcap_close(&out), 0);
	cr_assert_eq(trace_pcap_each(path, never, NULL, why, sizeof(why)), -EMSGSIZE);
	cr_assert(strstr(why, "60 of its 100"), "%s", why);

	out.dead = pcap_open_dead(DLT_RAW, 65535);
	out.dumper = pcap_dump_open(out.dead, path);
	cr_assert_not_null(out.dumper);
	cr_assert_eq(trace_pcap_close(&out), 0);
	cr_assert_eq(trace_pcap_each(path, never, NULL, why, sizeof(why)), -EPROTONOSUPPORT);
	unlink(path);
}

/* record's pcapng: libpcap reads its frames to the nanosecond, check its drop count */
Test(pcap, pcapng_frames_and_drops)
{
	struct trace_gen_opts o = gen_opts(mixed, 100, 5);
	struct trace_gen_stats stats;
	struct trace_pcap_out classic;
	struct trace_pcapng out;
	struct frames f;
	struct readback rb = {.want = &f};
	char path[128], why[256];
	uint64_t dropped = 1;

	gen(&o, &f, &stats);
	tmp_path(path, sizeof(path), "ng");
	cr_assert_eq(trace_pcapng_create(&out, path, DLT_EN10MB, TRACE_SNAPLEN), 0);
	for (size_t i = 0; i < f.n; i++) {
		f.ns[i] = f.ns[i] / 1000 * 1000 + i % 1000; /* not whole microseconds */
		cr_assert_eq(trace_pcapng_write(&out, f.ns[i], frame_at(&f, i), f.len[i], f.len[i]),
			     0);
	}
	cr_assert_eq(trace_pcapng_flush(&out), 0);
	cr_assert_eq(trace_capture_drops(path, &dropped), -ENODATA, "no ISB yet");
	cr_assert_eq(trace_pcapng_close(&out, 1, f.n + 760, 760), 0);
	cr_assert_eq(trace_capture_drops(path, &dropped), 0);
	cr_assert_eq(dropped, 760);
	rb.exact = true;
	cr_assert_eq(trace_pcap_each(path, compare_frame, &rb, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(rb.n, f.n);

	cr_assert_eq(trace_pcap_create(&classic, path, NULL, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(trace_pcap_close(&classic), 0);
	cr_assert_eq(trace_capture_drops(path, &dropped), -ENODATA, "classic pcap says nothing");
	cr_assert_eq(trace_capture_drops("/nonexistent/x.pcapng", &dropped), -EIO);
	unlink(path);
	frames_free(&f);
}

/* ---- gen and check against the server's own protocol path ---- */

struct reply_dgram {
	struct xkv_peer client;
	uint64_t ns; /* when it was sent: after its request's, before the next one's */
	size_t len;
	uint8_t data[DGRAM_MAX];
};

/* A transport that keeps every reply the worker sends. */
struct keeper {
	struct xkv_tx tx;
	uint8_t buf[DGRAM_MAX];
	struct reply_dgram *replies;
	size_t n, cap;
};

static void *keeper_reserve(const struct xkv_origin *to, size_t *cap)
{
	*cap = DGRAM_MAX;
	return ((struct keeper *)to->tx)->buf;
}

static void keeper_send(const struct xkv_origin *to, void *buf, size_t len)
{
	struct keeper *k = (struct keeper *)to->tx;

	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->replies = realloc(k->replies, k->cap * sizeof(*k->replies));
		cr_assert_not_null(k->replies);
	}
	k->replies[k->n].client = to->peer;
	k->replies[k->n].ns = now;
	k->replies[k->n].len = len;
	memcpy(k->replies[k->n++].data, buf, len);
}

static struct keeper keeper = {.tx = {.reserve = keeper_reserve, .send = keeper_send}};

/*
 * Sends a generated trace through xkv_worker_datagram() (reassembly, execution,
 * the store) and the same requests to the checker; keeps the replies in keeper.
 */
static void serve(const char *spec, uint64_t count)
{
	struct xkv_store_config store_cfg = {
		.memory_limit = 64 << 20,
		.mode = XKV_MODE_STORE, /* the model never evicts */
		.bucket_bits = 6,
		.overflow_buckets = 8,
	};
	static const struct xkv_validate unbounded = {.ntrusted = 1}; /* ::/0: no bound */
	struct xkv_worker_config cfg = {
		.nworkers = 1,
		.policy = XKV_POLICY_CREW,
		.tx = &keeper.tx,
		.validate = &unbounded,
		.reasm = {.memory_limit = 16 << 20, .max_messages = 64, .timeout_ns = 1000000000},
	};
	struct trace_gen_opts o = gen_opts(spec, count, 11);
	struct trace_gen_stats stats;
	struct xkv_store *store;
	struct xkv_worker w;
	struct frames f;

	gen(&o, &f, &stats);
	xkv_store_thread_online();
	store = xkv_store_create(&store_cfg);
	cr_assert_not_null(store);
	cfg.store = store;
	cr_assert_eq(xkv_worker_init(&w, &cfg), 0);
	xkv_worker_tick(&w, xkv_now_ns());
	for (size_t i = 0; i < f.n; i++) {
		uint32_t off, len;
		struct xkv_route r;
		struct xkv_origin client = {.tx = &keeper.tx};

		cr_assert_eq(xkv_frame_parse(frame_at(&f, i), f.len[i], &r, &off, &len), 0);
		xkv_route_peer(&r, &client.peer);
		cr_assert_eq(trace_check_request(check, &client.peer, i + 1,
						 frame_at(&f, i) + off, len), 0);
		/* one request at a time: each served between its sending and the next's */
		trace_check_sent(check, &client.peer, (i + 1) * 1000, frame_at(&f, i) + off, len);
		now = (i + 1) * 1000 + 500;
		xkv_worker_datagram(&w, &client, frame_at(&f, i) + off, len);
		xkv_store_quiescent();
	}
	xkv_worker_fini(&w);
	xkv_store_destroy(store);
	xkv_store_thread_offline();
	frames_free(&f);
}

static void replies_to_check(void)
{
	for (size_t i = 0; i < keeper.n; i++)
		cr_assert_eq(trace_check_reply(check, &keeper.replies[i].client, i + 1,
					       keeper.replies[i].ns, keeper.replies[i].data,
					       keeper.replies[i].len),
			     0);
	free(keeper.replies);
	keeper.replies = NULL;
	keeper.n = keeper.cap = 0;
}

Test(check, agrees_with_the_server_worker)
{
	serve(mixed, 3000);
	replies_to_check();
	expect_problems((uint64_t[TRACE_P_COUNT]){0});
	cr_assert_eq(report.answered, 3000);
	cr_assert_eq(report.unseen_sent, 0);
	cr_assert_gt(report.reply_dgrams, 3000, "some GET replies came in pieces");
	cr_assert_eq(verdict(), 0);
}

Test(check, catches_a_spoilt_server_reply)
{
	struct xkv_msg m;
	size_t spoilt = 0, dropped = 0;

	serve(mixed, 3000);
	/* flip the last byte of the first GET value; spoil the first DELETE's reply */
	for (size_t i = 0; i < keeper.n && !(spoilt && dropped); i++) {
		struct reply_dgram *d = &keeper.replies[i];

		cr_assert_eq(xkv_decode(d->data, d->len, &m), XKV_R_OK);
		if (!spoilt && m.op == (XKV_OP_GET | XKV_OP_REPLY) && m.frag_len) {
			d->data[d->len - 1] ^= 0x20;
			spoilt = i + 1;
		} else if (!dropped && m.op == (XKV_OP_DELETE | XKV_OP_REPLY)) {
			d->len = 3; /* malformed now, so the request also misses its reply */
			dropped = i + 1;
		}
	}
	cr_assert(spoilt && dropped);
	replies_to_check();
	/* a DELETE without its reply is an unknown outcome; the GET's value was never written */
	expect_problems((uint64_t[TRACE_P_COUNT]){[TRACE_P_MALFORMED] = 1});
	cr_assert_eq(report.answered, 2999);
	cr_assert_eq(report.unknown_writes, 1);
	cr_assert_eq(verdict(), 1);
}
