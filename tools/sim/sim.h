/* SPDX-License-Identifier: MIT */
/*
 * xkv-sim: a discrete-event model of one multi-core key-value server, for comparing
 * steering policies at core counts this machine does not have (docs/SIMULATION.md).
 *
 * One run: requests arrive as a Poisson process at a dispatcher, which places each one
 * on a core's private FIFO, on a shared FIFO that idle cores pull from, or keeps it
 * until JBSQ has a free slot. Cores serve one request at a time, without preemption.
 * Everything is deterministic for a given configuration, seed included. With servers
 * above 1, a run is of the cluster model instead (cluster.h): a coherence directory in
 * front of that many servers.
 */
#ifndef XKV_SIM_H
#define XKV_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

#define SIM_MAX_CORES	 256
#define SIM_MAX_PROBES	 32
#define SIM_PERCENTILE	 99.0 /* the SLO is on this percentile of all requests */

enum sim_service {
	SIM_SVC_C4,	 /* uniform [400, 800] ns store time + fixed time (C-4 Sec. 3) */
	SIM_SVC_BIMODAL, /* unit or K units, K with probability p_large (Minos Sec. 2.2) */
	SIM_SVC_SIZE,	 /* base + bytes * ns_per_byte + fixed, ETC value sizes */
	SIM_SVC_EXP,	 /* exponential with mean unit_ns: the M/M/c check */
	SIM_NSERVICES,
};

enum sim_close {
	SIM_CLOSE_EARLY,    /* at the deadline, or as soon as no matching write is queued */
	SIM_CLOSE_DEADLINE, /* only at the deadline, as C-4 Sec. 3.2 words it */
};

struct sim_config {
	unsigned cores;
	enum sim_policy policy;
	double load;	      /* offered utilisation of all cores; used when rate_mrps is 0 */
	double rate_mrps;     /* offered rate; overrides load when > 0 */
	double write_frac;    /* 0..1 */
	double zipf;	      /* key popularity exponent; 0 is uniform */
	uint32_t items;	      /* distinct keys */
	uint32_t partitions;  /* store partitions (hash buckets); owner = partition mod cores */
	enum sim_service service;
	double fixed_ns;      /* per-request network/reply time (c4 and size models) */
	double unit_ns;	      /* bimodal: small service time; exp: mean */
	double k;	      /* bimodal: large / small service time */
	double p_large;	      /* bimodal: fraction of large requests */
	uint32_t small_bytes; /* bimodal: value size of a small request */
	uint32_t large_bytes; /* bimodal: value size of a large request */
	double size_base_ns;  /* size model: store time of an empty value */
	double ns_per_byte;   /* size model */
	uint32_t max_size;    /* size model: values are clamped here */
	double large_pct;     /* size model's large values and Minos's threshold: above this
				 percentile */
	double epoch_us;      /* Minos: time between two plans of the control loop */
	bool owner_reads;     /* Minos: small reads to their partition's owner only, bound by
				 key as in the paper; false: balanced as XDP balances them */
	double channel_ns;    /* dispatcher -> core and completion -> dispatcher */
	unsigned jbsq;	      /* JBSQ bound: outstanding per core, the one in service included */
	double comp_ns;	      /* compaction: time to add one write to an open window */
	enum sim_close close;
	unsigned lookahead;   /* compaction: queue slots scanned for a matching write */
	double slo_mult;      /* SLO = slo_mult * mean service time, on the 99th percentile */
	uint64_t requests;    /* generated, warm-up included */
	double duration_us;   /* when > 0, requests = rate * duration */
	double warmup;	      /* fraction of the first requests left out of the statistics */
	uint64_t seed;
	bool stop_on_violation; /* end as soon as the SLO is certainly missed (for searches) */
	/* the cluster model (cluster.h), when servers > 1: cores is each server's */
	unsigned servers;     /* 1: one server, the model above */
	unsigned dir_select;  /* enum cluster_select: ketama alone, or the directory's strategy */
	unsigned replicated;  /* the hottest keys the directory holds; 0: ceil(n ln n) */
	unsigned write_servers; /* a write's servers at most, as its key's reads per write */
	double popular_ppm;   /* popularity: a popular key's share of requests, per million */
	double hop_ns;	      /* directory to a server, and a reply back, each */
};

