// SPDX-License-Identifier: MIT
/*
 * Placement rules: where the dispatcher sends each request, per policy. The engine
 * charges a core-placed request to that core until the completion notice comes back,
 * which is what JBSQ counts.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "model.h"

#define MINOS_STREAM	  1 /* the random stream of the epoch before the run; the run's is 0 */
#define MINOS_READ_STREAM 2 /* the stream of small reads' second candidates */

struct policy_desc {
	const char *name;
	bool sync;    /* optimistic readers, writers flip the partition version */
	bool steal;   /* idle cores take from other cores' queues */
	bool compact; /* workers compact writes to one key */
};

static const struct policy_desc policies[SIM_NPOLICIES] = {
	[SIM_EREW] = { "erew", false, false, false },
	[SIM_CREW] = { "crew", true, false, false },
	[SIM_DCREW] = { "dcrew", true, false, false },
	[SIM_IDEAL] = { "ideal", false, false, false },
	[SIM_HKH] = { "hkh", false, false, false },
	[SIM_SHO] = { "sho", false, false, false },
	[SIM_HKHWS] = { "hkhws", false, true, false },
	[SIM_MINOS] = { "minos", false, false, false },
	[SIM_COMP] = { "comp", true, false, true },
	[SIM_XKV] = { "xkv", true, false, true },
};

/* The server's policy a simulated one claims EWT slots as (xkv_ewt_claimed), or none. */
static const enum xkv_policy ewt_policy[SIM_NPOLICIES] = {
	[SIM_EREW] = XKV_POLICY_END, [SIM_CREW] = XKV_POLICY_END, [SIM_DCREW] = XKV_POLICY_DCREW,
	[SIM_IDEAL] = XKV_POLICY_END, [SIM_HKH] = XKV_POLICY_END, [SIM_SHO] = XKV_POLICY_END,
	[SIM_HKHWS] = XKV_POLICY_END, [SIM_MINOS] = XKV_POLICY_END, [SIM_COMP] = XKV_POLICY_END,
	[SIM_XKV] = XKV_POLICY_XKV,
};

