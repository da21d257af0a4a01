// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


#include "check.h"
#include "common/history.h"
#include "proto/reassembly.h"
#include "table.h"

#define KEY_SHOWN 24 /* key bytes shown in messages */

/* Reassembly without its server-side limits: the whole trace is in hand. */
#define REASM_MEMORY (1ull << 32)

/* A request, and what its reply said: one operation of the history. */
struct expect {
	struct xkv_peer client;
	uint64_t frame;	    /* where the request's last datagram is in the requests */
	uint64_t timestamp; /* echoed by the reply */
	uint64_t token;	    /* a PUT's value's, or the value a GET returned */
	uint64_t sent_ns;   /* capture time of its last datagram leaving the client; 0: unseen */
	uint64_t reply_ns;  /* capture time of its reply's last datagram */
	uint32_t client_no; /* the history's client: clients numbered as they first appear */
	uint32_t request_id;
	uint8_t op;
	uint8_t result;	    /* enum history_result, once answered */
	bool answered;	    /* its whole reply came */
	bool refused;	    /* answered BUSY or NO_MEMORY: no effect */
	bool partial;	    /* some pieces of its reply came */
	uint16_t key_len;
	char key[];
};

struct expect_id {
	struct xkv_peer client;
	uint32_t request_id;
};

struct trace_check {
	struct trace_table clients; /* struct xkv_peer -> its number + 1 */
	struct trace_table expects; /* struct expect_id -> struct expect */
	struct expect **order;	    /* every expect, in the order of the requests */
	size_t nexpects, cap;
	struct xkv_reasm *put_pieces, *reply_pieces;
	bool replying;	   /* trace_check_reply has been called */
	uint64_t first_ns; /* the replies capture's first frame of ours, or 0 */
	struct trace_check_report report;
};

struct trace_check *trace_check_create(void)
{
	struct xkv_reasm_config cfg = {
		.memory_limit = REASM_MEMORY,
		.max_messages = TRACE_PIECED_MAX,
		.timeout_ns = UINT64_MAX,
	};
	struct trace_check *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (trace_table_init(&c->clients))
		goto out_free;
	if (trace_table_init(&c->expects))
		goto out_clients;
	c->put_pieces = xkv_reasm_create(&cfg);
	if (!c->put_pieces)
		goto out_expects;
	c->reply_pieces = xkv_reasm_create(&cfg);
	if (!c->reply_pieces)
		goto out_put_pieces;
	return c;

out_put_pieces:
	xkv_reasm_destroy(c->put_pieces);
out_expects:
	trace_table_free(&c->expects, NULL);
out_clients:
	trace_table_free(&c->clients, NULL);
out_free:
	free(c);
	errno = ENOMEM;
	return NULL;
}

void trace_check_destroy(struct trace_check *c)
{
	if (!c)
		return;
	xkv_reasm_destroy(c->reply_pieces);
	xkv_reasm_destroy(c->put_pieces);
	trace_table_free(&c->expects, NULL);
	for (size_t i = 0; i < c->nexpects; i++)
		free(c->order[i]);
	free(c->order);
	trace_table_free(&c->clients, NULL);
	free(c);
}

void trace_peer_str(const struct xkv_peer *peer, char *buf, size_t len)
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	char addr[INET6_ADDRSTRLEN];

	if (!memcmp(peer->addr, v4mapped, sizeof(v4mapped))) {
		inet_ntop(AF_INET, peer->addr + 12, addr, sizeof(addr));
		snprintf(buf, len, "%s:%u", addr, ntohs(peer->port));
	} else {
		inet_ntop(AF_INET6, peer->addr, addr, sizeof(addr));
		snprintf(buf, len, "[%s]:%u", addr, ntohs(peer->port));
	}
}

static const char *op_name(uint8_t op)
{
	static const char *const names[] = {"?", "GET", "PUT", "DELETE"};

	op &= ~XKV_OP_REPLY;
	return op <= XKV_OP_DELETE ? names[op] : names[0];
}

