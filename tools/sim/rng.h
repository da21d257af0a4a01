/* SPDX-License-Identifier: MIT */
/* xoshiro256** seeded through splitmix64: the simulator's only source of randomness. */
#ifndef XKV_SIM_RNG_H
#define XKV_SIM_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);

/* Uniform in [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, bias below 2^-32 for our n). */
uint64_t rng_below(struct rng *r, uint64_t n);

/* Exponential with mean 1. */
double rng_exp(struct rng *r);

/* A fixed 64-bit mixer (the splitmix64 finaliser): item rank -> key hash, seed-independent. */
uint64_t mix64(uint64_t x);

#endif
