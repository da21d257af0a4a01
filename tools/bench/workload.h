/* SPDX-License-Identifier: MIT */
/*
 * What the load generator asks for, apart from how it is sent: which key (uniform or
 * zipf popularity over a fixed key space), which operation (GET or PUT), the bytes of
 * every key and value, and whether a reply is the right answer.
 *
 * Key i is "k" followed by i in decimal, zero-padded to key_size bytes. Its value's
 * size is fixed by i and the profile; its bytes are i as 8 hex digits, then the
 * letters a..z over and over (byte j is 'a' + j % 26), so that a reply, or any piece
 * of one, can be checked without keeping the value and a value given for the wrong
 * key is caught.
 *
 * Value size profiles (Minos, NSDI'19, Sec. 2.2 and 5.3):
 *   fixed    every value value_size bytes
 *   bimodal  small values of value_size bytes; large_pct % of requests go to large
 *            values of large_size bytes
 *   etc      the trimodal ETC profile: 40 % of the keys tiny (1-13 B) and 60 % small
 *            (14-1400 B), large_pct % of requests to large values (1500-large_size B),
 *            each size uniform within its class
 * Large keys are the last large_keys indices and are picked uniformly; the others
 * by popularity, zipf rank r being key r, so loading the first N keys loads the N
 * hottest. Minos keeps 10 K large items among 16 M; large_keys defaults to the same
 * share of the key space.
 *
 * Popularity that moves (Pegasus, SOSP'17, Sec. 8.6), counted from the measured phase's
 * start: every shuffle_s seconds the ranks move to other keys, rank r becoming key
 * (r + offset) mod regular_keys for an offset drawn afresh by the period's number, the
 * same in every thread (the hot set is new keys, placed afresh by ketama); after
 * hot_in_s seconds the coldest rank and the hottest trade places, so that a key never
 * asked for becomes the most asked for at once. Before either, rank r is key r.
 *
 * A workload is read-only once built and shared by every thread; each thread draws
 * from its own stream of the seed (common/rng.h), so a seed fixes every thread's
 * request sequence.
 */
#ifndef XKV_BENCH_WORKLOAD_H
#define XKV_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"
#include "common/zipf.h"
#include "proto/codec.h"

#define WORKLOAD_KEYS_MAX  100000000u
#define WORKLOAD_VALUE_MAX XKV_VALUE_MAX
#define WORKLOAD_TAG_LEN   8u	 /* hex digits of the key index at a value's start */
#define WORKLOAD_TINY_MAX  13u	 /* Minos's ETC size classes: tiny 1-13 B, */
#define WORKLOAD_SMALL_MAX 1400u /* small 14-1400 B, */
#define WORKLOAD_LARGE_MIN 1500u /* large from 1500 B */
#define WORKLOAD_CHUNK	   4096u /* values are written and checked this much at a time */
#define WORKLOAD_LARGE_SHARE (10000.0 / 16000000.0) /* Minos: 10 K large keys of 16 M */
#define WORKLOAD_MOVE_MAX_S  86400.0 /* --shuffle and --hot-in: at most a day */

enum workload_profile {
	WORKLOAD_FIXED,
	WORKLOAD_BIMODAL,
	WORKLOAD_ETC,
};

/* A value's size class, by size alone: large values take more than one datagram. */
enum workload_size_class {
	WORKLOAD_TINY,	/* up to WORKLOAD_TINY_MAX bytes */
	WORKLOAD_SMALL, /* up to WORKLOAD_SMALL_MAX bytes */
	WORKLOAD_LARGE,
	WORKLOAD_SIZE_CLASSES,
};

struct workload_config {
	uint32_t keys;	     /* key space: indices 0 .. keys - 1 */
	uint32_t key_size;   /* bytes of every key */
	enum workload_profile profile;
	uint32_t value_size; /* fixed and bimodal: bytes of every (small) value */
	double large_pct;    /* bimodal and etc: percent of requests for large values */
	uint32_t large_size; /* bimodal: bytes of a large value; etc: the largest */
	uint32_t large_keys; /* bimodal and etc: how many keys are large; 0: the default */
	double get_ratio;    /* fraction of GETs, 0..1; the rest are PUTs */
	double zipf;	     /* popularity exponent, 0 for uniform */
	double shuffle_s;    /* the ranks move to other keys this often; 0: never */
	double hot_in_s;     /* the coldest rank becomes the hottest then; 0: never */
};