int sim_policy_parse(const char *name, enum sim_policy *out)
{
	for (int p = 0; p < SIM_NPOLICIES; p++) {
		if (!strcmp(name, policies[p].name)) {
			*out = (enum sim_policy)p;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sim_policy_name(enum sim_policy p)
{
	return p < SIM_NPOLICIES ? policies[p].name : "?";
}

static struct placement at_core(unsigned ci)
{
	return (struct placement){ .kind = PLACE_CORE, .index = ci };
}

static const struct placement wait_here = { .kind = PLACE_WAIT };

/*
 * JBSQ(d): the core with the fewest outstanding requests, if it has fewer than d. The scan
 * starts after the last choice so that ties rotate. A new request waits behind those
 * already held at the dispatcher.
 */
static struct placement jbsq(struct sim *s, bool queued)
{
	unsigned best = 0, best_count = UINT32_MAX;

	if (!queued && s->waiting.len)
		return wait_here;
	for (unsigned i = 0; i < s->ncores && best_count; i++) {
		unsigned ci = s->rotor + i;

		if (ci >= s->ncores)
			ci -= s->ncores;
		if (s->cores[ci].outstanding < best_count) {
			best = ci;
			best_count = s->cores[ci].outstanding;
		}
	}
	if (best_count >= s->cfg->jbsq)
		return wait_here;
	s->rotor = best + 1 < s->ncores ? best + 1 : 0;
	return at_core(best);
}

static void ewt_count_change(struct sim *s, int delta)
{
	s->ewt_area += s->ewt_active * (s->now - s->ewt_changed);
	s->ewt_changed = s->now;
	s->ewt_active += delta;
	s->res->ewt_max = fmax(s->res->ewt_max, s->ewt_active);
}

/*
 * Whether XDP claims r's EWT slot under the server's policy the simulated one stands
 * for: the rule is include/xkv/ewt.h's, a value's pieces being XKV_MINOS_PIECE_BYTES.
 */
static bool ewt_claims(const struct sim *s, const struct sim_req *r)
{
	uint32_t piece = r->size < XKV_MINOS_PIECE_BYTES ? r->size : XKV_MINOS_PIECE_BYTES;

	return r->is_write && xkv_ewt_claimed(ewt_policy[s->cfg->policy], XKV_OP_PUT, piece, r->size);
}

/* Whether r's partition's slot holds writes, and *owner the core they went to. */
static bool ewt_held(const struct sim *s, const struct sim_req *r, unsigned *owner)
{
	uint64_t word = s->parts[r->bucket].ewt;

	*owner = xkv_ewt_owner(word);
	return xkv_ewt_writes(word) != 0;
}

/*
 * r claims its slot as XDP does (bpf/steer.h, xkv_ewt_claim): joins the core that holds
 * it, or takes it for the candidate core ci; it goes where the slot says.
 */
static struct placement ewt_claim(struct sim *s, struct sim_req *r, unsigned ci)
{
	struct partition *p = &s->parts[r->bucket];
	uint64_t next = xkv_ewt_joined(p->ewt, ci);

	if (!next) /* a slot full of writes takes no more: XDP drops it, the client retries */
		return wait_here;
	if (!xkv_ewt_writes(p->ewt))
		ewt_count_change(s, 1);
	ci = xkv_ewt_target(p->ewt, ci);
	p->ewt = next;
	r->claimed = 1;
	return at_core(ci);
}

/* d-CREW: a write follows the partition's outstanding writes, else it takes a JBSQ slot. */
static struct placement dcrew_write(struct sim *s, struct sim_req *r, bool queued)
{
	struct placement pl;
	unsigned owner;

	if (ewt_held(s, r, &owner))
		return ewt_claim(s, r, owner);
	pl = jbsq(s, queued);
	return pl.kind == PLACE_CORE ? ewt_claim(s, r, pl.index) : pl;
}

/* A request's size class; sizes past xkv's largest value count in the last class. */
static uint32_t size_class(uint32_t size)
{
	uint32_t cls = xkv_size_class(size);

	return cls < XKV_SIZE_CLASSES ? cls : XKV_SIZE_CLASSES - 1;
}

/* Minos's control loop (userspace/engine/minos_plan.c): this epoch's counts smoothed in, new roles. */
static void minos_replan(struct sim *s)
{
	xkv_minos_ewma(&s->smoothed, s->epoch_counts, XKV_MINOS_ALPHA);
	xkv_minos_plan(&s->smoothed, s->cfg->large_pct, s->ncores, &s->roles);
	memset(s->epoch_counts, 0, sizeof(s->epoch_counts));
	s->next_plan = s->now + s->cfg->epoch_us * 1e3;
	s->plans++;
}

/*
 * As XDP picks for a small request (bpf/steer.h, xkv_small_pick): the less loaded of
 * the partition's owner and one of `candidates` others (xkv_roles_other, include/xkv/
 * roles.h); ties go to the owner. The load is XDP's queue depth: requests placed on
 * the core and not yet finished.
 */
static unsigned minos_small_pick(struct sim *s, unsigned owner, unsigned candidates)
{
	unsigned other;

	if (candidates < 2)
		return owner;
	other = xkv_roles_other(&s->roles, s->roles.nsmall, candidates,
				(uint32_t)(rng_next(&s->read_rng) >> 32));
	return s->cores[other].depth < s->cores[owner].depth ? other : owner;
}

/* A small read (xkv_small_read): the small cores are candidates, the standby while idle. */
static unsigned minos_small_read(struct sim *s, unsigned owner)
{
	const struct xkv_roles *roles = &s->roles;
	unsigned standby = roles->large[0], candidates = roles->nsmall;

	if (roles->standby && standby != owner && s->cores[standby].depth == 0)
		candidates++;
	return minos_small_pick(s, owner, candidates);
}

/*
 * Minos, and xkv: the roles of the epoch steer r as XDP does (include/xkv/roles.h,
 * bpf/steer.h's xkv_minos_worker), and r counts in the epoch's histogram. Under xkv a
 * write the EWT claims is small whatever its size: it joins its slot, or takes it for
 * the less loaded of the owner and another small core. The first arrival of a new
 * epoch has the plan made first.
 */
static struct placement minos_place(struct sim *s, struct sim_req *r)
{
	bool claimed = ewt_claims(s, r);
	uint32_t cls = claimed ? 0 : size_class(r->size);
	unsigned owner, holder;

	if (s->now >= s->next_plan)
		minos_replan(s);
	s->epoch_counts[size_class(r->size)]++;
	if (xkv_roles_is_large(&s->roles, cls))
		return at_core(xkv_roles_large_worker(&s->roles, cls, mix64(r->key)));
	owner = roles_owner(s, r);
	if (claimed)
		return ewt_claim(s, r, ewt_held(s, r, &holder)
					       ? holder
					       : minos_small_pick(s, owner, s->roles.nsmall));
	if (r->is_write || s->cfg->owner_reads)
		return at_core(owner);
	return at_core(minos_small_read(s, owner));
}

bool policy_has_roles(const struct sim *s)
{
	return s->cfg->policy == SIM_MINOS || s->cfg->policy == SIM_XKV;
}

/* Whether core ci is the standby large core of the last plan, which also takes small reads. */
static bool minos_is_standby(const struct sim *s, unsigned ci)
{
	return s->roles.standby && s->roles.large[0] == ci;
}

bool policy_minos_fits(const struct sim *s, unsigned ci, const struct sim_req *r)
{
	const struct xkv_roles *roles = &s->roles;
	uint32_t cls = size_class(r->size);

	if (xkv_roles_is_large(roles, cls)) {
		const struct xkv_class_workers *w = &roles->classes[cls];

		for (unsigned i = w->first; i < (unsigned)w->first + w->count; i++)
			if (roles->large[i] == ci)
				return true;
		return false;
	}
	for (unsigned i = 0; i < roles->nsmall; i++)
		if (roles->small[i] == ci)
			return true;
	return !r->is_write && minos_is_standby(s, ci);
}

void policy_minos_count(struct sim *s, unsigned ci, const struct sim_req *r)
{
	if (!policy_minos_fits(s, ci, r))
		s->res->class_mismatch++;
	if (r->is_write || xkv_roles_is_large(&s->roles, size_class(r->size)))
		return;
	if (ci != roles_owner(s, r))
		s->res->reads_off_owner++;
	if (minos_is_standby(s, ci))
		s->res->standby_reads++;
}

struct placement policy_place(struct sim *s, struct sim_req *r, bool queued)
{
	switch (s->cfg->policy) {
	case SIM_EREW:
	case SIM_HKH:
	case SIM_HKHWS:
		return at_core(partition_owner(s, r));
	case SIM_CREW:
	case SIM_COMP:
		return r->is_write ? at_core(partition_owner(s, r)) : jbsq(s, queued);
	case SIM_DCREW:
		return r->is_write ? dcrew_write(s, r, queued) : jbsq(s, queued);
	case SIM_IDEAL:
		return jbsq(s, queued);
	case SIM_SHO:
		return (struct placement){ .kind = PLACE_SHARED };
	case SIM_MINOS:
	case SIM_XKV:
		return minos_place(s, r);
	case SIM_NPOLICIES:
		break;
	}
	return wait_here;
}

void policy_completed(struct sim *s, const struct sim_req *r)
{
	struct partition *p = &s->parts[r->bucket];

	if (!r->claimed)
		return;
	p->ewt = xkv_ewt_released(p->ewt, 1);
	if (!xkv_ewt_writes(p->ewt))
		ewt_count_change(s, -1);
}

/*
 * Minos's first plan comes from one epoch of the same workload, drawn before the run
 * at its arrival rate: the roles of a server that has served this workload for an
 * epoch already, since a run is often shorter than one. The draws have a stream of
 * their own, so the run's requests are the same under every policy.
 */
static void minos_first_plan(struct sim *s)
{
	uint64_t n = (uint64_t)llround(s->lambda * s->cfg->epoch_us * 1e3);
	struct rng rng;

	rng_seed(&rng, s->cfg->seed, MINOS_STREAM);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t size;
		bool large;

		service_draw(&s->svc, &rng, &large, &size);
		s->epoch_counts[size_class(size)]++;
	}
	minos_replan(s);
}

int policy_init(struct sim *s)
{
	const struct policy_desc *d = &policies[s->cfg->policy];

	s->sync = d->sync;
	s->steal = d->steal;
	s->compact = d->compact;
	s->pull_shared = s->cfg->policy == SIM_SHO;
	if (policy_has_roles(s)) {
		rng_seed(&s->read_rng, s->cfg->seed, MINOS_READ_STREAM);
		minos_first_plan(s);
	}
	return 0;
}
