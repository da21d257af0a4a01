// SPDX-License-Identifier: MIT
/*
 * The event loop: arrivals, deliveries over the dispatch channel, the phases of each
 * service, completion notices back to the dispatcher, compaction windows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "model.h"

enum ev_type {
	EV_ARRIVAL,  /* the next request reaches the dispatcher */
	EV_DELIVER,  /* a request reaches a core's queue or a shared queue */
	EV_CORE,     /* the job in progress on a core ends */
	EV_NOTICE,   /* the dispatcher learns that a request completed */
	EV_DEADLINE, /* a compaction window's deadline */
};

#define REQ_POOL_START 4096

static void schedule(struct sim *s, double t, enum ev_type type, uint32_t arg, uint16_t dest)
{
	/* the channels delay every delivery and notice by the same time */
	bool in_order = type == EV_DELIVER || type == EV_NOTICE;
	int err = eventq_push(&s->events, t, (uint8_t)type, arg, dest, in_order);

	if (err)
		s->err = err;
}

static void list_init(struct req_list *l)
{
	*l = (struct req_list){ .head = SIM_NONE, .tail = SIM_NONE };
}

static void list_push(struct sim *s, struct req_list *l, uint32_t id)
{
	s->reqs[id].next = SIM_NONE;
	if (l->tail == SIM_NONE)
		l->head = id;
	else
		s->reqs[l->tail].next = id;
	l->tail = id;
	l->len++;
}

static uint32_t list_pop(struct sim *s, struct req_list *l)
{
	uint32_t id = l->head;

	if (id == SIM_NONE)
		return id;
	l->head = s->reqs[id].next;
	if (l->head == SIM_NONE)
		l->tail = SIM_NONE;
	l->len--;
	return id;
}

/* Adds [from, to) of the pool to the free list. */
static void pool_release_range(struct sim *s, uint32_t from, uint32_t to)
{
	for (uint32_t i = to; i-- > from;) {
		s->reqs[i].next = s->free_head;
		s->free_head = i;
	}
}

static uint32_t req_alloc(struct sim *s)
{
	uint32_t id;

	if (s->free_head == SIM_NONE) {
		struct sim_req *grown;

		if (s->reqs_cap > SIM_NONE / 2) {
			s->err = -ENOMEM;
			return SIM_NONE;
		}
		grown = realloc(s->reqs, sizeof(*grown) * s->reqs_cap * 2);
		if (!grown) {
			s->err = -ENOMEM;
			return SIM_NONE;
		}
		s->reqs = grown;
		pool_release_range(s, s->reqs_cap, s->reqs_cap * 2);
		s->reqs_cap *= 2;
	}
	id = s->free_head;
	s->free_head = s->reqs[id].next;
	return id;
}

static void req_free(struct sim *s, uint32_t id)
{
	s->reqs[id].next = s->free_head;
	s->free_head = id;
}

/* True when one of the first `lookahead` queued requests writes key. */
static bool queue_has_write(const struct sim *s, const struct req_list *l, uint32_t key)
{
	uint32_t id = l->head;

	for (unsigned seen = 0; id != SIM_NONE && seen < s->cfg->lookahead; seen++) {
		const struct sim_req *r = &s->reqs[id];

		if (r->is_write && r->key == key)
			return true;
		id = r->next;
	}
	return false;
}

static void core_run(struct sim *s, unsigned ci, enum job job, double duration)
{
	struct sim_core *c = &s->cores[ci];

	if (c->job == JOB_IDLE)
		c->busy_since = s->now;
	c->job = (uint8_t)job;
	schedule(s, s->now + duration, EV_CORE, ci, 0);
}

static void core_idle(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];

	if (c->job != JOB_IDLE)
		c->busy_ns += s->now - c->busy_since;
	c->job = JOB_IDLE;
}

static void record_completion(struct sim *s, uint32_t id, double t)
{
	struct sim_req *r = &s->reqs[id];
	double latency = t - r->arrival;
	uint64_t ns;

	if (r->tracked)
		s->parts[r->bucket].out_writes--;
	if (r->target < s->ncores)
		s->cores[r->target].depth--;
	if (t > s->last_completion)
		s->last_completion = t;
	schedule(s, t + s->cfg->channel_ns, EV_NOTICE, id, 0);
	if (!r->measured)
		return;
	ns = (uint64_t)llround(latency); /* whole ns: the unit of the model */
	hist_record(s->hist, ns);
	if (s->svc.sized)
		hist_record(r->is_large ? s->hist_large : s->hist_small, ns);
	if (latency > s->slo_ns && ++s->violations > s->violation_limit &&
	    s->cfg->stop_on_violation)
		s->stop = true;
}