struct workload {
	struct workload_config cfg;
	uint32_t regular_keys; /* keys 0 .. regular_keys - 1 go by popularity */
	double large_p;	       /* probability that a request is for a large key */
	struct zipf popularity; /* of keys 0 .. regular_keys - 1, rank r being key r */
	uint64_t shuffle_ns, hot_in_ns; /* cfg's, 0: never */
	uint8_t letters[WORKLOAD_CHUNK + 26]; /* a..z over and over: a chunk at any phase */
};

enum workload_outcome {
	WORKLOAD_OK,	/* the right answer: a PUT stored, a GET with the key's value */
	WORKLOAD_MISS,	/* a GET answered NOT_FOUND */
	WORKLOAD_ERROR, /* any other status, or a wrong value */
	WORKLOAD_PARTIAL, /* a right piece of a GET's value; more are to come */
};

/*
 * Checks cfg. Returns 0, or -EINVAL with the reason written to why, e.g. that a key
 * of key_size bytes cannot name that many keys.
 */
int workload_config_check(const struct workload_config *cfg, char *why, size_t why_len);

/* "fixed", "bimodal", "etc" */
const char *workload_profile_name(enum workload_profile p);

/* large_keys as the workload will use it: cfg's, or the default share. */
uint32_t workload_large_keys(const struct workload_config *cfg);

/* Returns 0, or -EINVAL when cfg fails the check. */
int workload_init(struct workload *w, const struct workload_config *cfg);

/* The next request: XKV_OP_GET or XKV_OP_PUT in *op, and its key index. */
void workload_next(const struct workload *w, struct rng *r, uint8_t *op, uint32_t *key);
/*
 * The same elapsed_ns into the measured phase (which the popularity's moves count
 * from), with large_p, not the workload's, the probability of a large key (a
 * schedule's, interval.h): the same draws from r, so a seed fixes the requests.
 */
void workload_next_p(const struct workload *w, struct rng *r, double large_p,
		     uint64_t elapsed_ns, uint8_t *op, uint32_t *key);
/* The key of popularity rank `rank` (0: the hottest) elapsed_ns into the phase. */
uint32_t workload_rank_key(const struct workload *w, uint32_t rank, uint64_t elapsed_ns);
/* A key index drawn by popularity alone. */
uint32_t workload_next_key(const struct workload *w, struct rng *r);

/* Writes the key_size bytes of key `key` to out. */
void workload_key(const struct workload *w, uint32_t key, uint8_t *out);
/* The size of key's value, and the largest of any key. */
uint32_t workload_value_size(const struct workload *w, uint32_t key);
uint32_t workload_value_size_max(const struct workload_config *cfg);
static inline enum workload_size_class workload_size_class(uint32_t size)
{
	return size <= WORKLOAD_TINY_MAX ? WORKLOAD_TINY
	       : size <= WORKLOAD_SMALL_MAX ? WORKLOAD_SMALL
					    : WORKLOAD_LARGE;
}
/* Writes bytes offset .. offset + len of key's value to out. */
void workload_value(const struct workload *w, uint32_t key, uint32_t offset, uint32_t len,
		    uint8_t *out);

/*
 * Judges a decoded reply to request `op` on key `key` (request id already matched).
 * A GET's value may come in pieces: *received counts the bytes taken so far (0 for
 * the first datagram); a right piece that is not the last returns WORKLOAD_PARTIAL.
 * Pieces are taken in order: a piece taken before is ignored, and so is one that
 * comes before the next expected piece, so a reply with a piece missing, or
 * reordered, never completes (the loop counts it lost). Any wrong piece is an error.
 */
enum workload_outcome workload_check_reply(const struct workload *w, uint8_t op, uint32_t key,
					   const struct xkv_msg *reply, uint32_t *received);

#endif /* XKV_BENCH_WORKLOAD_H */