/* Counts a problem and keeps the first few descriptions. */
__attribute__((format(printf, 3, 4))) static void
problem(struct trace_check *c, enum trace_problem kind, const char *fmt, ...)
{
	uint64_t n = c->report.count[kind]++;
	va_list ap;

	if (n >= TRACE_LIST_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(c->report.first[kind][n], TRACE_LINE_MAX, fmt, ap);
	va_end(ap);
}

/* "GET k0042 (id 7 from 10.0.0.2:40000, request frame 9)", the key made printable. */
static void describe(const struct expect *e, char *buf, size_t len)
{
	char key[KEY_SHOWN * 4 + 4], *k = key, client[64];
	uint32_t shown = e->key_len < KEY_SHOWN ? e->key_len : KEY_SHOWN;

	for (uint32_t i = 0; i < shown; i++) {
		uint8_t b = (uint8_t)e->key[i];

		if (b >= 0x20 && b < 0x7f && b != '\\')
			*k++ = (char)b;
		else
			k += sprintf(k, "\\x%02x", b);
	}
	strcpy(k, e->key_len > shown ? "..." : "");
	trace_peer_str(&e->client, client, sizeof(client));
	snprintf(buf, len, "%s %s (id %u from %s, request frame %llu)", op_name(e->op), key,
		 e->request_id, client, (unsigned long long)e->frame);
}

static struct expect_id expect_id(const struct xkv_peer *client, uint32_t request_id)
{
	struct expect_id id;

	memset(&id, 0, sizeof(id));
	id.client = *client;
	id.request_id = request_id;
	return id;
}

/* The history's number of client: 0, 1, ... as they first appear. */
static int client_no(struct trace_check *c, const struct xkv_peer *client, uint32_t *no)
{
	void **slot;
	int ret = trace_table_insert(&c->clients, client, sizeof(*client), &slot);

	if (ret < 0)
		return ret;
	if (ret) /* the slot holds the number + 1: a NULL slot is a new one */
		*slot = (void *)(uintptr_t)c->clients.count;
	*no = (uint32_t)((uintptr_t)*slot - 1);
	return 0;
}

/* A whole request: remember it until its reply comes. */
static int expect_add(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
		      const struct xkv_msg *req)
{
	struct expect_id id = expect_id(client, req->request_id);
	struct expect *e;
	void **slot, *unused;
	uint32_t no;
	int ret;

	ret = client_no(c, client, &no);
	if (ret)
		return ret;
	ret = trace_table_insert(&c->expects, &id, sizeof(id), &slot);
	if (ret <= 0)
		return ret ? ret : -EEXIST;
	ret = -ENOMEM;
	if (c->nexpects == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct expect **order = realloc(c->order, cap * sizeof(*order));

		if (!order)
			goto out_unlist;
		c->order = order;
		c->cap = cap;
	}
	e = calloc(1, sizeof(*e) + req->key_len);
	if (!e)
		goto out_unlist;
	e->client = *client;
	e->client_no = no;
	e->frame = frame;
	e->timestamp = req->timestamp;
	e->request_id = req->request_id;
	e->op = req->op;
	e->key_len = req->key_len;
	memcpy(e->key, req->key, e->key_len);
	if (req->op == XKV_OP_PUT) /* gen makes every value unique, as the history needs */
		e->token = history_token(req->frag, req->value_len);
	*slot = e;
	c->order[c->nexpects++] = e;
	c->report.requests++;
	return 0;

out_unlist:
	trace_table_remove(&c->expects, &id, sizeof(id), &unused);
	return ret;
}

int trace_check_request(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
			const void *data, size_t len)
{
	struct xkv_reasm_msg *whole;
	struct xkv_msg m;
	int ret;

	if (c->replying)
		return -EALREADY;
	if (xkv_decode(data, len, &m) != XKV_R_OK || (m.op & XKV_OP_REPLY)) {
		c->report.not_requests++;
		return -ENOMSG;
	}
	c->report.request_dgrams++;
	if (m.frag_len == m.value_len)
		return expect_add(c, client, frame, &m);
	ret = xkv_reasm_add(c->put_pieces, client, &m, 0, &whole);
	if (ret == XKV_REASM_PENDING)
		return 0;
	if (ret == -ENOMEM)
		return -ENOBUFS;
	if (ret != XKV_REASM_COMPLETE) { /* the server refuses such a piece too */
		c->report.not_requests++;
		return -ENOMSG;
	}
	ret = expect_add(c, &whole->peer, frame, &whole->head);
	xkv_reasm_release(c->put_pieces, whole);
	return ret;
}

/*
 * A whole reply (one datagram, or its pieces put together) to e, its last datagram
 * captured at ns: its result for the history. BUSY and NO_MEMORY had no effect.
 */
static void judge(struct trace_check *c, struct expect *e, uint64_t ns, const struct xkv_msg *reply)
{
	char what[TRACE_LINE_MAX];

	e->answered = true;
	e->reply_ns = ns;
	switch (reply->status) {
	case XKV_S_OK:
		e->result = e->op == XKV_OP_GET ? HISTORY_VALUE : HISTORY_OK;
		if (e->op == XKV_OP_GET)
			e->token = history_token(reply->frag, reply->value_len);
		return;
	case XKV_S_NOT_FOUND:
		if (e->op == XKV_OP_PUT)
			break;
		e->result = HISTORY_NONE;
		return;
	case XKV_S_BUSY:
	case XKV_S_NO_MEMORY:
		e->refused = true;
		c->report.refused++;
		return;
	}
	e->refused = true; /* reported: not in the history */
	describe(e, what, sizeof(what));
	problem(c, TRACE_P_WRONG_STATUS, "%s: answered %s", what, xkv_status_name(reply->status));
}

/* A reply datagram that is one piece of a value: judged once all pieces are in. */
static int reply_piece(struct trace_check *c, struct expect *e, uint64_t ns,
		       const struct xkv_msg *m, const char *what)
{
	uint64_t dups_before;
	struct xkv_reasm_stats stats;
	struct xkv_reasm_msg *whole;
	int ret;

	xkv_reasm_get_stats(c->reply_pieces, &stats);
	dups_before = stats.duplicates;
	ret = xkv_reasm_add(c->reply_pieces, &e->client, m, 0, &whole);
	switch (ret) {
	case XKV_REASM_COMPLETE:
		judge(c, e, ns, &whole->head);
		xkv_reasm_release(c->reply_pieces, whole);
		return 0;
	case XKV_REASM_PENDING:
		e->partial = true;
		xkv_reasm_get_stats(c->reply_pieces, &stats);
		if (stats.duplicates != dups_before)
			problem(c, TRACE_P_DUPLICATE, "%s: bytes %u..%u of the value again", what,
				m->frag_offset, m->frag_offset + m->frag_len);
		return 0;
	case -EINVAL:
		e->answered = true; /* reported here; not again as missing */
		problem(c, TRACE_P_WRONG_VALUE, "%s: a piece disagrees with the pieces before it",
			what);
		return 0;
	case -E2BIG:
		e->answered = true;
		problem(c, TRACE_P_WRONG_VALUE, "%s: pieces in over %d separate ranges", what,
			XKV_REASM_GAPS);
		return 0;
	default:
		return -ENOBUFS;
	}
}

void trace_check_sent(struct trace_check *c, const struct xkv_peer *client, uint64_t ns,
		      const void *data, size_t len)
{
	struct expect_id id;
	struct xkv_msg m;
	void **slot;

	if (!c->first_ns)
		c->first_ns = ns;
	if (xkv_decode(data, len, &m) != XKV_R_OK || (m.op & XKV_OP_REPLY))
		return;
	id = expect_id(client, m.request_id);
	slot = trace_table_find(&c->expects, &id, sizeof(id));
	if (slot && ((struct expect *)*slot)->sent_ns < ns) /* its last datagram */
		((struct expect *)*slot)->sent_ns = ns;
}

int trace_check_reply(struct trace_check *c, const struct xkv_peer *client, uint64_t frame,
		      uint64_t ns, const void *data, size_t len)
{
	char what[TRACE_LINE_MAX], who[64];
	struct expect_id id;
	enum xkv_reason why;
	struct expect *e;
	struct xkv_msg m;
	void **slot;

	c->replying = true;
	if (!c->first_ns)
		c->first_ns = ns;
	c->report.reply_dgrams++;
	trace_peer_str(client, who, sizeof(who));
	why = xkv_decode(data, len, &m);
	if (why != XKV_R_OK || !(m.op & XKV_OP_REPLY)) {
		problem(c, TRACE_P_MALFORMED, "reply frame %llu to %s: %s",
			(unsigned long long)frame, who,
			why != XKV_R_OK ? xkv_reason_name(why) : "a request, not a reply");
		return 0;
	}
	id = expect_id(client, m.request_id);
	slot = trace_table_find(&c->expects, &id, sizeof(id));
	if (!slot) {
		problem(c, TRACE_P_UNEXPECTED,
			"reply frame %llu: %s reply, id %u to %s: no such request",
			(unsigned long long)frame, op_name(m.op), m.request_id, who);
		return 0;
	}
	e = *slot;
	describe(e, what, sizeof(what));
	if (m.op != (e->op | XKV_OP_REPLY) || m.timestamp != e->timestamp) {
		problem(c, TRACE_P_UNEXPECTED,
			"reply frame %llu: a %s reply with timestamp %llu to %s, sent with %llu",
			(unsigned long long)frame, op_name(m.op), (unsigned long long)m.timestamp,
			what, (unsigned long long)e->timestamp);
		return 0;
	}
	/* a trace shows no token, so a server that trusts the link gives none (PROTOCOL.md) */
	if (m.token) {
		problem(c, TRACE_P_UNEXPECTED,
			"reply frame %llu: a validation token in the reply to %s (--trust the "
			"replay link)",
			(unsigned long long)frame, what);
		return 0;
	}
	if (e->answered) {
		problem(c, TRACE_P_DUPLICATE, "reply frame %llu: %s answered again",
			(unsigned long long)frame, what);
		return 0;
	}
	if (m.frag_len != m.value_len)
		return reply_piece(c, e, ns, &m, what);
	judge(c, e, ns, &m);
	return 0;
}

/* e as an operation of the history; false when it has no place there. */
static bool history_rec_of(const struct trace_check *c, const struct expect *e,
			   struct history_rec *r)
{
	static const uint8_t ops[] = {[XKV_OP_GET] = HISTORY_GET, [XKV_OP_PUT] = HISTORY_PUT,
				      [XKV_OP_DELETE] = HISTORY_DEL};

	if (e->refused || (!e->answered && e->op == XKV_OP_GET))
		return false;
	*r = (struct history_rec){
		.client = e->client_no,
		.op = ops[e->op],
		.result = e->answered ? e->result : HISTORY_UNKNOWN,
		.key = e->key,
		.key_len = e->key_len,
		.token = e->token,
		/* unseen: from the capture's start, which allows it more, never less */
		.invoke_ns = e->sent_ns ? e->sent_ns : c->first_ns,
		.return_ns = e->reply_ns,
	};
	if (e->answered && r->invoke_ns > r->return_ns) /* clocks of two captures */
		r->invoke_ns = r->return_ns;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The latency percentiles of the answered requests the capture saw leave. */
static int latencies(struct trace_check *c)
{
	uint64_t *ns = malloc(sizeof(*ns) * (c->nexpects + 1)), n = 0;

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < c->nexpects; i++) {
		const struct expect *e = c->order[i];

		if (e->answered && e->sent_ns && e->reply_ns >= e->sent_ns)
			ns[n++] = e->reply_ns - e->sent_ns;
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	c->report.timed = n;
	if (n) { /* nearest rank: the smallest value at least per_mille of them reach */
		c->report.latency_p50 = ns[(n * 500 + 999) / 1000 - 1];
		c->report.latency_p99 = ns[(n * 990 + 999) / 1000 - 1];
		c->report.latency_p999 = ns[(n * 999 + 999) / 1000 - 1];
		c->report.latency_max = ns[n - 1];
	}
	free(ns);
	return 0;
}

int trace_check_finish(struct trace_check *c, const char *path, struct trace_check_report *report)
{
	struct xkv_reasm_stats stats;
	char what[TRACE_LINE_MAX];
	struct history_rec rec;
	struct history *h;
	int ret = 0;

	h = history_open(path);
	if (!h)
		return -errno;
	for (size_t i = 0; i < c->nexpects; i++) {
		struct expect *e = c->order[i];

		if (history_rec_of(c, e, &rec) && !ret)
			ret = history_write(h, &rec);
		if (e->answered) {
			c->report.answered++;
			c->report.unseen_sent += !e->sent_ns;
			continue;
		}
		if (e->op != XKV_OP_GET) { /* it may or may not have taken effect */
			c->report.unknown_writes++;
			continue;
		}
		describe(e, what, sizeof(what));
		problem(c, TRACE_P_MISSING, "%s: %s", what,
			e->partial ? "some pieces of the reply never came" : "no reply");
	}
	xkv_reasm_get_stats(c->put_pieces, &stats);
	c->report.unfinished_puts = stats.in_flight;
	if (!ret)
		ret = latencies(c);
	*report = c->report;
	if (history_close(h) && !ret)
		ret = -EIO;
	return ret;
}

void trace_check_print(const struct trace_check_report *r, FILE *out)
{
	static const char *const names[] = {
#define TRACE_PROBLEM_NAME(name, str) str,
		TRACE_PROBLEMS(TRACE_PROBLEM_NAME)
#undef TRACE_PROBLEM_NAME
	};

	/* what was answered, or not, without being a problem */
	const struct {
		uint64_t n;
		const char *label, *what;
	} notes[] = {
		{r->refused, "refused", "answered BUSY or NO_MEMORY (no effect; left out)"},
		{r->unknown_writes, "unknown",
		 "PUTs or DELETEs without a reply (either outcome allowed)"},
		{r->unseen_sent, "unseen",
		 "requests the capture did not see leave; each taken to start with the capture"},
		{r->not_requests, "ignored", "datagrams to the server that are no valid request"},
		{r->unfinished_puts, "ignored", "PUTs with pieces that were never sent"},
	};

	fprintf(out, "requests: %llu in %llu datagrams; replies: %llu datagrams; answered: %llu\n",
		(unsigned long long)r->requests, (unsigned long long)r->request_dgrams,
		(unsigned long long)r->reply_dgrams, (unsigned long long)r->answered);
	if (r->timed)
		fprintf(out,
			"latency: p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us (%llu "
			"answered requests, from the request's last datagram to its reply's)\n",
			r->latency_p50 / 1e3, r->latency_p99 / 1e3, r->latency_p999 / 1e3,
			r->latency_max / 1e3, (unsigned long long)r->timed);
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (notes[i].n)
			fprintf(out, "%s: %llu %s\n", notes[i].label, (unsigned long long)notes[i].n,
				notes[i].what);
	for (int k = 0; k < TRACE_P_COUNT; k++) {
		if (!r->count[k])
			continue;
		fprintf(out, "%s: %llu\n", names[k], (unsigned long long)r->count[k]);
		for (uint64_t i = 0; i < r->count[k] && i < TRACE_LIST_MAX; i++)
			fprintf(out, "  %s\n", r->first[k][i]);
	}
}
