// SPDX-License-Identifier: MIT
/*
 * The cluster model (cluster.h; docs/SIMULATION.md, "The cluster model").
 *
 * Requests arrive at the directory as one Poisson process, each for a zipf-ranked key
 * (rank 0 the hottest), a write with write_frac. A key the directory does not hold goes
 * to its ketama home. The `replicated` hottest keys are held: each has a replica set,
 * every server at first (the controller's migration copied it everywhere); a read goes
 * to a server of the set the strategy picks. A write goes to as many servers as the key
 * has had reads per write, up to write_servers (Pegasus Sec. 6.4, xkv-dir
 * --write-servers): the one the strategy picks of all and the next ones by id, as
 * bpf/dir.bpf.c's dir_write_set; each copy's reply, as it passes the directory, makes
 * its server the set if its version is the newest seen, or joins it if the same
 * (Algorithm 2). A request takes hop_ns to a server and its reply hop_ns back.
 *
 * A server is c cores serving one FIFO, first come first served (the single-server
 * model's `ideal`: the per-server policies are that model's question, not this one's),
 * each request for a service time drawn from the configured model. A reply carries
 * what xkv's do (include/xkv/proto.h, struct xkv_dir_ext): the requests the server has
 * queued and its time per request (a moving mean of service times over its cores),
 * which the directory keeps per server as bpf/dir_select/ does: the load last reported,
 * C3's moving means of queue, service time and response time and its count of
 * requests outstanding, and the predicted backlog.
 *
 * A request's latency is from its arrival at the directory to its reply's return
 * there; the SLO is slo_mult mean service times plus the two hops.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "common/hist.h"
#include "common/rng.h"
#include "common/zipf.h"
#include "dist.h"
#include "eventq.h"

#define NONE	    UINT32_MAX
#define POOL_START  4096
#define EWMA	    (1.0 / 8) /* C3's moving means: each reply weighs an eighth */
#define SERVICE_DEFAULT_NS 1000.0 /* XKV_DIR_SERVICE_DEFAULT_NS: before any reply */

enum cluster_event { EV_ARRIVAL, EV_AT_SERVER, EV_DONE, EV_REPLY };

struct creq {
	double arrival, sent, service;
	uint32_t key, next, load; /* load: the server's queue as it answered */
	uint32_t version;	  /* a write of a held key: the version it makes */
	uint16_t server;
	uint8_t is_write, measured;
	uint8_t copy; /* a write's copy for another server: its reply times nothing */
};

/* What the directory keeps of a key it holds. */
struct ckey {
	uint32_t rset;		/* its replica set */
	uint32_t version, seen; /* the last write's version, and the newest replied */
	uint64_t reads, writes, requests; /* requests: popularity's count */
};

struct cserver {
	uint32_t head, tail, waiting; /* its FIFO, threaded through the requests */
	unsigned busy;		      /* cores serving */
	double busy_ns, service_mean;
	uint64_t served;
	/* the directory's view of it, from its replies and what was sent */
	uint32_t load;
	double service_ns; /* time per request it reported; 0: none yet */
	double queue_avg, service_avg, response_avg, outstanding, backlog_until;
};

struct cluster {
	const struct sim_config *cfg;
	struct service_model svc;
	struct zipf zipf;
	struct rng rng;
	struct eventq events;
	struct hist hist;
	double now, lambda, slo_ns;
	unsigned nservers, replicated;
	uint32_t all; /* every server, a bit each */
	uint8_t *home;
	struct ckey *keys; /* the replicated ones */
	uint64_t seen;	   /* every request, for popularity */
	unsigned rotor;
	struct cserver *servers;
	struct creq *reqs;
	uint32_t cap, free_head;
	uint64_t generated, total, warmup_n, violations, violation_limit;
	uint64_t to_replicated; /* measured replies for held keys */
	double first_measured, last_reply;
	bool stop;
	int err;
};

static const char *const select_names[CLUSTER_SELECT_END] = {
#define CLUSTER_SELECT_NAME(name, str) [CLUSTER_##name] = str,
	CLUSTER_SELECTS(CLUSTER_SELECT_NAME)
#undef CLUSTER_SELECT_NAME
};

