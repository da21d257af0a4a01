/* SPDX-License-Identifier: MIT */
/*
 * What the load generator asks for, apart from how it is sent: which key (uniform or
 * zipf popularity over a fixed key space), which operation (GET or PUT), the bytes of
 * every key and value, and whether a reply is the right answer.
 *
 * Key i is "k" followed by i in decimal, zero-padded to key_size bytes. Its value is
 * value_size bytes: i as 8 hex digits, then a fixed letter pattern, so that a reply
 * can be checked whole and a value given for the wrong key is caught. Zipf rank r
 * (0 = most popular) is key r, so loading the first N keys loads the N hottest.
 *
 * A workload is read-only once built and shared by every thread; each thread draws
 * from its own struct workload_rng, so a seed fixes every thread's request sequence.
 */
#ifndef XKV_BENCH_WORKLOAD_H
#define XKV_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

#define WORKLOAD_KEYS_MAX  100000000u /* the zipf table costs 8 bytes a key */
#define WORKLOAD_VALUE_MAX 1400u      /* one datagram; values in pieces are not sent yet */
#define WORKLOAD_DGRAM_MAX 1472u      /* UDP payload of a 1500-byte MTU over IPv4 */
#define WORKLOAD_TAG_LEN   8u	      /* hex digits of the key index at a value's start */

struct workload_config {
	uint32_t keys;	     /* key space: indices 0 .. keys - 1 */
	uint32_t key_size;   /* bytes of every key */
	uint32_t value_size; /* bytes of every value */
	double get_ratio;    /* fraction of GETs, 0..1; the rest are PUTs */
	double zipf;	     /* popularity exponent, 0 for uniform */
};

struct workload {
	struct workload_config cfg;
	double *cdf;	  /* zipf only: cdf[r] = P(rank <= r); NULL when uniform */
	uint8_t *pattern; /* the value bytes after the tag, the same for every key */
};

struct workload_rng {
	uint64_t state; /* splitmix64 */
};

enum workload_outcome {
	WORKLOAD_OK,	/* the right answer: a PUT stored, a GET with the key's value */
	WORKLOAD_MISS,	/* a GET answered NOT_FOUND */
	WORKLOAD_ERROR, /* any other status, or a wrong value */
};

/*
 * Checks cfg. Returns 0, or -EINVAL with the reason written to why, e.g. that a key
 * of key_size bytes cannot name that many keys.
 */
int workload_config_check(const struct workload_config *cfg, char *why, size_t why_len);

/* Builds the popularity table. Returns 0, -EINVAL (cfg fails the check) or -ENOMEM. */
int workload_init(struct workload *w, const struct workload_config *cfg);
void workload_free(struct workload *w);

/* Stream `stream` of `seed`: threads with different streams draw unrelated sequences. */
void workload_rng_seed(struct workload_rng *r, uint64_t seed, uint32_t stream);
uint64_t workload_rng_next(struct workload_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double workload_rng_unit(struct workload_rng *r);

/* The next request: XKV_OP_GET or XKV_OP_PUT in *op, and its key index. */
void workload_next(const struct workload *w, struct workload_rng *r, uint8_t *op, uint32_t *key);
/* A key index drawn by popularity alone. */
uint32_t workload_next_key(const struct workload *w, struct workload_rng *r);

/* Write key_size and value_size bytes of key `key` to out. */
void workload_key(const struct workload *w, uint32_t key, uint8_t *out);
void workload_value(const struct workload *w, uint32_t key, uint8_t *out);

/* Judges a decoded reply to request `op` on key `key` (request id already matched). */
enum workload_outcome workload_check_reply(const struct workload *w, uint8_t op, uint32_t key,
					   const struct xkv_msg *reply);

#endif /* XKV_BENCH_WORKLOAD_H */
