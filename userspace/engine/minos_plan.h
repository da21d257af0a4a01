/* SPDX-License-Identifier: MIT */
/*
 * The arithmetic of Minos's control loop (Didona & Zwaenepoel, NSDI'19, Sec. 3.1):
 * smoothing the epoch's size-class histogram, the threshold class at the target
 * percentile, and the roles (struct xkv_roles) that follow from the cost of each
 * class. Pure functions: the caller gathers the counts and publishes the roles.
 */
#ifndef XKV_ENGINE_MINOS_PLAN_H
#define XKV_ENGINE_MINOS_PLAN_H

#include <stdint.h>

#include <xkv/roles.h>

#define XKV_MINOS_PIECE_BYTES 1400 /* value bytes one datagram carries: the unit of cost */
#define XKV_MINOS_ALPHA	      0.9  /* weight of the new epoch's counts (the paper's) */
#define XKV_MINOS_PERCENTILE  99.0 /* the percentile whose requests small workers serve */

/* Smoothed requests per size class. */
struct xkv_minos_hist {
	double count[XKV_SIZE_CLASSES];
};

/*
 * Packets one request of class cls (< XKV_SIZE_CLASSES) moves: at least one, else
 * ceil(size / XKV_MINOS_PIECE_BYTES) for the class's middle size (class 0: 0 bytes,
 * class 1: 1, class c >= 2: 3 * 2^(c-2)).
 */
double xkv_minos_class_cost(uint32_t cls);

/*
 * Smooths one epoch's counts into cur: cur = (1 - alpha) * cur + alpha * sample. An
 * all-zero cur has no history yet, so the sample is taken as it is.
 */
void xkv_minos_ewma(struct xkv_minos_hist *cur, const uint64_t sample[XKV_SIZE_CLASSES],
		    double alpha);

/*
 * The smallest class whose cumulative count reaches percentile (0..100) % of all
 * requests; fallback when the histogram holds none.
 */
uint32_t xkv_minos_threshold(const struct xkv_minos_hist *h, double percentile, uint32_t fallback);

/*
 * The roles for `workers` workers (clamped to 1..XKV_WORKERS_MAX) at percentile
 * (0..100): every field of *out but gen, which the publisher owns. Small workers are
 * 0..nsmall-1, in number ceil(workers * small cost / total cost); the rest are
 * large, each given a contiguous range of the classes above the threshold of equal
 * cost. When every worker would be small, the last one is the standby large worker
 * instead: it owns no partition (unless it is the only worker) and takes small reads
 * while idle. With no data the threshold is the class of XKV_MINOS_PIECE_BYTES.
 */
void xkv_minos_plan(const struct xkv_minos_hist *h, double percentile, uint32_t workers,
		    struct xkv_roles *out);

#endif /* XKV_ENGINE_MINOS_PLAN_H */
