// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "closed_loop.h"

#define NS_PER_MS 1000000ULL

static void encode(struct closed_loop *l, unsigned i, uint8_t op, uint32_t key)
{
	const struct workload_config *cfg = &l->workload->cfg;
	struct loop_slot *s = &l->slots[i];
	uint8_t *key_at = s->dgram + sizeof(struct xkv_hdr);
	struct xkv_msg msg = {
		.op = op,
		.key_len = (uint16_t)cfg->key_size,
		/* the next generation of this slot: the low bits still name it */
		.request_id = s->request_id + l->slot_mask + 1,
		.value_len = op == XKV_OP_PUT ? cfg->value_size : 0,
		.frag_len = op == XKV_OP_PUT ? cfg->value_size : 0,
		.timestamp = bench_now_ns(),
	};

	workload_key(l->workload, key, key_at);
	if (op == XKV_OP_PUT)
		workload_value(l->workload, key, key_at + cfg->key_size);
	/* closed_loop_init encoded both kinds once: with these lengths it cannot fail */
	s->len = (uint32_t)xkv_encode_hdr(s->dgram, &msg);
	s->request_id = msg.request_id;
	s->timestamp = msg.timestamp;
	s->op = op;
	s->key = key;
	l->ready[l->nready++] = i;
}

/* Puts the phase's next request in slot i; leaves the slot idle once loading is done. */
static void next_request(struct closed_loop *l, unsigned i)
{
	uint8_t op;
	uint32_t key;

	if (l->phase == LOOP_MEASURE) {
		workload_next(l->workload, &l->rng, &op, &key);
	} else if (l->load_next < l->load_end) {
		op = XKV_OP_PUT;
		key = l->load_next;
		l->load_next += l->load_step;
		l->slots[i].attempts = 0;
	} else {
		return;
	}
	encode(l, i, op, key);
}

static void answer(struct closed_loop *l, unsigned i, enum workload_outcome outcome,
		   uint64_t latency_ns)
{
	struct op_stats *os = &l->stats->op[bench_op_of(l->slots[i].op)];

	switch (outcome) {
	case WORKLOAD_OK:
		os->ok++;
		lat_hist_record(&os->latency, latency_ns);
		break;
	case WORKLOAD_MISS:
		os->misses++;
		lat_hist_record(&os->latency, latency_ns);
		break;
	case WORKLOAD_ERROR:
		os->errors++;
		break;
	}
}

static void take_reply(struct closed_loop *l, const struct bench_dgram *d, uint64_t now)
{
	enum workload_outcome outcome;
	struct xkv_msg reply;
	struct loop_slot *s;
	unsigned i;

	if (xkv_decode(d->data, d->len, &reply) != XKV_R_OK || !(reply.op & XKV_OP_REPLY)) {
		l->stats->invalid++;
		return;
	}
	i = reply.request_id & l->slot_mask;
	if (i >= l->depth) {
		l->stats->invalid++;
		return;
	}
	s = &l->slots[i];
	if (!s->in_flight || s->request_id != reply.request_id) {
		l->stats->late++;
		return;
	}
	s->in_flight = 0;
	l->in_flight--;
	/* our id with another request's timestamp is someone else's answer */
	outcome = reply.timestamp != s->timestamp
			  ? WORKLOAD_ERROR
			  : workload_check_reply(l->workload, s->op, s->key, &reply);
	answer(l, i, outcome, now - s->sent_ns);
	next_request(l, i);
}

static void expire(struct closed_loop *l, uint64_t now)
{
	for (unsigned i = 0; i < l->depth; i++) {
		struct loop_slot *s = &l->slots[i];

		if (!s->in_flight || now - s->sent_ns < l->timeout_ns)
			continue;
		s->in_flight = 0;
		l->in_flight--;
		if (l->phase == LOOP_LOAD && ++s->attempts < LOOP_LOAD_ATTEMPTS) {
			encode(l, i, s->op, s->key);
			continue;
		}
		l->stats->op[bench_op_of(s->op)].lost++;
		next_request(l, i);
	}
}

/* Sends every ready request in one batch; what the transport did not take waits. */
static int send_ready(struct closed_loop *l)
{
	unsigned n = l->nready;
	uint64_t now;
	int sent;

	for (unsigned i = 0; i < n; i++) {
		const struct loop_slot *s = &l->slots[l->ready[i]];

		l->tx[i] = (struct bench_dgram){.data = s->dgram, .len = s->len};
	}
	now = bench_now_ns();
	sent = transport_send(l->transport, l->tx, n);
	if (sent < 0)
		return sent;
	for (int i = 0; i < sent; i++) {
		struct loop_slot *s = &l->slots[l->ready[i]];

		s->in_flight = 1;
		s->sent_ns = now;
	}
	l->in_flight += (unsigned)sent;
	l->nready = n - (unsigned)sent;
	memmove(l->ready, l->ready + sent, l->nready * sizeof(*l->ready));
	return 0;
}

