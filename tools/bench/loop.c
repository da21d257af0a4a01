// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arrivals.h"
#include "loop.h"

#define NS_PER_MS 1000000ULL

_Static_assert(LOOP_DEPTH_MAX <= UINT16_MAX + 1, "memcached's 16-bit ids must name every slot");

/* Writes piece `piece` of slot s's request into buf; returns its length or -errno. */
static int encode_piece(const struct loop *l, const struct loop_slot *s, uint32_t piece,
			uint8_t *buf)
{
	const struct workload *w = l->workload;
	uint32_t offset = piece * l->piece_max, left = s->value_size - offset;
	uint8_t key[XKV_KEY_MAX], value[LOOP_DGRAM_CAP];
	struct bench_request req = {
		.op = s->op,
		.request_id = s->request_id,
		.timestamp = s->timestamp,
		.token = l->tokens[s->dest],
		.key = key,
		.key_len = w->cfg.key_size,
		.value_len = s->value_size,
		.frag_offset = offset,
		.frag_len = left < l->piece_max ? left : l->piece_max,
		.frag = value,
	};

	workload_key(w, s->key, key);
	workload_value(w, s->key, offset, req.frag_len, value);
	return l->proto->encode(buf, LOOP_DGRAM_CAP, &req);
}

/* Puts request op on key in slot i, ready to go: its id, timestamp and pieces. */
static void encode(struct loop *l, unsigned i, uint8_t op, uint32_t key)
{
	struct loop_slot *s = &l->slots[i];
	uint32_t size = workload_value_size(l->workload, key);

	s->request_id += l->slot_mask + 1; /* the next generation: the low bits still name it */
	s->timestamp = bench_clock_now(l->clock);
	s->op = op;
	s->key = key;
	s->dest = l->dest ? l->dest[key] : 0;
	s->size_class = (uint8_t)workload_size_class(size);
	s->value_size = op == XKV_OP_PUT ? size : 0;
	s->pieces = s->value_size > l->piece_max ? (s->value_size - 1) / l->piece_max + 1 : 1;
	s->pieces_sent = 0;
	s->received = 0;
	/* loop_init encoded the largest request of each kind: this cannot fail */
	if (s->pieces == 1) /* else piece by piece as they go out */
		s->len = (uint32_t)encode_piece(l, s, 0, s->dgram);
	l->ready[l->nready++] = i;
}

static uint64_t elapsed(const struct loop *l, uint64_t t)
{
	return t > l->start_ns ? t - l->start_ns : 0;
}

/* The probability that a request due at `due` is for a large value. */
static double large_p(const struct loop *l, uint64_t due)
{
	if (!l->schedule)
		return l->workload->large_p;
	return large_schedule_pct(l->schedule, elapsed(l, due)) / 100;
}