static void core_next(struct sim *s, unsigned ci);

static void finish_request(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];

	record_completion(s, c->req, s->now);
	c->req = SIM_NONE;
	core_next(s, ci);
}

static void begin_read(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];
	const struct sim_req *r = &s->reqs[c->req];
	const struct partition *p = &s->parts[r->bucket];

	if (p->version & 1) {
		s->res->spins++;
		core_run(s, ci, JOB_SPIN, p->write_end - s->now);
		return;
	}
	c->read_version = p->version;
	core_run(s, ci, JOB_KVS, r->kvs_ns);
}

static void begin_store_write(struct sim *s, unsigned ci, uint32_t bucket, double duration,
			      enum job job)
{
	struct partition *p = &s->parts[bucket];

	p->version++;
	p->write_end = s->now + duration;
	core_run(s, ci, job, duration);
}

static void reply_or_finish(struct sim *s, unsigned ci)
{
	if (s->svc.fixed_ns > 0)
		core_run(s, ci, JOB_FIXED, s->svc.fixed_ns);
	else
		finish_request(s, ci);
}

static void kvs_done(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];
	const struct sim_req *r = &s->reqs[c->req];
	struct partition *p = &s->parts[r->bucket];

	if (r->is_write) {
		p->version++;
	} else if (p->version != c->read_version && !c->retried) {
		/* a write began meanwhile: read again, once, without checking again */
		c->retried = 1;
		s->res->retries++;
		core_run(s, ci, JOB_KVS, r->kvs_ns);
		return;
	}
	reply_or_finish(s, ci);
}

static struct window *find_window(struct sim_core *c, uint32_t key)
{
	for (unsigned i = 0; i < SIM_MAX_WINDOWS; i++)
		if (c->win[i].open && c->win[i].key == key)
			return &c->win[i];
	return NULL;
}

/* Takes the write into a compaction window, opening one when a matching write is queued. */
static bool try_compact(struct sim *s, unsigned ci, uint32_t id)
{
	struct sim_core *c = &s->cores[ci];
	struct sim_req *r = &s->reqs[id];
	struct window *w = find_window(c, r->key);

	if (!w) {
		if (!queue_has_write(s, &c->local, r->key))
			return false;
		for (unsigned i = 0; i < SIM_MAX_WINDOWS && !w; i++)
			if (!c->win[i].open)
				w = &c->win[i];
		if (!w)
			return false;
		/* the opening write still needs one mean service after the deadline */
		*w = (struct window){
			.key = r->key,
			.bucket = r->bucket,
			.deadline = s->now + s->svc.mean_ns * (s->cfg->slo_mult - 1.0),
			.open = true,
		};
		list_init(&w->writes);
		schedule(s, w->deadline, EV_DEADLINE, ci, 0);
	}
	list_push(s, &w->writes, id);
	w->apply_ns = r->kvs_ns;
	s->res->compacted++;
	core_run(s, ci, JOB_COLLECT, s->cfg->comp_ns);
	return true;
}

static void collect_done(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];
	uint32_t key = s->reqs[c->req].key;

	if (s->cfg->close == SIM_CLOSE_EARLY && !queue_has_write(s, &c->local, key))
		find_window(c, key)->closing = true;
	c->req = SIM_NONE;
	core_next(s, ci);
}

static void start_apply(struct sim *s, unsigned ci, unsigned wi)
{
	struct sim_core *c = &s->cores[ci];
	struct window *w = &c->win[wi];

	c->applying = (uint8_t)wi;
	begin_store_write(s, ci, w->bucket, w->apply_ns, JOB_APPLY);
}

/* The final value is visible: now every write of the window is answered, in order. */
static void apply_done(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];
	struct window *w = &c->win[c->applying];
	double t = s->now;
	uint32_t id;

	s->parts[w->bucket].version++;
	if (w->writes.len > s->res->window_max)
		s->res->window_max = w->writes.len;
	while ((id = list_pop(s, &w->writes)) != SIM_NONE) {
		t += s->svc.fixed_ns;
		record_completion(s, id, t);
	}
	w->open = false;
	s->res->windows++;
	if (t > s->now)
		core_run(s, ci, JOB_REPLY, t - s->now);
	else
		core_next(s, ci);
}

static void count_placement(struct sim *s, unsigned ci, const struct sim_req *r)
{
	if (policy_has_roles(s)) {
		policy_minos_count(s, ci, r);
		return;
	}
	if (ci == partition_owner(s, r))
		return;
	if (r->is_write)
		s->res->writes_off_owner++;
	else
		s->res->reads_off_owner++;
}

