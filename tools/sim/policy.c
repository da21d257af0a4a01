// SPDX-License-Identifier: MIT
/*
 * Placement rules: where the dispatcher sends each request, per policy. The engine
 * charges a core-placed request to that core until the completion notice comes back,
 * which is what JBSQ counts.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim_internal.h"

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

/* d-CREW: a write follows the partition's outstanding writes, else it takes a JBSQ slot. */
static struct placement dcrew_write(struct sim *s, const struct sim_req *r, bool queued)
{
	struct partition *p = &s->parts[r->bucket];
	struct placement pl;

	if (p->ewt_count) {
		p->ewt_count++;
		return at_core(p->ewt_owner);
	}
	pl = jbsq(s, queued);
	if (pl.kind == PLACE_CORE) {
		p->ewt_owner = (uint16_t)pl.index;
		p->ewt_count = 1;
		ewt_count_change(s, 1);
	}
	return pl;
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
		return (struct placement){ .kind = PLACE_SHARED, .index = 0 };
	case SIM_MINOS:
		if (r->is_large)
			return (struct placement){ .kind = PLACE_SHARED, .index = 1 };
		return at_core(r->bucket % s->small_cores);
	case SIM_NPOLICIES:
		break;
	}
	return wait_here;
}

void policy_completed(struct sim *s, const struct sim_req *r)
{
	struct partition *p = &s->parts[r->bucket];

	if (s->cfg->policy != SIM_DCREW || !r->is_write)
		return;
	if (--p->ewt_count == 0)
		ewt_count_change(s, -1);
}

int policy_init(struct sim *s)
{
	const struct policy_desc *d = &policies[s->cfg->policy];

	s->sync = d->sync;
	s->steal = d->steal;
	s->compact = d->compact;
	s->group_pulls[0] = s->cfg->policy == SIM_SHO;
	if (s->cfg->policy != SIM_MINOS)
		return 0;
	/* Minos: small cores in proportion to the small requests' share of the work; at
	 * least one core for large requests always (docs/DESIGN.md invariant 6) */
	s->small_cores = (unsigned)ceil(s->ncores * (1.0 - s->svc.large_share) - 1e-9);
	if (s->small_cores > s->ncores - 1)
		s->small_cores = s->ncores - 1;
	if (s->small_cores < 1)
		s->small_cores = 1;
	for (unsigned i = s->small_cores; i < s->ncores; i++)
		s->cores[i].group = 1;
	s->group_pulls[1] = true;
	return 0;
}