struct sim_results {
	uint64_t requests;	   /* generated */
	uint64_t measured;	   /* completed and counted (after the warm-up) */
	double offered_load;	   /* utilisation the arrival rate asks for */
	double offered_mrps;
	double throughput_mrps;	   /* measured completions over the measured interval */
	double mean_service_ns;	   /* of the service model, without synchronisation */
	double slo_ns;
	double mean_ns, p50_ns, p99_ns, p999_ns, max_ns;
	bool sized;		   /* the service model gives sizes: the two p99s below are set */
	double p99_small_ns, p99_large_ns; /* of the requests the model calls small, large */
	double mean_wait_ns;	   /* arrival to first instant on a core */
	bool meets_slo;		   /* p99 <= slo_ns */
	bool stopped_early;	   /* stop_on_violation ended the run */
	uint64_t reads_off_owner;  /* reads served by a core other than the partition owner */
	uint64_t writes_off_owner;
	uint64_t writer_conflicts; /* writes placed on a core while another core had one outstanding
				      for the same partition */
	uint64_t stolen;	   /* requests taken from another core's queue */
	uint64_t class_mismatch;   /* Minos: served on a core the current plan does not give
				      its size class (a plan changed while it was queued) */
	uint64_t standby_reads;	   /* Minos: small reads served by the standby large core */
	uint64_t spins;		   /* times a read waited for a write in progress */
	uint64_t retries;	   /* reads re-executed because a write ran meanwhile */
	uint64_t compacted;	   /* writes answered from a compaction window */
	uint64_t windows;	   /* compaction windows closed */
	uint64_t window_max;	   /* most writes answered by one window */
	double ewt_mean, ewt_max;  /* d-CREW: active EWT entries, time average and maximum */
	unsigned small_cores;	   /* Minos: the last plan's */
	unsigned large_cores;	   /* Minos: the last plan's, the standby core included */
	bool standby;		   /* Minos: the last plan's large core is also a small one */
	unsigned threshold_class;  /* Minos: the last plan's largest small size class */
	uint64_t plans;		   /* Minos: plans made, the one before the run included */
	unsigned cores;		   /* util[]'s: cores, or the cluster model's servers */
	double util_mean, util_min, util_max;
	double util[SIM_MAX_CORES];
	unsigned servers;	   /* cluster: servers; 0 for one server */
	unsigned replicated;	   /* cluster: keys the directory held */
	double replicated_share;   /* cluster: of the requests, those for the keys it held */
	double server_share_max;   /* cluster: the busiest server's requests over the mean */
};

struct sim_search {
	double max_load;	  /* highest offered utilisation found to meet the SLO; 0 if none */
	double max_mrps;
	unsigned probes;
	double probe_load[SIM_MAX_PROBES];
	double probe_p99[SIM_MAX_PROBES];
	bool probe_ok[SIM_MAX_PROBES];
	struct sim_results at_max; /* the run at max_load */
};

void sim_config_defaults(struct sim_config *cfg);
int sim_config_validate(const struct sim_config *cfg);

int sim_service_parse(const char *name, enum sim_service *out);
const char *sim_service_name(enum sim_service s);

/* Mean service time of the configured model (ns), the unit of load and of the SLO. */
double sim_mean_service_ns(const struct sim_config *cfg);

/* Returns 0, -EINVAL for a bad configuration or -ENOMEM. */
int sim_run(const struct sim_config *cfg, struct sim_results *res);

/*
 * Bisects the offered load in (0, max_load] for the highest one whose 99th percentile
 * stays within the SLO, in `steps` probes. Same return values as sim_run.
 */
int sim_search(const struct sim_config *cfg, double max_load, unsigned steps,
	       struct sim_search *out);

#endif