static void start_request(struct sim *s, unsigned ci, uint32_t id)
{
	struct sim_core *c = &s->cores[ci];
	const struct sim_req *r = &s->reqs[id];

	c->req = id;
	if (r->measured) {
		s->wait_sum += s->now - r->arrival;
		s->wait_n++;
	}
	count_placement(s, ci, r);
	if (r->is_write && s->compact && try_compact(s, ci, id))
		return;
	if (!s->sync) {
		core_run(s, ci, JOB_WHOLE, r->kvs_ns + s->svc.fixed_ns);
	} else if (r->is_write) {
		begin_store_write(s, ci, r->bucket, r->kvs_ns, JOB_KVS);
	} else {
		c->retried = 0;
		begin_read(s, ci);
	}
}

static uint32_t steal(struct sim *s, unsigned thief)
{
	for (unsigned i = 1; i < s->ncores; i++) {
		unsigned victim = (thief + i) % s->ncores;

		if (s->cores[victim].local.len) {
			s->res->stolen++;
			return list_pop(s, &s->cores[victim].local);
		}
	}
	return SIM_NONE;
}

/* The core's job ended (or it was idle): a due window first, then its queue, then others'. */
static void core_next(struct sim *s, unsigned ci)
{
	struct sim_core *c = &s->cores[ci];
	uint32_t id;

	for (unsigned i = 0; i < SIM_MAX_WINDOWS; i++) {
		struct window *w = &c->win[i];

		if (w->open && (w->closing || s->now >= w->deadline)) {
			start_apply(s, ci, i);
			return;
		}
	}
	id = list_pop(s, &c->local);
	if (id == SIM_NONE && s->pull_shared)
		id = list_pop(s, &s->shared);
	if (id == SIM_NONE && s->steal)
		id = steal(s, ci);
	if (id == SIM_NONE)
		core_idle(s, ci);
	else
		start_request(s, ci, id);
}

/* The first idle core from `from` on takes the new work (from the shared queue, or to steal). */
static bool wake_idle(struct sim *s, unsigned from)
{
	for (unsigned i = 0; i < s->ncores; i++) {
		unsigned ci = (from + i) % s->ncores;

		if (s->cores[ci].job == JOB_IDLE) {
			core_next(s, ci);
			return true;
		}
	}
	return false;
}

static void on_deliver(struct sim *s, uint32_t id, unsigned dest)
{
	if (dest >= s->ncores) {
		list_push(s, &s->shared, id);
		if (wake_idle(s, s->rotor))
			s->rotor = (s->rotor + 1) % s->ncores;
		return;
	}
	list_push(s, &s->cores[dest].local, id);
	if (s->cores[dest].job == JOB_IDLE)
		core_next(s, dest);
	else if (s->steal)
		wake_idle(s, dest + 1);
}

static void on_core(struct sim *s, unsigned ci)
{
	switch ((enum job)s->cores[ci].job) {
	case JOB_SPIN:
		begin_read(s, ci);
		break;
	case JOB_KVS:
		kvs_done(s, ci);
		break;
	case JOB_WHOLE:
	case JOB_FIXED:
		finish_request(s, ci);
		break;
	case JOB_COLLECT:
		collect_done(s, ci);
		break;
	case JOB_APPLY:
		apply_done(s, ci);
		break;
	case JOB_REPLY:
		core_next(s, ci);
		break;
	case JOB_IDLE:
		break;
	}
}

/* Single-writer check, independent of the policy's own bookkeeping. */
static void track_write(struct sim *s, struct sim_req *r, unsigned ci)
{
	struct partition *p = &s->parts[r->bucket];

	if (p->out_writes && p->out_core != ci)
		s->res->writer_conflicts++;
	p->out_core = (uint16_t)ci;
	p->out_writes++;
	r->tracked = 1;
}

static void commit(struct sim *s, uint32_t id, struct placement pl)
{
	struct sim_req *r = &s->reqs[id];

	switch (pl.kind) {
	case PLACE_WAIT:
		list_push(s, &s->waiting, id);
		return;
	case PLACE_CORE:
		r->target = (uint16_t)pl.index;
		s->cores[pl.index].outstanding++;
		s->cores[pl.index].depth++;
		if (r->is_write)
			track_write(s, r, pl.index);
		schedule(s, s->now + s->cfg->channel_ns, EV_DELIVER, id, (uint16_t)pl.index);
		return;
	case PLACE_SHARED:
		schedule(s, s->now + s->cfg->channel_ns, EV_DELIVER, id, (uint16_t)s->ncores);
		return;
	}
}