int cluster_select_parse(const char *name, enum cluster_select *out)
{
	for (int i = 0; i < CLUSTER_SELECT_END; i++) {
		if (!strcmp(name, select_names[i])) {
			*out = (enum cluster_select)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *cluster_select_name(enum cluster_select s)
{
	return s < CLUSTER_SELECT_END ? select_names[s] : "?";
}

unsigned cluster_default_replicated(unsigned servers)
{
	return (unsigned)ceil(servers * log(servers));
}

static int cmp_point(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a >> 8, y = *(const uint64_t *)b >> 8;

	return x < y ? -1 : x > y;
}

/*
 * The continuum: CLUSTER_KETAMA_POINTS points a server, each a 56-bit hash with the
 * server in its low byte; a key's home owns the first point at or after its hash.
 */
void cluster_ketama_homes(unsigned servers, uint32_t items, uint8_t *home)
{
	unsigned n = servers * CLUSTER_KETAMA_POINTS;
	uint64_t *points = malloc(sizeof(*points) * n);

	if (!points) { /* a placement still, if a poorer one */
		for (uint32_t k = 0; k < items; k++)
			home[k] = (uint8_t)(mix64(k + 1) % servers);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		points[i] = mix64((uint64_t)(i / CLUSTER_KETAMA_POINTS) << 32 |
				  (i % CLUSTER_KETAMA_POINTS) | 1ull << 63) << 8 |
			    (i / CLUSTER_KETAMA_POINTS);
	qsort(points, n, sizeof(*points), cmp_point);
	for (uint32_t k = 0; k < items; k++) {
		uint64_t h = mix64((uint64_t)k + 0x9e3779b97f4a7c15ull) >> 8;
		unsigned lo = 0, hi = n;

		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;

			if (points[mid] >> 8 < h)
				lo = mid + 1;
			else
				hi = mid;
		}
		home[k] = (uint8_t)(points[lo == n ? 0 : lo] & 0xff);
	}
	free(points);
}

static void schedule(struct cluster *c, double t, enum cluster_event type, uint32_t arg,
		     uint16_t dest)
{
	int err = eventq_push(&c->events, t, (uint8_t)type, arg, dest, false);

	if (err && !c->err)
		c->err = err;
}

static uint32_t req_alloc(struct cluster *c)
{
	uint32_t id;

	if (c->free_head == NONE) {
		uint32_t cap = c->cap * 2;
		struct creq *more = realloc(c->reqs, sizeof(*more) * cap);

		if (!more) {
			c->err = -ENOMEM;
			return NONE;
		}
		for (uint32_t i = c->cap; i < cap; i++)
			more[i].next = i + 1 < cap ? i + 1 : NONE;
		c->reqs = more;
		c->free_head = c->cap;
		c->cap = cap;
	}
	id = c->free_head;
	c->free_head = c->reqs[id].next;
	return id;
}

static void req_free(struct cluster *c, uint32_t id)
{
	c->reqs[id].next = c->free_head;
	c->free_head = id;
}

/*
 * The server of set with the least score, a statement over `id`; ties go to the first
 * from the rotor, which then moves past the one chosen (score 0: round-robin).
 */
#define LEAST(c, set, score)                                                                       \
	({                                                                                         \
		unsigned best_ = NONE;                                                             \
		double best_score_ = INFINITY;                                                     \
		for (unsigned j_ = 0; j_ < (c)->nservers; j_++) {                                  \
			unsigned id = ((c)->rotor + j_) % (c)->nservers;                           \
			double s_;                                                                 \
			if (!((set) >> id & 1))                                                    \
				continue;                                                          \
			s_ = (score);                                                              \
			if (s_ < best_score_) {                                                    \
				best_score_ = s_;                                                  \
				best_ = id;                                                        \
			}                                                                          \
		}                                                                                  \
		(c)->rotor = best_ + 1;                                                            \
		best_;                                                                             \
	})

static double reported_service(const struct cserver *s)
{
	return s->service_ns > 0 ? s->service_ns : SERVICE_DEFAULT_NS;
}

static double c3_score(const struct cserver *s)
{
	double inv_mu = s->service_avg > 0 ? s->service_avg : SERVICE_DEFAULT_NS;
	double n = 1 + s->outstanding + s->queue_avg;

	return s->response_avg + inv_mu * (n * n * n - 1);
}

static unsigned first_of(uint32_t set)
{
	return (unsigned)__builtin_ctz(set);
}

/* The server strategy cfg->dir_select picks of set for key (replicated: key < c->replicated). */
static unsigned choose(struct cluster *c, uint32_t key, uint32_t set)
{
	unsigned home = c->home[key];

	switch ((enum cluster_select)c->cfg->dir_select) {
	case CLUSTER_POPULARITY: /* a popular key turns over its servers */
		if (c->keys[key].requests * 1e6 >= c->cfg->popular_ppm * (double)c->seen)
			return LEAST(c, set, 0.0);
		return set >> home & 1 ? home : first_of(set);
	case CLUSTER_ROUND_ROBIN:
		return LEAST(c, set, 0.0);
	case CLUSTER_LEAST_LOADED:
		return LEAST(c, set, (double)c->servers[id].load);
	case CLUSTER_PREDICT:
		return LEAST(c, set, fmax(c->servers[id].backlog_until - c->now, 0));
	case CLUSTER_C3:
		return LEAST(c, set, c3_score(&c->servers[id]));
	case CLUSTER_KETAMA:
	case CLUSTER_SELECT_END:
		break;
	}
	return home;
}

static void start(struct cluster *c, unsigned si, uint32_t id)
{
	struct cserver *s = &c->servers[si];

	s->busy++;
	s->busy_ns += c->reqs[id].service;
	schedule(c, c->now + c->reqs[id].service, EV_DONE, id, (uint16_t)si);
}

/* Sends request id to server si: hop_ns away, and what the strategies keep of it. */
static void send(struct cluster *c, uint32_t id, unsigned si)
{
	struct cserver *s = &c->servers[si];

	c->reqs[id].server = (uint16_t)si;
	c->reqs[id].sent = c->now;
	s->outstanding++;
	s->backlog_until = fmax(s->backlog_until, c->now) + reported_service(s);
	schedule(c, c->now + c->cfg->hop_ns, EV_AT_SERVER, id, (uint16_t)si);
}

/* bpf/dir.bpf.c's dir_write_count: reads per write, up to write_servers and the servers. */
static unsigned write_count(const struct cluster *c, const struct ckey *k)
{
	uint64_t per_write = k->reads / (k->writes + 1);
	unsigned n = c->cfg->write_servers > 1 ? c->cfg->write_servers : 1;

	if (n > c->nservers)
		n = c->nservers;
	if (per_write < n)
		n = per_write ? (unsigned)per_write : 1;
	return n;
}

/* A write of held key r->key: to the strategy's server, and copies to the next n - 1. */
static void send_write(struct cluster *c, uint32_t id)
{
	struct creq *r = &c->reqs[id];
	struct ckey *k = &c->keys[r->key];
	unsigned first = choose(c, r->key, c->all), n = write_count(c, k);

	r->version = ++k->version;
	k->writes++;
	send(c, id, first);
	for (unsigned i = 1; i < n; i++) {
		uint32_t copy = req_alloc(c);

		if (copy == NONE)
			return;
		r = &c->reqs[id]; /* the pool may have moved */
		c->reqs[copy] = *r;
		c->reqs[copy].copy = 1;
		send(c, copy, (first + i) % c->nservers);
	}
}

static void on_arrival(struct cluster *c)
{
	const struct sim_config *cfg = c->cfg;
	uint32_t id = req_alloc(c);
	struct creq *r;
	struct ckey *k;
	bool large;
	uint32_t size;

	if (id == NONE)
		return;
	r = &c->reqs[id];
	*r = (struct creq){
		.arrival = c->now,
		.key = (uint32_t)zipf_sample(&c->zipf, &c->rng),
		.measured = c->generated >= c->warmup_n,
	};
	r->is_write = rng_uniform(&c->rng) < cfg->write_frac;
	r->service = service_draw(&c->svc, &c->rng, &large, &size) + c->svc.fixed_ns;
	if (r->measured && c->first_measured < 0)
		c->first_measured = c->now;
	if (++c->generated < c->total)
		schedule(c, c->now + rng_exp(&c->rng) / c->lambda, EV_ARRIVAL, 0, 0);
	c->seen++;
	if (r->key >= c->replicated) {
		send(c, id, c->home[r->key]);
		return;
	}
	k = &c->keys[r->key];
	k->requests++;
	if (r->is_write) {
		send_write(c, id);
	} else {
		k->reads++;
		send(c, id, choose(c, r->key, k->rset));
	}
}

static void on_at_server(struct cluster *c, uint32_t id, unsigned si)
{
	struct cserver *s = &c->servers[si];

	if (s->busy < c->cfg->cores) {
		start(c, si, id);
		return;
	}
	c->reqs[id].next = NONE;
	if (s->waiting)
		c->reqs[s->tail].next = id;
	else
		s->head = id;
	s->tail = id;
	s->waiting++;
}

static void on_done(struct cluster *c, uint32_t id, unsigned si)
{
	struct cserver *s = &c->servers[si];
	struct creq *r = &c->reqs[id];

	s->busy--;
	s->served += r->measured;
	s->service_mean += (r->service - s->service_mean) * EWMA;
	r->load = s->waiting; /* queued behind it, as the reply leaves */
	if (s->waiting) {
		uint32_t next = s->head;

		s->head = c->reqs[next].next;
		s->waiting--;
		start(c, si, next);
	}
	schedule(c, c->now + c->cfg->hop_ns, EV_REPLY, id, (uint16_t)si);
}

/* The reply passes the directory: its telemetry taken, a write's set made its server. */
static void on_reply(struct cluster *c, uint32_t id, unsigned si)
{
	struct cserver *s = &c->servers[si];
	struct creq *r = &c->reqs[id];
	double latency = c->now - r->arrival;

	s->load = r->load;
	s->service_ns = s->service_mean / c->cfg->cores;
	s->queue_avg += (r->load - s->queue_avg) * EWMA;
	s->service_avg += (s->service_ns - s->service_avg) * EWMA;
	s->response_avg += (c->now - r->sent - s->response_avg) * EWMA;
	s->outstanding = fmax(s->outstanding - 1, 0);
	if (r->is_write && r->key < c->replicated) {
		struct ckey *k = &c->keys[r->key];

		if ((int32_t)(r->version - k->seen) > 0) {
			k->seen = r->version;
			k->rset = 1u << si;
		} else if (r->version == k->seen) {
			k->rset |= 1u << si;
		}
	}
	if (r->copy) {
		req_free(c, id);
		return;
	}
	c->last_reply = fmax(c->last_reply, c->now);
	if (r->measured) {
		c->to_replicated += r->key < c->replicated;
		hist_record(&c->hist, (uint64_t)llround(latency));
		if (latency > c->slo_ns && ++c->violations > c->violation_limit &&
		    c->cfg->stop_on_violation)
			c->stop = true;
	}
	req_free(c, id);
}

static int setup(struct cluster *c, const struct sim_config *cfg)
{
	uint64_t measured;
	int err;

	c->cfg = cfg;
	err = service_init(&c->svc, cfg);
	if (err)
		return err;
	c->nservers = cfg->servers;
	c->all = c->nservers == 32 ? UINT32_MAX : (1u << c->nservers) - 1;
	c->replicated = cfg->dir_select == CLUSTER_KETAMA ? 0
			: cfg->replicated		  ? cfg->replicated
							  : cluster_default_replicated(c->nservers);
	if (c->replicated > cfg->items)
		c->replicated = cfg->items;
	c->lambda = cfg->rate_mrps > 0 ? cfg->rate_mrps / 1e3
				       : cfg->load * cfg->servers * cfg->cores / c->svc.mean_ns;
	c->slo_ns = cfg->slo_mult * c->svc.mean_ns + 2 * cfg->hop_ns;
	c->total = cfg->duration_us > 0 ? (uint64_t)ceil(c->lambda * cfg->duration_us * 1e3)
					: cfg->requests;
	if (c->total < 1 || c->total >= NONE)
		return -EINVAL;
	c->warmup_n = (uint64_t)(cfg->warmup * (double)c->total);
	measured = c->total - c->warmup_n;
	c->violation_limit = measured - (uint64_t)ceil(SIM_PERCENTILE / 100.0 * (double)measured);
	c->first_measured = -1;
	err = zipf_init(&c->zipf, cfg->items, cfg->zipf);
	if (err)
		return err;
	rng_seed(&c->rng, cfg->seed, 0);
	hist_init(&c->hist);
	c->home = malloc(cfg->items);
	c->keys = calloc(c->replicated + 1, sizeof(*c->keys));
	c->servers = calloc(c->nservers, sizeof(*c->servers));
	c->reqs = malloc(sizeof(*c->reqs) * POOL_START);
	if (!c->home || !c->keys || !c->servers || !c->reqs)
		return -ENOMEM;
	c->cap = POOL_START;
	for (uint32_t i = 0; i < POOL_START; i++)
		c->reqs[i].next = i + 1 < POOL_START ? i + 1 : NONE;
	c->free_head = 0;
	for (unsigned k = 0; k < c->replicated; k++)
		c->keys[k].rset = c->all;
	cluster_ketama_homes(c->nservers, cfg->items, c->home);
	return eventq_init(&c->events, 1024);
}

static void finalize(struct cluster *c, struct sim_results *res)
{
	double span = c->last_reply - c->first_measured, served = 0, most = 0;

	res->requests = c->generated;
	res->measured = c->hist.count;
	res->offered_mrps = c->lambda * 1e3;
	res->offered_load = c->lambda * c->svc.mean_ns / (c->nservers * c->cfg->cores);
	res->mean_service_ns = c->svc.mean_ns;
	res->slo_ns = c->slo_ns;
	res->mean_ns = hist_mean(&c->hist);
	res->p50_ns = hist_percentile(&c->hist, 50.0);
	res->p99_ns = hist_percentile(&c->hist, SIM_PERCENTILE);
	res->p999_ns = hist_percentile(&c->hist, 99.9);
	res->max_ns = (double)c->hist.max;
	res->throughput_mrps = span > 0 ? (double)res->measured / span * 1e3 : 0.0;
	res->stopped_early = c->stop;
	res->meets_slo = !c->stop && res->measured && res->p99_ns <= c->slo_ns;
	res->servers = c->nservers;
	res->replicated = c->replicated;
	res->replicated_share = res->measured ? (double)c->to_replicated / (double)res->measured
					      : 0.0;
	res->cores = c->nservers; /* util[] is per server */
	res->util_min = INFINITY;
	for (unsigned i = 0; i < c->nservers; i++) {
		const struct cserver *s = &c->servers[i];
		double u = c->now > 0 ? fmin(s->busy_ns / (c->now * c->cfg->cores), 1) : 0;

		res->util[i] = u;
		res->util_mean += u / c->nservers;
		res->util_min = fmin(res->util_min, u);
		res->util_max = fmax(res->util_max, u);
		served += (double)s->served;
		most = fmax(most, (double)s->served);
	}
	res->server_share_max = served > 0 ? most / (served / c->nservers) : 0;
}

static void teardown(struct cluster *c)
{
	eventq_free(&c->events);
	free(c->reqs);
	free(c->servers);
	free(c->keys);
	free(c->home);
}

int cluster_run(const struct sim_config *cfg, struct sim_results *res)
{
	struct cluster c = {0};
	struct event ev;
	int err;

	if (cfg->servers < 2 || cfg->servers > CLUSTER_SERVERS_MAX ||
	    cfg->dir_select >= CLUSTER_SELECT_END)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	err = setup(&c, cfg);
	if (!err) {
		schedule(&c, rng_exp(&c.rng) / c.lambda, EV_ARRIVAL, 0, 0);
		while (!c.stop && !c.err && eventq_pop(&c.events, &ev)) {
			c.now = ev.t;
			switch ((enum cluster_event)ev.type) {
			case EV_ARRIVAL:
				on_arrival(&c);
				break;
			case EV_AT_SERVER:
				on_at_server(&c, ev.arg, ev.dest);
				break;
			case EV_DONE:
				on_done(&c, ev.arg, ev.dest);
				break;
			case EV_REPLY:
				on_reply(&c, ev.arg, ev.dest);
				break;
			}
		}
		err = c.err;
	}
	if (!err)
		finalize(&c, res);
	teardown(&c);
	return err;
}
