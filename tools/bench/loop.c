// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arrivals.h"
#include "clock.h"
#include "loop.h"

#define NS_PER_MS 1000000ULL

_Static_assert(LOOP_DEPTH_MAX <= UINT16_MAX + 1, "memcached's 16-bit ids must name every slot");

static void encode(struct loop *l, unsigned i, uint8_t op, uint32_t key)
{
	const struct workload_config *cfg = &l->workload->cfg;
	struct loop_slot *s = &l->slots[i];
	uint8_t key_bytes[XKV_KEY_MAX], value[WORKLOAD_VALUE_MAX];
	struct bench_request req = {
		.op = op,
		/* the next generation of this slot: the low bits still name it */
		.request_id = s->request_id + l->slot_mask + 1,
		.timestamp = bench_now_ns(),
		.key = key_bytes,
		.key_len = cfg->key_size,
		.value_len = op == XKV_OP_PUT ? cfg->value_size : 0,
		.frag_len = op == XKV_OP_PUT ? cfg->value_size : 0,
		.frag = value,
	};

	workload_key(l->workload, key, key_bytes);
	if (op == XKV_OP_PUT)
		workload_value(l->workload, key, value);
	/* loop_init encoded both kinds once: with these lengths it cannot fail */
	s->len = (uint32_t)l->proto->encode(s->dgram, LOOP_DGRAM_CAP, &req);
	s->request_id = req.request_id;
	s->timestamp = req.timestamp;
	s->op = op;
	s->key = key;
	l->ready[l->nready++] = i;
}

/* Puts the phase's next request in slot i; leaves the slot idle once loading is done. */
static void next_request(struct loop *l, unsigned i)
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

/* Slot i's request is done: the closed loop refills it at once, the open loop at an arrival. */
static void release(struct loop *l, unsigned i)
{
	if (l->open)
		l->idle[l->nidle++] = i;
	else
		next_request(l, i);
}

static void answer(struct loop *l, unsigned i, enum workload_outcome outcome, uint64_t latency_ns)
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

static void take_reply(struct loop *l, const struct bench_dgram *d, uint64_t now)
{
	enum workload_outcome outcome;
	struct xkv_msg reply;
	struct loop_slot *s;
	unsigned i;

	if (l->proto->parse(d->data, d->len, &reply)) {
		l->stats->invalid++;
		return;
	}
	i = reply.request_id & l->slot_mask;
	if (i >= l->depth) {
		l->stats->invalid++;
		return;
	}
	s = &l->slots[i];
	if (!s->in_flight || (s->request_id & l->proto->id_mask) != reply.request_id) {
		l->stats->late++;
		return;
	}
	s->in_flight = 0;
	l->in_flight--;
	/* our id with another request's timestamp is someone else's answer */
	outcome = l->proto->echoes_timestamp && reply.timestamp != s->timestamp
			  ? WORKLOAD_ERROR
			  : workload_check_reply(l->workload, s->op, s->key, &reply);
	answer(l, i, outcome, now - s->intended_ns);
	release(l, i);
}

static void expire(struct loop *l, uint64_t now)
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
		release(l, i);
	}
}

/* Sends every ready request in one batch; what the transport did not take waits. */
static int send_ready(struct loop *l)
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
		if (l->open) /* admitted when due, so never early */
			lat_hist_record(&l->stats->send_lag, now - s->intended_ns);
		else
			s->intended_ns = now;
	}
	l->in_flight += (unsigned)sent;
	l->nready = n - (unsigned)sent;
	memmove(l->ready, l->ready + sent, l->nready * sizeof(*l->ready));
	return 0;
}

static void publish_progress(struct loop *l)
{
	const struct op_stats *op = l->stats->op;
	uint64_t answered = op[BENCH_GET].ok + op[BENCH_GET].misses + op[BENCH_PUT].ok +
			    op[BENCH_PUT].misses;

	atomic_store_explicit(&l->answered, answered, memory_order_relaxed);
}

