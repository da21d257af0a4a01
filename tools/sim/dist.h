/* SPDX-License-Identifier: MIT */
/* Service times; key popularity is common/zipf.h. */
#ifndef XKV_SIM_DIST_H
#define XKV_SIM_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/rng.h"
#include "sim.h"

/* C-4 Sec. 3: T_kvs uniform in [400, 800] ns */
#define C4_KVS_MIN_NS 400.0
#define C4_KVS_MAX_NS 800.0

struct service_model {
	enum sim_service kind;
	double fixed_ns;	/* added to every request after its store time */
	double unit_ns, k, p_large;
	uint32_t small_bytes, large_bytes; /* bimodal: the two value sizes */
	double base_ns, ns_per_byte;
	double max_size;	/* bytes */
	double max_u;		/* quantile of max_size: above it sizes are clamped */
	double threshold;	/* size model: a value larger than this is large */
	double mean_ns;		/* store time + fixed time, averaged */
	bool sized;		/* requests have value sizes (bimodal, size) */
};

int service_init(struct service_model *m, const struct sim_config *cfg);

/*
 * Draws the store part of one request's service time, whether the request is large
 * and its value size (0 in the models without sizes).
 */
double service_draw(const struct service_model *m, struct rng *r, bool *large, uint32_t *size);

/* Value size at quantile u of the ETC distribution, unclamped. */
double etc_size_quantile(double u);

#endif
