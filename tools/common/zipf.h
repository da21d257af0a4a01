/* SPDX-License-Identifier: MIT */
/*
 * Zipf popularity over ranks 0..n-1: rank k is drawn with probability proportional to
 * (k + 1)^-s, by rejection-inversion (Hoermann and Derflinger 1996): O(1) a draw and
 * no table, whatever n. Exponent 0 is the uniform distribution.
 */
#ifndef XKV_TOOLS_ZIPF_H
#define XKV_TOOLS_ZIPF_H

#include <stdint.h>

#include "rng.h"

struct zipf {
	uint64_t n;    /* number of ranks */
	double s;      /* exponent */
	double h_x1;   /* H(1.5) - 1 */
	double h_n;    /* H(n + 0.5) */
	double accept; /* 2 - H^-1(H(2.5) - h(2)): ranks this close are accepted at once */
};

/* Returns 0, or -EINVAL unless n >= 1 and s is finite and >= 0. */
int zipf_init(struct zipf *z, uint64_t n, double s);
uint64_t zipf_sample(const struct zipf *z, struct rng *r);

#endif /* XKV_TOOLS_ZIPF_H */
