// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fake_server.h"

/* "k" and decimal digits: the key's index */
static uint32_t key_index(const struct xkv_msg *m)
{
	const uint8_t *key = m->key;
	uint32_t index = 0;

	for (uint16_t i = 1; i < m->key_len; i++)
		index = index * 10 + (key[i] - '0');
	return index;
}

static uint64_t now_ns(const struct fake_server *f)
{
	return f->clock ? f->clock->now_ns : bench_now_ns();
}

/* Queues reply datagram m, twice when duplicating. */
static void queue_reply(struct fake_server *f, const struct xkv_msg *m, uint64_t now)
{
	for (int copies = f->faults.duplicate ? 2 : 1; copies > 0; copies--) {
		int len = xkv_encode(f->queue[f->queued].bytes, FAKE_REPLY_BYTES, m);

		cr_assert_gt(len, 0);
		f->queue[f->queued].len = (uint32_t)len;
		f->queue[f->queued++].ready_ns = now + f->faults.delay_ns;
	}
}

/* A GET hit: the key's value in pieces of FAKE_PIECE bytes at most. */
static void reply_value(struct fake_server *f, struct xkv_msg *reply, uint32_t key, uint64_t now)
{
	uint32_t size = workload_value_size(f->w, key), off = 0;
	bool corrupt = f->faults.corrupt_every && ++f->hits % f->faults.corrupt_every == 0;
	uint8_t piece[FAKE_PIECE];

	reply->value_len = size;
	reply->frag = piece;
	do {
		reply->frag_offset = off;
		reply->frag_len = size - off < FAKE_PIECE ? size - off : FAKE_PIECE;
		workload_value(f->w, key, off, reply->frag_len, piece);
		if (corrupt && off + reply->frag_len == size) { /* the last piece's last byte */
			piece[reply->frag_len - 1] ^= 0x20;
			f->corrupted++;
		}
		queue_reply(f, reply, now);
		off += reply->frag_len;
	} while (off < size);
}

static void fake_reply(struct fake_server *f, const struct xkv_msg *req, uint64_t now)
{
	uint32_t key = key_index(req);
	struct xkv_msg reply = {
		.op = req->op | XKV_OP_REPLY,
		.request_id = req->request_id,
		.timestamp = req->timestamp,
	};

	if (f->faults.restamp_every && (f->replied + 1) % f->faults.restamp_every == 0) {
		reply.timestamp++;
		f->restamped++;
	}
	if (req->op == XKV_OP_PUT) {
		f->stored[key] = 1;
		queue_reply(f, &reply, now);
	} else if (!f->stored[key]) {
		reply.status = XKV_S_NOT_FOUND;
		f->not_found++;
		queue_reply(f, &reply, now);
	} else if (req->token != f->faults.token + (f->faults.dest ? f->faults.dest[key] : 0)) {
		reply.status = XKV_S_VALIDATE;
		reply.token = f->faults.token + (f->faults.dest ? f->faults.dest[key] : 0);
		f->validated++;
		queue_reply(f, &reply, now);
	} else {
		reply_value(f, &reply, key, now);
	}
	f->replied++;
}

/*
 * Takes one PUT piece: checks its bytes and that pieces come in order; the last one
 * is the request. Returns whether the PUT is whole.
 */
static bool take_piece(struct fake_server *f, const struct xkv_msg *req)
{
	uint8_t expected[XKV_DGRAM_MAX];

	cr_assert_leq(req->frag_len, sizeof(expected));
	cr_assert_eq(req->value_len, workload_value_size(f->w, key_index(req)));
	workload_value(f->w, key_index(req), req->frag_offset, req->frag_len, expected);
	cr_assert_arr_eq(req->frag, expected, req->frag_len, "PUT piece at %u: wrong bytes",
			 req->frag_offset);
	if (req->frag_offset == 0)
		f->put_received = 0;
	cr_assert_eq(req->frag_offset, f->put_received, "PUT piece at %u, expected %u",
		     req->frag_offset, f->put_received);
	f->put_received += req->frag_len;
	if (req->value_len > req->frag_len)
		f->pieces++;
	return f->put_received == req->value_len;
}

