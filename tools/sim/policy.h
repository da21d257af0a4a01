/* SPDX-License-Identifier: MIT */
/* The steering policies xkv-sim models (tools/sim/policy.c places requests by them). */
#ifndef XKV_SIM_POLICY_H
#define XKV_SIM_POLICY_H

enum sim_policy {
	SIM_EREW,  /* every request to the static owner of its partition */
	SIM_CREW,  /* writes to the static owner, reads by JBSQ */
	SIM_DCREW, /* writes to the EWT owner while one is outstanding, else JBSQ */
	SIM_IDEAL, /* everything by JBSQ, no synchronisation at all */
	SIM_HKH,   /* Minos' early binding by key hash (same placement as EREW) */
	SIM_SHO,   /* late binding: one shared FIFO, idle cores pull */
	SIM_HKHWS, /* early binding plus stealing by idle cores */
	SIM_MINOS, /* Minos's control loop: small requests by key on small cores, large ones by
		      size class on large cores */
	SIM_COMP,  /* CREW with write compaction on the workers (C-4 Sec. 3.2) */
	SIM_XKV,   /* the server's default: Minos's roles, d-CREW's EWT for writes in one
		      datagram, write compaction */
	SIM_NPOLICIES,
};

/* The policy of that name (erew, crew, ...): 0, or -EINVAL. */
int sim_policy_parse(const char *name, enum sim_policy *out);
const char *sim_policy_name(enum sim_policy p);

#endif