/* How long to wait for replies: until the next expiry check or the deadline. */
static int wait_ms(const struct closed_loop *l, uint64_t now, uint64_t deadline)
{
	uint64_t wait_ns = l->expiry_period_ns;

	if (l->nready) /* the transport was full: try again soon */
		wait_ns = NS_PER_MS;
	if (deadline - now < wait_ns)
		wait_ns = deadline - now;
	return (int)((wait_ns + NS_PER_MS - 1) / NS_PER_MS);
}

static void publish_progress(struct closed_loop *l)
{
	const struct op_stats *op = l->stats->op;
	uint64_t answered = op[BENCH_GET].ok + op[BENCH_GET].misses + op[BENCH_PUT].ok +
			    op[BENCH_PUT].misses;

	atomic_store_explicit(&l->answered, answered, memory_order_relaxed);
}

static int run(struct closed_loop *l, enum loop_phase phase, struct bench_stats *stats)
{
	uint64_t now = bench_now_ns(), next_expiry = now + l->expiry_period_ns;
	uint64_t last_reply = now;

	/* whatever an earlier phase left in flight is forgotten; its replies will be late */
	l->phase = phase;
	l->stats = stats;
	bench_stats_init(stats);
	atomic_store_explicit(&l->answered, 0, memory_order_relaxed);
	l->nready = 0;
	l->in_flight = 0;
	for (unsigned i = 0; i < l->depth; i++) {
		l->slots[i].in_flight = 0;
		next_request(l, i);
	}

	for (;;) {
		uint64_t deadline = atomic_load_explicit(l->deadline_ns, memory_order_relaxed);
		int n, err;

		if (now >= deadline)
			return phase == LOOP_LOAD ? -EINTR : 0;
		if (!l->nready && !l->in_flight)
			return 0; /* loading is done; measuring always has a request ready */
		if (l->nready) {
			err = send_ready(l);
			if (err)
				return err;
		}
		n = transport_recv(l->transport, l->rx, l->depth, wait_ms(l, now, deadline));
		if (n < 0)
			return n;
		now = bench_now_ns();
		for (int i = 0; i < n; i++)
			take_reply(l, &l->rx[i], now);
		if (n) {
			last_reply = now;
			publish_progress(l);
		}
		if (now >= next_expiry) {
			expire(l, now);
			next_expiry = now + l->expiry_period_ns;
		}
		if (phase == LOOP_LOAD && now - last_reply > LOOP_LOAD_STALL_NS)
			return -ETIMEDOUT;
	}
}

int closed_loop_load(struct closed_loop *l, uint32_t first, uint32_t step, uint32_t end,
		     struct bench_stats *stats)
{
	l->load_next = first;
	l->load_step = step;
	l->load_end = end;
	return run(l, LOOP_LOAD, stats);
}

int closed_loop_measure(struct closed_loop *l, struct bench_stats *stats)
{
	return run(l, LOOP_MEASURE, stats);
}

int closed_loop_init(struct closed_loop *l, struct transport *t, const struct workload *w,
		     const struct loop_config *cfg)
{
	size_t dgram_cap = sizeof(struct xkv_hdr) + w->cfg.key_size + w->cfg.value_size;
	struct xkv_msg put = {.op = XKV_OP_PUT, .key_len = (uint16_t)w->cfg.key_size,
			      .value_len = w->cfg.value_size, .frag_len = w->cfg.value_size};
	struct xkv_msg get = {.op = XKV_OP_GET, .key_len = (uint16_t)w->cfg.key_size};
	uint64_t expiry_period_ns = cfg->timeout_ns / 8;
	unsigned bits = 0;

	if (cfg->depth < 1 || cfg->depth > LOOP_DEPTH_MAX || !cfg->timeout_ns)
		return -EINVAL;
	while ((1u << bits) < cfg->depth)
		bits++;
	*l = (struct closed_loop){
		.transport = t,
		.workload = w,
		.deadline_ns = cfg->deadline_ns,
		.timeout_ns = cfg->timeout_ns,
		/* a lost request is noticed at most an eighth of the timeout late */
		.expiry_period_ns = expiry_period_ns > NS_PER_MS ? expiry_period_ns : NS_PER_MS,
		.depth = cfg->depth,
		.slot_mask = (1u << bits) - 1,
	};
	workload_rng_seed(&l->rng, cfg->seed, cfg->stream);
	l->slots = calloc(cfg->depth, sizeof(*l->slots));
	l->dgrams = malloc(cfg->depth * dgram_cap);
	l->ready = calloc(cfg->depth, sizeof(*l->ready));
	l->tx = calloc(cfg->depth, sizeof(*l->tx));
	l->rx = calloc(cfg->depth, sizeof(*l->rx));
	if (!l->slots || !l->dgrams || !l->ready || !l->tx || !l->rx) {
		closed_loop_free(l);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->depth; i++) {
		l->slots[i].dgram = l->dgrams + i * dgram_cap;
		l->slots[i].request_id = i;
	}
	if (xkv_encode_hdr(l->dgrams, &put) < 0 || xkv_encode_hdr(l->dgrams, &get) < 0) {
		closed_loop_free(l);
		return -EINVAL;
	}
	return 0;
}

void closed_loop_free(struct closed_loop *l)
{
	free(l->slots);
	free(l->dgrams);
	free(l->ready);
	free(l->tx);
	free(l->rx);
	*l = (struct closed_loop){0};
}
