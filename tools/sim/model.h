/* SPDX-License-Identifier: MIT */
/* The model's state, shared by the event loop (sim.c) and the placement rules (policy.c). */
#ifndef XKV_SIM_MODEL_H
#define XKV_SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hist.h"
#include "common/rng.h"
#include "common/zipf.h"
#include "dist.h"
#include "engine/minos_plan.h"
#include <xkv/ewt.h>
#include "eventq.h"
#include "sim.h"

#define SIM_NONE	UINT32_MAX
#define SIM_MAX_WINDOWS 4 /* compaction windows open at once on one core */

/* A FIFO threaded through the requests' next links: no allocation to queue. */
struct req_list {
	uint32_t head, tail, len;
};

struct sim_req {
	double arrival;	   /* ns, at the dispatcher */
	double kvs_ns;	   /* store part of the service time */
	uint32_t key;	   /* item rank, 0 the most popular */
	uint32_t size;	   /* value bytes; 0 in the models without sizes */
	uint32_t bucket;   /* store partition */
	uint32_t next;	   /* link in whichever list holds it */
	uint16_t target;   /* core the dispatcher charged it to; cores when none */
	uint8_t is_write;
	uint8_t is_large;
	uint8_t measured;  /* after the warm-up */
	uint8_t tracked;   /* counted by the single-writer check */
	uint8_t claimed;   /* holds its partition's EWT slot until its completion notice */
};

enum job {
	JOB_IDLE,
	JOB_WHOLE,   /* store and fixed time at once: nothing to synchronise */
	JOB_SPIN,    /* a read waits for a write in progress on its partition */
	JOB_KVS,     /* the store part */
	JOB_FIXED,   /* the reply part */
	JOB_COLLECT, /* a write joins a compaction window */
	JOB_APPLY,   /* a window's final value goes to the store */
	JOB_REPLY,   /* a window's writes are answered */
};

struct window {
	uint32_t key;
	uint32_t bucket;
	double deadline;
	double apply_ns;	/* store time of the final write */
	struct req_list writes;
	bool open, closing;
};

struct sim_core {
	struct req_list local;	/* delivered, not yet started */
	uint32_t req;		/* in service, SIM_NONE when idle or busy with a window */
	uint8_t job;
	uint8_t retried;	/* the read in service has already retried once */
	uint8_t applying;	/* window being applied or answered */
	uint32_t read_version;	/* partition version when the read in service began */
	uint32_t outstanding;	/* dispatcher's count: placed here, completion not yet seen */
	uint32_t depth;		/* XDP's queue depth: placed here, not yet finished */
	double busy_since, busy_ns;
	struct window win[SIM_MAX_WINDOWS];
};

struct partition {
	double write_end;	/* when the write in progress leaves the store */
	uint32_t version;	/* odd while a write is in progress */
	uint32_t out_writes;	/* single-writer check: placed and not yet answered */
	uint64_t ewt;		/* d-CREW, xkv: the EWT slot's word (include/xkv/ewt.h) */
	uint16_t out_core;	/* single-writer check: the core those writes were placed on */
};

enum placement_kind { PLACE_CORE, PLACE_SHARED, PLACE_WAIT };

struct placement {
	enum placement_kind kind;
	unsigned index; /* a core */
};

struct sim {
	const struct sim_config *cfg;
	struct sim_results *res;
	struct service_model svc;
	struct zipf zipf;
	struct rng rng;
	struct eventq events;
	struct hist *hist;
	struct hist *hist_small, *hist_large; /* the same latencies, by the model's size */
	double now;
	double lambda;		/* arrivals per ns */
	double slo_ns;

	struct sim_req *reqs;	/* a pool, grown by doubling */
	uint32_t reqs_cap, free_head;

	unsigned ncores;
	struct sim_core *cores;
	struct req_list shared;		/* SHO: the FIFO idle cores pull from */
	bool pull_shared;
	struct req_list waiting;	/* at the dispatcher: no JBSQ slot yet */
	unsigned rotor;			/* where the next scan for a core starts: ties rotate */
	/* Minos's control loop */
	struct xkv_roles roles;		/* the last plan */
	struct xkv_minos_hist smoothed;
	uint64_t epoch_counts[XKV_SIZE_CLASSES]; /* requests dispatched since the last plan */
	double next_plan;
	uint64_t plans;
	struct rng read_rng;		/* small reads' second candidates: a stream of their own */
	struct partition *parts;

	bool sync;		/* readers check versions, writers make them odd */
	bool steal;
	bool compact;

	uint64_t generated, total, warmup_n;
	uint64_t violations, violation_limit;
	double wait_sum;
	uint64_t wait_n;
	double first_measured, last_completion;
	double ewt_area, ewt_changed;
	uint32_t ewt_active;
	bool stop;
	int err;		/* first -errno met inside the loop */
};

/* Placement rules (policy.c) */
int policy_init(struct sim *s);
/* queued: r heads the dispatcher's FIFO; a new arrival (false) must not overtake that FIFO */
struct placement policy_place(struct sim *s, struct sim_req *r, bool queued);
/* Whether the policy follows Minos's roles (minos, xkv). */
bool policy_has_roles(const struct sim *s);
/* Minos: whether the last plan gives core ci requests like r (its size class, a small read). */
bool policy_minos_fits(const struct sim *s, unsigned ci, const struct sim_req *r);
/* Minos: r starts on core ci; counts it in the results' Minos counters. */
void policy_minos_count(struct sim *s, unsigned ci, const struct sim_req *r);
void policy_completed(struct sim *s, const struct sim_req *r);

static inline unsigned partition_owner(const struct sim *s, const struct sim_req *r)
{
	return r->bucket % s->ncores;
}

/*
 * Minos's owner of r's writes, as XDP finds it (xkv_roles_owner): from the XDP
 * partition, one of XKV_PARTITIONS, that the model's finer bucket falls in.
 */
static inline unsigned roles_owner(const struct sim *s, const struct sim_req *r)
{
	return xkv_roles_owner(&s->roles, r->bucket % XKV_PARTITIONS);
}

#endif