/* Requests held at the dispatcher leave in order, as long as the head can be placed. */
static void drain_waiting(struct sim *s)
{
	while (s->waiting.len) {
		struct placement pl = policy_place(s, &s->reqs[s->waiting.head], true);

		if (pl.kind == PLACE_WAIT)
			return;
		commit(s, list_pop(s, &s->waiting), pl);
	}
}

static void on_notice(struct sim *s, uint32_t id)
{
	const struct sim_req *r = &s->reqs[id];

	if (r->target < s->ncores)
		s->cores[r->target].outstanding--;
	policy_completed(s, r);
	req_free(s, id);
	drain_waiting(s);
}

static void on_arrival(struct sim *s)
{
	const struct sim_config *cfg = s->cfg;
	uint32_t id = req_alloc(s);
	struct sim_req *r;
	uint64_t rank;
	bool large;

	if (id == SIM_NONE)
		return;
	r = &s->reqs[id];
	rank = zipf_sample(&s->zipf, &s->rng);
	*r = (struct sim_req){
		.arrival = s->now,
		.key = (uint32_t)rank,
		.bucket = (uint32_t)(mix64(rank) % cfg->partitions),
		.target = (uint16_t)s->ncores,
		.measured = s->generated >= s->warmup_n,
	};
	r->is_write = rng_uniform(&s->rng) < cfg->write_frac;
	r->kvs_ns = service_draw(&s->svc, &s->rng, &large, &r->size);
	r->is_large = large;
	if (r->measured && s->first_measured < 0)
		s->first_measured = s->now;
	if (++s->generated < s->total)
		schedule(s, s->now + rng_exp(&s->rng) / s->lambda, EV_ARRIVAL, 0, 0);
	commit(s, id, policy_place(s, r, false));
}

static int sim_setup(struct sim *s, const struct sim_config *cfg, struct sim_results *res)
{
	uint64_t measured;
	int err;

	s->cfg = cfg;
	s->res = res;
	err = service_init(&s->svc, cfg);
	if (err)
		return err;
	s->ncores = cfg->cores;
	s->lambda = cfg->rate_mrps > 0 ? cfg->rate_mrps / 1e3
				       : cfg->load * cfg->cores / s->svc.mean_ns;
	s->slo_ns = cfg->slo_mult * s->svc.mean_ns;
	s->total = cfg->duration_us > 0 ? (uint64_t)ceil(s->lambda * cfg->duration_us * 1e3)
					: cfg->requests;
	if (s->total < 1 || s->total > SIM_NONE)
		return -EINVAL;
	s->warmup_n = (uint64_t)(cfg->warmup * (double)s->total);
	measured = s->total - s->warmup_n;
	s->violation_limit = measured - (uint64_t)ceil(SIM_PERCENTILE / 100.0 * (double)measured);
	s->first_measured = -1.0;
	err = zipf_init(&s->zipf, cfg->items, cfg->zipf);
	if (err)
		return err;
	rng_seed(&s->rng, cfg->seed, 0);

	s->hist = malloc(sizeof(*s->hist));
	s->hist_small = malloc(sizeof(*s->hist_small));
	s->hist_large = malloc(sizeof(*s->hist_large));
	s->reqs = malloc(sizeof(*s->reqs) * REQ_POOL_START);
	s->cores = calloc(s->ncores, sizeof(*s->cores));
	s->parts = calloc(cfg->partitions, sizeof(*s->parts));
	if (!s->hist || !s->hist_small || !s->hist_large || !s->reqs || !s->cores || !s->parts)
		return -ENOMEM;
	err = eventq_init(&s->events, 1024);
	if (err)
		return err;
	hist_init(s->hist);
	hist_init(s->hist_small);
	hist_init(s->hist_large);
	s->reqs_cap = REQ_POOL_START;
	s->free_head = SIM_NONE;
	pool_release_range(s, 0, REQ_POOL_START);
	for (unsigned i = 0; i < s->ncores; i++) {
		list_init(&s->cores[i].local);
		s->cores[i].req = SIM_NONE;
	}
	list_init(&s->shared);
	list_init(&s->waiting);
	return policy_init(s);
}

static void sim_teardown(struct sim *s)
{
	eventq_free(&s->events);
	free(s->parts);
	free(s->cores);
	free(s->reqs);
	free(s->hist_large);
	free(s->hist_small);
	free(s->hist);
}