/* Takes what the transport has within timeout_ms, then expires lost requests when due. */
static int receive(struct loop *l, int timeout_ms, uint64_t *now, uint64_t *next_expiry)
{
	int n = transport_recv(l->transport, l->rx, l->depth, timeout_ms);

	if (n < 0)
		return n;
	*now = bench_now_ns();
	for (int i = 0; i < n; i++)
		take_reply(l, &l->rx[i], *now);
	if (n)
		publish_progress(l);
	if (*now >= *next_expiry) {
		expire(l, *now);
		*next_expiry = *now + l->expiry_period_ns;
	}
	return n;
}

/* Whatever an earlier phase left in flight is forgotten; its replies will be late. */
static void begin(struct loop *l, enum loop_phase phase, bool open, struct bench_stats *stats)
{
	l->phase = phase;
	l->open = open;
	l->stats = stats;
	bench_stats_init(stats);
	atomic_store_explicit(&l->answered, 0, memory_order_relaxed);
	l->nready = 0;
	l->in_flight = 0;
	l->nidle = 0;
	l->starved_at = 0;
	for (unsigned i = 0; i < l->depth; i++) {
		l->slots[i].in_flight = 0;
		release(l, i);
	}
}

/* Closed loop: how long to wait for replies, until the next expiry check or the deadline. */
static int closed_wait_ms(const struct loop *l, uint64_t now, uint64_t deadline)
{
	uint64_t wait_ns = l->expiry_period_ns;

	if (l->nready) /* the transport was full: try again soon */
		wait_ns = NS_PER_MS;
	if (deadline - now < wait_ns)
		wait_ns = deadline - now;
	return (int)((wait_ns + NS_PER_MS - 1) / NS_PER_MS);
}

static int run_closed(struct loop *l, enum loop_phase phase, struct bench_stats *stats)
{
	uint64_t now = bench_now_ns(), next_expiry = now + l->expiry_period_ns;
	uint64_t last_reply = now;

	begin(l, phase, false, stats);
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
		n = receive(l, closed_wait_ms(l, now, deadline), &now, &next_expiry);
		if (n < 0)
			return n;
		if (n)
			last_reply = now;
		if (phase == LOOP_LOAD && now - last_reply > LOOP_LOAD_STALL_NS)
			return -ETIMEDOUT;
	}
}

/* Open loop: every arrival due by now takes a free slot, in order of intended time. */
static void admit(struct loop *l, struct arrivals *a, uint64_t now)
{
	for (; arrivals_next(a) <= now; arrivals_advance(a)) {
		struct loop_slot *s;
		uint8_t op;
		uint32_t key;

		if (!l->nidle) {
			l->starved_at = now;
			return;
		}
		s = &l->slots[l->idle[--l->nidle]];
		workload_next(l->workload, &l->rng, &op, &key);
		encode(l, (unsigned)(s - l->slots), op, key);
		s->intended_ns = arrivals_next(a);
		l->stats->scheduled++;
		if (s->intended_ns <= l->starved_at)
			l->stats->slot_waits++;
	}
}

/*
 * Open loop: how long to wait for replies. poll(2) sleeps in whole milliseconds and
 * oversleeps, so within 2 ms of the next arrival (or the deadline, or an expiry
 * check) the loop spins instead.
 */
static int open_wait_ms(const struct loop *l, uint64_t now, uint64_t until)
{
	if (l->nready || until <= now + 2 * NS_PER_MS)
		return 0;
	return (int)((until - now) / NS_PER_MS) - 1;
}

