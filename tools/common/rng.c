// SPDX-License-Identifier: MIT
#include <math.h>

#include "rng.h"

uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	/*
	 * Streams start splitmix64 at points scattered by the mixer; stream 0 at the seed
	 * itself. Their xoshiro sequences begin far apart: overlap is negligible.
	 */
	seed ^= mix64(stream);
	for (int i = 0; i < 4; i++) {
		seed += 0x9e3779b97f4a7c15ULL;
		r->s[i] = mix64(seed);
	}
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

double rng_exp(struct rng *r)
{
	/* 1 - u is in (0, 1]: the log is finite */
	return -log(1.0 - rng_uniform(r));
}