static void refuse_piece(struct fake_server *f, const struct xkv_msg *req, uint64_t now)
{
	struct xkv_msg busy = {
		.op = XKV_OP_PUT | XKV_OP_REPLY,
		.status = XKV_S_BUSY,
		.request_id = req->request_id,
		.timestamp = req->timestamp,
	};

	f->refused_pieces++;
	if (req->frag_offset)
		return;
	f->refused++;
	queue_reply(f, &busy, now);
}

static int fake_send(struct transport *t, const struct bench_dgram *d, unsigned n)
{
	struct fake_server *f = (struct fake_server *)t;
	uint64_t now;

	if (f->faults.stall_after && f->requests >= f->faults.stall_after) {
		f->faults.stall_after = 0;
		cr_assert_not_null(f->clock, "a stall needs a fake clock");
		f->clock->now_ns += f->faults.stall_ns;
	}
	now = now_ns(f);
	for (unsigned i = 0; i < n; i++) {
		struct xkv_msg req;

		if (f->queued + 2 * FAKE_PIECES_MAX > FAKE_QUEUE ||
		    (f->faults.send_max && i == f->faults.send_max))
			return (int)i; /* full, as a socket can be */
		cr_assert_eq(xkv_decode(d[i].data, d[i].len, &req), XKV_R_OK);
		if (f->faults.dest)
			cr_assert_eq(d[i].dest, f->faults.dest[key_index(&req)],
				     "a datagram to server %u, its key's is %u", d[i].dest,
				     f->faults.dest[key_index(&req)]);
		if (req.op == XKV_OP_PUT && req.frag_len < req.value_len &&
		    f->faults.refuse_pieces) {
			refuse_piece(f, &req, now);
			continue;
		}
		if (req.op == XKV_OP_PUT && !take_piece(f, &req))
			continue;
		f->requests++;
		if (f->faults.drop_every && f->requests % f->faults.drop_every == 0) {
			f->dropped++;
			continue;
		}
		fake_reply(f, &req, now);
	}
	return (int)n;
}

/* Replies are queued in the order they become ready (the delay is the same for all). */
static unsigned ready(const struct fake_server *f, unsigned n, uint64_t now)
{
	unsigned got = 0;

	while (got < n && got < f->queued && f->queue[got].ready_ns <= now)
		got++;
	return got;
}

static int fake_recv(struct transport *t, struct bench_dgram *d, unsigned n, uint64_t timeout_ns)
{
	struct fake_server *f = (struct fake_server *)t;
	uint64_t now = now_ns(f), until = now + timeout_ns;
	unsigned got = ready(f, n, now);

	if (!got && !f->queued && timeout_ns > 0)
		f->idle_waits++;
	if (!got && !timeout_ns)
		f->empty_polls++;
	/* on the fake clock, wait for the first reply or the timeout, as ppoll(2) would */
	if (!got && f->clock && timeout_ns > 0) {
		if (f->queued && f->queue[0].ready_ns < until)
			until = f->queue[0].ready_ns;
		if (f->waits && f->nwaits < f->waits_cap)
			f->waits[f->nwaits++] = (struct fake_wait){now, until};
		f->asleep_ns += until - now;
		f->clock->now_ns = until;
		got = ready(f, n, until);
	}
	for (unsigned i = 0; i < got; i++) {
		unsigned from = f->faults.reverse ? got - 1 - i : i;

		f->out[i] = f->queue[from];
		d[i] = (struct bench_dgram){.data = f->out[i].bytes, .len = f->out[i].len};
	}
	memmove(f->queue, f->queue + got, (f->queued - got) * sizeof(f->queue[0]));
	f->queued -= got;
	return (int)got;
}

static void fake_close(struct transport *t)
{
	(void)t;
}

static const struct transport_ops fake_ops = {fake_send, fake_recv, fake_close};

struct fake_server *fake_server_new(const struct workload *w, uint32_t keys)
{
	struct fake_server *f = calloc(1, sizeof(*f));

	cr_assert_not_null(f);
	f->base.ops = &fake_ops;
	f->w = w;
	f->stored = calloc(keys, 1);
	cr_assert_not_null(f->stored);
	return f;
}

void fake_server_free(struct fake_server *f)
{
	free(f->stored);
	free(f);
}