static int run_open(struct loop *l, double rate_per_s, struct bench_stats *stats)
{
	uint64_t now = bench_now_ns(), next_expiry = now + l->expiry_period_ns, oldest;
	struct arrivals a;

	begin(l, LOOP_MEASURE, true, stats);
	arrivals_init(&a, rate_per_s, l->seed, l->stream, now);
	for (;;) {
		uint64_t until = atomic_load_explicit(l->deadline_ns, memory_order_relaxed);
		int n, err;

		if (now >= until)
			break;
		admit(l, &a, now);
		if (l->nready) {
			err = send_ready(l);
			if (err)
				return err;
		}
		if (arrivals_next(&a) < until)
			until = arrivals_next(&a);
		if (next_expiry < until)
			until = next_expiry;
		n = receive(l, open_wait_ms(l, now, until), &now, &next_expiry);
		if (n < 0)
			return n;
	}
	/* what was due and never went out: the generator, or its slots, fell behind */
	oldest = l->nready ? l->slots[l->ready[0]].intended_ns : arrivals_next(&a);
	stats->behind_ns = oldest < now ? now - oldest : 0;
	stats->unsent = arrivals_skip_until(&a, now);
	stats->scheduled += stats->unsent;
	stats->unsent += l->nready;
	return 0;
}

int loop_load(struct loop *l, uint32_t first, uint32_t step, uint32_t end,
	      struct bench_stats *stats)
{
	l->load_next = first;
	l->load_step = step;
	l->load_end = end;
	return run_closed(l, LOOP_LOAD, stats);
}

int loop_measure(struct loop *l, double rate_per_s, struct bench_stats *stats)
{
	if (rate_per_s > 0)
		return run_open(l, rate_per_s, stats);
	return run_closed(l, LOOP_MEASURE, stats);
}

int loop_init(struct loop *l, struct transport *t, const struct workload *w,
	      const struct loop_config *cfg)
{
	const struct bench_proto *proto = cfg->proto ? cfg->proto : &bench_proto_xkv;
	uint8_t key[XKV_KEY_MAX], value[WORKLOAD_VALUE_MAX], dgram[LOOP_DGRAM_CAP];
	struct bench_request put = {.op = XKV_OP_PUT, .key = key, .key_len = w->cfg.key_size,
				    .value_len = w->cfg.value_size,
				    .frag_len = w->cfg.value_size, .frag = value};
	struct bench_request get = {.op = XKV_OP_GET, .key = key, .key_len = w->cfg.key_size};
	uint64_t expiry_period_ns = cfg->timeout_ns / 8;
	unsigned bits = 0;

	if (cfg->depth < 1 || cfg->depth > LOOP_DEPTH_MAX || !cfg->timeout_ns)
		return -EINVAL;
	while ((1u << bits) < cfg->depth)
		bits++;
	*l = (struct loop){
		.transport = t,
		.workload = w,
		.proto = proto,
		.seed = cfg->seed,
		.stream = cfg->stream,
		.deadline_ns = cfg->deadline_ns,
		.timeout_ns = cfg->timeout_ns,
		/* a lost request is noticed at most an eighth of the timeout late */
		.expiry_period_ns = expiry_period_ns > NS_PER_MS ? expiry_period_ns : NS_PER_MS,
		.depth = cfg->depth,
		.slot_mask = (1u << bits) - 1,
	};
	workload_rng_seed(&l->rng, cfg->seed, cfg->stream);
	l->slots = calloc(cfg->depth, sizeof(*l->slots));
	l->dgrams = malloc(cfg->depth * LOOP_DGRAM_CAP);
	l->ready = calloc(cfg->depth, sizeof(*l->ready));
	l->idle = calloc(cfg->depth, sizeof(*l->idle));
	l->tx = calloc(cfg->depth, sizeof(*l->tx));
	l->rx = calloc(cfg->depth, sizeof(*l->rx));
	if (!l->slots || !l->dgrams || !l->ready || !l->idle || !l->tx || !l->rx) {
		loop_free(l);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->depth; i++) {
		l->slots[i].dgram = l->dgrams + i * LOOP_DGRAM_CAP;
		l->slots[i].request_id = i;
	}
	workload_key(w, 0, key);
	workload_value(w, 0, value);
	if (proto->encode(dgram, sizeof(dgram), &put) < 0 ||
	    proto->encode(dgram, sizeof(dgram), &get) < 0) {
		loop_free(l);
		return -EINVAL;
	}
	return 0;
}

void loop_free(struct loop *l)
{
	free(l->slots);
	free(l->dgrams);
	free(l->ready);
	free(l->idle);
	free(l->tx);
	free(l->rx);
	*l = (struct loop){0};
}
