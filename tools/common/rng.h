/* SPDX-License-Identifier: MIT */
/*
 * The tools' one random number generator: xoshiro256** (Blackman and Vigna), seeded
 * through splitmix64 as its authors recommend. A seed and a stream number fix a
 * sequence: threads take streams 0, 1, 2... of one seed and draw unrelated
 * sequences, each from its own point of a 2^256 - 1 cycle.
 */
#ifndef XKV_TOOLS_RNG_H
#define XKV_TOOLS_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);

/* Uniform in [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift: bias below n / 2^64). */
uint64_t rng_below(struct rng *r, uint64_t n);

/* Exponential with mean 1. */
double rng_exp(struct rng *r);

/* A fixed 64-bit mixer (the splitmix64 finaliser, a bijection with mix64(0) = 0). */
uint64_t mix64(uint64_t x);

#endif /* XKV_TOOLS_RNG_H */