static void sim_loop(struct sim *s)
{
	struct event ev;

	schedule(s, rng_exp(&s->rng) / s->lambda, EV_ARRIVAL, 0, 0);
	while (!s->stop && !s->err && eventq_pop(&s->events, &ev)) {
		s->now = ev.t;
		switch ((enum ev_type)ev.type) {
		case EV_ARRIVAL:
			on_arrival(s);
			break;
		case EV_DELIVER:
			on_deliver(s, ev.arg, ev.dest);
			break;
		case EV_CORE:
			on_core(s, ev.arg);
			break;
		case EV_NOTICE:
			on_notice(s, ev.arg);
			break;
		case EV_DEADLINE:
			if (s->cores[ev.arg].job == JOB_IDLE)
				core_next(s, ev.arg);
			break;
		}
	}
}

static void sim_finalize(struct sim *s)
{
	struct sim_results *res = s->res;
	double span = s->last_completion - s->first_measured;

	res->requests = s->generated;
	res->measured = s->hist->count;
	res->offered_mrps = s->lambda * 1e3;
	res->offered_load = s->lambda * s->svc.mean_ns / s->ncores;
	res->mean_service_ns = s->svc.mean_ns;
	res->slo_ns = s->slo_ns;
	res->mean_ns = hist_mean(s->hist);
	res->p50_ns = hist_percentile(s->hist, 50.0);
	res->p99_ns = hist_percentile(s->hist, SIM_PERCENTILE);
	res->p999_ns = hist_percentile(s->hist, 99.9);
	res->max_ns = (double)s->hist->max;
	res->sized = s->svc.sized;
	res->p99_small_ns = hist_percentile(s->hist_small, SIM_PERCENTILE);
	res->p99_large_ns = hist_percentile(s->hist_large, SIM_PERCENTILE);
	res->mean_wait_ns = s->wait_n ? s->wait_sum / (double)s->wait_n : 0.0;
	res->throughput_mrps = span > 0 ? (double)res->measured / span * 1e3 : 0.0;
	res->stopped_early = s->stop;
	res->meets_slo = !s->stop && res->measured && res->p99_ns <= s->slo_ns;
	res->ewt_mean = s->now > 0 ? (s->ewt_area + s->ewt_active * (s->now - s->ewt_changed)) /
					     s->now
				   : 0.0;
	if (policy_has_roles(s)) {
		res->small_cores = s->roles.nsmall;
		res->large_cores = s->roles.nlarge;
		res->standby = s->roles.standby;
		res->threshold_class = s->roles.threshold;
		res->plans = s->plans;
	}
	res->cores = s->ncores;
	res->util_min = INFINITY;
	for (unsigned i = 0; i < s->ncores; i++) {
		const struct sim_core *c = &s->cores[i];
		double busy = c->busy_ns + (c->job != JOB_IDLE ? s->now - c->busy_since : 0.0);
		double u = s->now > 0 ? busy / s->now : 0.0;

		if (i < SIM_MAX_CORES)
			res->util[i] = u;
		res->util_mean += u / s->ncores;
		res->util_min = fmin(res->util_min, u);
		res->util_max = fmax(res->util_max, u);
	}
}

int sim_run(const struct sim_config *cfg, struct sim_results *res)
{
	struct sim s = { 0 };
	int err = sim_config_validate(cfg);

	if (err)
		return err;
	if (cfg->servers > 1)
		return cluster_run(cfg, res);
	memset(res, 0, sizeof(*res));
	err = sim_setup(&s, cfg, res);
	if (!err) {
		sim_loop(&s);
		err = s.err;
	}
	if (!err)
		sim_finalize(&s);
	sim_teardown(&s);
	return err;
}

int sim_search(const struct sim_config *cfg, double max_load, unsigned steps,
	       struct sim_search *out)
{
	struct sim_config probe = *cfg;
	struct sim_results *res;
	double lo = 0.0, hi = max_load;
	int err = 0;

	if (!(max_load > 0) || steps < 1 || steps > SIM_MAX_PROBES)
		return -EINVAL;
	res = malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	probe.rate_mrps = 0;
	probe.stop_on_violation = true;
	for (unsigned i = 0; i < steps; i++) {
		probe.load = (lo + hi) / 2;
		err = sim_run(&probe, res);
		if (err)
			break;
		out->probe_load[i] = probe.load;
		out->probe_p99[i] = res->p99_ns;
		out->probe_ok[i] = res->meets_slo;
		out->probes++;
		if (res->meets_slo) {
			lo = probe.load;
			out->max_load = probe.load;
			out->max_mrps = res->offered_mrps;
			out->at_max = *res;
		} else {
			hi = probe.load;
		}
	}
	free(res);
	return err;
}