/* Puts the phase's next request in slot i; leaves the slot idle once loading is done. */
static void next_request(struct loop *l, unsigned i)
{
	uint8_t op;
	uint32_t key;

	if (l->phase == LOOP_MEASURE) {
		workload_next_p(l->workload, &l->rng, large_p(l, l->now_ns), elapsed(l, l->now_ns),
				&op, &key);
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

static void count(struct op_stats *os, enum workload_outcome outcome, uint64_t latency_ns)
{
	switch (outcome) {
	case WORKLOAD_OK:
		os->ok++;
		hist_record(&os->latency, latency_ns);
		break;
	case WORKLOAD_MISS:
		os->misses++;
		hist_record(&os->latency, latency_ns);
		break;
	case WORKLOAD_ERROR:
		os->errors++;
		break;
	case WORKLOAD_PARTIAL:
		break;
	}
}

/* The measured second at now, or NULL when nobody asked for them. */
static struct interval *interval_now(struct loop *l, uint64_t now)
{
	if (!l->intervals || l->phase != LOOP_MEASURE)
		return NULL;
	return interval_at(l->intervals, elapsed(l, now));
}

/* Counts slot s's answer under its operation and its size class, and in its second. */
static void answer(struct loop *l, const struct loop_slot *s, enum workload_outcome outcome,
		   uint64_t latency_ns, uint64_t now)
{
	struct interval *iv = interval_now(l, now);

	count(&l->stats->op[bench_op_of(s->op)], outcome, latency_ns);
	count(&l->stats->size_class[s->size_class], outcome, latency_ns);
	if (iv && (outcome == WORKLOAD_OK || outcome == WORKLOAD_MISS)) {
		iv->answered++;
		hist_record(s->size_class == WORKLOAD_LARGE ? &iv->large : &iv->small, latency_ns);
	}
}

/* Whether slot i holds a PUT whose pieces are going out: the first ready slot, part sent. */
static bool sending(const struct loop *l, unsigned i)
{
	const struct loop_slot *s = &l->slots[i];

	return l->nready && l->ready[0] == i && s->pieces_sent && s->pieces_sent < s->pieces;
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
	if ((s->request_id & l->proto->id_mask) != reply.request_id ||
	    (!s->in_flight && !sending(l, i))) {
		if (!reply.frag_offset) /* a late reply in pieces counts once */
			l->stats->late++;
		return;
	}
	/* the token of the server the request went to, for every request to it */
	if (reply.token)
		l->tokens[s->dest] = reply.token;
	/* our id with another request's timestamp is someone else's answer */
	outcome = l->proto->echoes_timestamp && reply.timestamp != s->timestamp
			  ? WORKLOAD_ERROR
			  : workload_check_reply(l->workload, s->op, s->key, &reply, &s->received);
	if (outcome == WORKLOAD_PARTIAL)
		return;
	if (reply.status == XKV_S_VALIDATE && s->in_flight) {
		/* not an answer: the same request again, with the token now held, under a new id */
		l->stats->validations++;
		s->in_flight = 0;
		l->in_flight--;
		encode(l, i, s->op, s->key);
		return;
	}
	if (s->in_flight) {
		s->in_flight = 0;
		l->in_flight--;
	} else { /* answered (refused) before its last piece went: the rest stays unsent */
		s->pieces_sent = s->pieces;
		l->nready--;
		memmove(l->ready, l->ready + 1, l->nready * sizeof(*l->ready));
	}
	answer(l, s, outcome, now - s->intended_ns, now);
	release(l, i);
}

static void expire(struct loop *l, uint64_t now)
{
	struct interval *iv = interval_now(l, now);

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
		l->stats->size_class[s->size_class].lost++;
		if (iv)
			iv->lost++;
		release(l, i);
	}
}

/*
 * Puts ready requests in l->tx, oldest first: one datagram each, or the next pieces
 * of a value, LOOP_PIECE_BURST in all. A request whose pieces do not all fit ends
 * the batch, so that requests go out whole and in order. Returns the datagrams.
 */
static unsigned batch_ready(struct loop *l)
{
	unsigned n = 0, burst = 0;

	for (unsigned r = 0; r < l->nready; r++) {
		unsigned i = l->ready[r];
		const struct loop_slot *s = &l->slots[i];
		uint32_t piece = s->pieces_sent;

		if (s->pieces == 1) {
			l->tx_slot[n] = i;
			l->tx[n++] = (struct bench_dgram){.data = s->dgram, .len = s->len,
							  .dest = s->dest};
			continue;
		}
		for (; piece < s->pieces && burst < LOOP_PIECE_BURST; piece++, burst++) {
			uint8_t *buf = l->piece_dgrams + burst * LOOP_DGRAM_CAP;

			l->tx_slot[n] = i;
			/* loop_init encoded the largest request's pieces: this cannot fail */
			l->tx[n++] = (struct bench_dgram){
				.data = buf, .len = (uint32_t)encode_piece(l, s, piece, buf),
				.dest = s->dest};
		}
		if (piece < s->pieces)
			break;
	}
	return n;
}

/* A request's first datagram is out: latency counts from its intended time. */
static void first_sent(struct loop *l, struct loop_slot *s, uint64_t now)
{
	if (l->open) /* admitted when due, so never early */
		hist_record(&l->stats->send_lag, now - s->intended_ns);
	else
		s->intended_ns = now;
}

/* Sends a batch of ready requests; what the transport did not take waits. */
static int send_ready(struct loop *l)
{
	unsigned n = batch_ready(l), whole = 0;
	uint64_t now = bench_clock_now(l->clock);
	int sent = transport_send(l->transport, l->tx, n);

	if (sent < 0)
		return sent;
	l->tx_full = !sent && n; /* took some: try the rest at once; none: wait for room */
	/* the transport took a prefix: whole requests first, then perhaps part of one */
	for (int k = 0; k < sent; k++) {
		struct loop_slot *s = &l->slots[l->tx_slot[k]];

		if (!s->pieces_sent++)
			first_sent(l, s, now);
		if (s->pieces_sent < s->pieces)
			continue;
		s->in_flight = 1;
		s->sent_ns = now; /* the timeout counts from the last piece */
		whole++;
	}
	l->in_flight += whole;
	l->nready -= whole;
	memmove(l->ready, l->ready + whole, l->nready * sizeof(*l->ready));
	return 0;
}

static void publish_progress(struct loop *l)
{
	const struct op_stats *op = l->stats->op;
	uint64_t answered = op[BENCH_GET].ok + op[BENCH_GET].misses + op[BENCH_PUT].ok +
			    op[BENCH_PUT].misses;

	atomic_store_explicit(&l->answered, answered, memory_order_relaxed);
}

/* Takes what the transport has within timeout_ns, then expires lost requests when due. */
static int receive(struct loop *l, uint64_t timeout_ns, uint64_t *now, uint64_t *next_expiry)
{
	int n = transport_recv(l->transport, l->rx, l->depth, timeout_ns);

	if (n < 0)
		return n;
	*now = bench_clock_now(l->clock);
	l->now_ns = *now;
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

/*
 * Whatever an earlier phase left in flight is forgotten; its replies will be late.
 * The phase starts at now.
 */
static void begin(struct loop *l, enum loop_phase phase, bool open, struct bench_stats *stats,
		  uint64_t now)
{
	l->phase = phase;
	l->start_ns = now;
	l->now_ns = now;
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
static uint64_t closed_wait_ns(const struct loop *l, uint64_t now, uint64_t deadline)
{
	uint64_t wait_ns = l->expiry_period_ns;

	if (l->nready) /* pieces to send: at once; the transport was full: soon */
		wait_ns = l->tx_full ? NS_PER_MS : 0;
	if (deadline - now < wait_ns)
		wait_ns = deadline - now;
	return wait_ns;
}

static int run_closed(struct loop *l, enum loop_phase phase, struct bench_stats *stats)
{
	uint64_t now = bench_clock_now(l->clock), next_expiry = now + l->expiry_period_ns;
	uint64_t last_reply = now;

	begin(l, phase, false, stats, now);
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
		n = receive(l, closed_wait_ns(l, now, deadline), &now, &next_expiry);
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
		/* by the intended time: the seed, not the machine's timing, picks the size */
		workload_next_p(l->workload, &l->rng, large_p(l, arrivals_next(a)),
				elapsed(l, arrivals_next(a)), &op, &key);
		encode(l, (unsigned)(s - l->slots), op, key);
		s->intended_ns = arrivals_next(a);
		l->stats->scheduled++;
		if (s->intended_ns <= l->starved_at)
			l->stats->slot_waits++;
	}
}

/*
 * Open loop: how long to wait for replies (a reply ends the wait at once): until
 * LOOP_WAKE_EARLY_NS before the next arrival, then it spins to the arrival; or until
 * the deadline or the next expiry check, where a late wakeup costs nothing.
 */
static uint64_t open_wait_ns(const struct loop *l, uint64_t now, uint64_t arrival, uint64_t until)
{
	if (l->nready)
		return 0;
	if (arrival < until + LOOP_WAKE_EARLY_NS)
		until = arrival > LOOP_WAKE_EARLY_NS ? arrival - LOOP_WAKE_EARLY_NS : 0;
	return until > now ? until - now : 0;
}

static int run_open(struct loop *l, double rate_per_s, struct bench_stats *stats)
{
	uint64_t now = bench_clock_now(l->clock), next_expiry = now + l->expiry_period_ns, oldest;
	struct arrivals a;

	begin(l, LOOP_MEASURE, true, stats, now);
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
		if (next_expiry < until)
			until = next_expiry;
		n = receive(l, open_wait_ns(l, now, arrivals_next(&a), until), &now, &next_expiry);
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

/* Whether the largest request of w encodes, piece by piece: 0 or -EINVAL. */
static int check_encodes(const struct loop *l, const struct workload *w)
{
	struct loop_slot s = {.op = XKV_OP_PUT, .value_size = workload_value_size_max(&w->cfg)};
	uint8_t dgram[LOOP_DGRAM_CAP];

	s.pieces = s.value_size > l->piece_max ? (s.value_size - 1) / l->piece_max + 1 : 1;
	if (encode_piece(l, &s, 0, dgram) < 0 || encode_piece(l, &s, s.pieces - 1, dgram) < 0)
		return -EINVAL;
	s = (struct loop_slot){.op = XKV_OP_GET};
	return encode_piece(l, &s, 0, dgram) < 0 ? -EINVAL : 0;
}

int loop_init(struct loop *l, struct transport *t, const struct workload *w,
	      const struct loop_config *cfg)
{
	uint64_t expiry_period_ns = cfg->timeout_ns / 8;
	unsigned bits = 0, tx_max = cfg->depth + LOOP_PIECE_BURST;

	if (cfg->depth < 1 || cfg->depth > LOOP_DEPTH_MAX || !cfg->timeout_ns)
		return -EINVAL;
	while ((1u << bits) < cfg->depth)
		bits++;
	*l = (struct loop){
		.transport = t,
		.workload = w,
		.proto = cfg->proto ? cfg->proto : &bench_proto_xkv,
		.seed = cfg->seed,
		.stream = cfg->stream,
		.deadline_ns = cfg->deadline_ns,
		.clock = cfg->clock,
		.schedule = cfg->schedule && cfg->schedule->n ? cfg->schedule : NULL,
		.intervals = cfg->intervals,
		.timeout_ns = cfg->timeout_ns,
		/* a lost request is noticed at most an eighth of the timeout late */
		.expiry_period_ns = expiry_period_ns > NS_PER_MS ? expiry_period_ns : NS_PER_MS,
		.depth = cfg->depth,
		.slot_mask = (1u << bits) - 1,
		.dest = cfg->dest,
	};
	l->piece_max = LOOP_DGRAM_CAP - (uint32_t)sizeof(struct xkv_hdr) - l->proto->ext_len -
		       w->cfg.key_size;
	l->tokens = calloc(cfg->nservers ? cfg->nservers : 1, sizeof(*l->tokens));
	if (!l->tokens)
		return -ENOMEM;
	if (check_encodes(l, w)) {
		loop_free(l);
		return -EINVAL;
	}
	rng_seed(&l->rng, cfg->seed, cfg->stream);
	l->slots = calloc(cfg->depth, sizeof(*l->slots));
	l->dgrams = malloc(cfg->depth * LOOP_DGRAM_CAP);
	l->piece_dgrams = malloc(LOOP_PIECE_BURST * LOOP_DGRAM_CAP);
	l->ready = calloc(cfg->depth, sizeof(*l->ready));
	l->idle = calloc(cfg->depth, sizeof(*l->idle));
	l->tx = calloc(tx_max, sizeof(*l->tx));
	l->tx_slot = calloc(tx_max, sizeof(*l->tx_slot));
	l->rx = calloc(cfg->depth, sizeof(*l->rx));
	if (!l->slots || !l->dgrams || !l->piece_dgrams || !l->ready || !l->idle || !l->tx ||
	    !l->tx_slot || !l->rx) {
		loop_free(l);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->depth; i++) {
		l->slots[i].dgram = l->dgrams + i * LOOP_DGRAM_CAP;
		l->slots[i].request_id = i;
	}
	return 0;
}

void loop_free(struct loop *l)
{
	free(l->slots);
	free(l->dgrams);
	free(l->piece_dgrams);
	free(l->ready);
	free(l->idle);
	free(l->tx);
	free(l->tx_slot);
	free(l->rx);
	free(l->tokens);
	*l = (struct loop){0};
}
