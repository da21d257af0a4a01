// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static unsigned decimal_digits(uint32_t n)
{
	unsigned digits = 1;

	while (n >= 10) {
		n /= 10;
		digits++;
	}
	return digits;
}

int workload_config_check(const struct workload_config *cfg, char *why, size_t why_len)
{
	uint32_t put_len = sizeof(struct xkv_hdr) + cfg->key_size + cfg->value_size;
	unsigned key_min = cfg->keys ? 1 + decimal_digits(cfg->keys - 1) : 1;

	if (cfg->keys < 1 || cfg->keys > WORKLOAD_KEYS_MAX)
		snprintf(why, why_len, "--keys %u: must be 1..%u", cfg->keys, WORKLOAD_KEYS_MAX);
	else if (cfg->key_size < key_min || cfg->key_size > XKV_KEY_MAX)
		snprintf(why, why_len,
			 "--key-size %u: %u keys are named \"k\" + %u digits, so %u..%u bytes",
			 cfg->key_size, cfg->keys, key_min - 1, key_min, XKV_KEY_MAX);
	else if (cfg->value_size > WORKLOAD_VALUE_MAX)
		snprintf(why, why_len,
			 "--value-size %u: at most %u bytes, one datagram (values sent in pieces "
			 "are not supported yet)",
			 cfg->value_size, WORKLOAD_VALUE_MAX);
	else if (put_len > WORKLOAD_DGRAM_MAX)
		snprintf(why, why_len,
			 "a PUT of a %u-byte key and a %u-byte value is a %u-byte datagram, over "
			 "the %u bytes one datagram carries on a 1500-byte MTU",
			 cfg->key_size, cfg->value_size, put_len, WORKLOAD_DGRAM_MAX);
	else if (!(cfg->get_ratio >= 0 && cfg->get_ratio <= 1))
		snprintf(why, why_len, "--get-ratio %g: must be 0..1", cfg->get_ratio);
	else if (!(cfg->zipf >= 0 && isfinite(cfg->zipf)))
		snprintf(why, why_len, "--zipf %g: must be 0 (uniform) or more", cfg->zipf);
	else
		return 0;
	return -EINVAL;
}

int workload_init(struct workload *w, const struct workload_config *cfg)
{
	char why[160];
	double sum = 0;

	if (workload_config_check(cfg, why, sizeof(why)))
		return -EINVAL;
	*w = (struct workload){.cfg = *cfg};
	w->pattern = malloc(cfg->value_size + 1);
	if (!w->pattern)
		return -ENOMEM;
	for (uint32_t i = 0; i < cfg->value_size; i++)
		w->pattern[i] = (uint8_t)('a' + i % 26);
	if (cfg->zipf == 0)
		return 0;

	w->cdf = malloc(sizeof(*w->cdf) * cfg->keys);
	if (!w->cdf) {
		workload_free(w);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < cfg->keys; r++) {
		sum += pow(r + 1.0, -cfg->zipf);
		w->cdf[r] = sum;
	}
	for (uint32_t r = 0; r < cfg->keys; r++)
		w->cdf[r] /= sum;
	w->cdf[cfg->keys - 1] = 1.0; /* rounding must not leave a draw past the last rank */
	return 0;
}

void workload_free(struct workload *w)
{
	free(w->cdf);
	free(w->pattern);
	w->cdf = NULL;
	w->pattern = NULL;
}

static uint64_t splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void workload_rng_seed(struct workload_rng *r, uint64_t seed, uint32_t stream)
{
	/* random starting points in splitmix64's one 2^64 cycle: overlap is negligible */
	r->state = splitmix64_mix(seed ^ splitmix64_mix(stream + 1ULL));
}

uint64_t workload_rng_next(struct workload_rng *r)
{
	r->state += 0x9e3779b97f4a7c15ULL;
	return splitmix64_mix(r->state);
}

double workload_rng_unit(struct workload_rng *r)
{
	return (double)(workload_rng_next(r) >> 11) * 0x1p-53;
}

uint32_t workload_next_key(const struct workload *w, struct workload_rng *r)
{
	uint32_t lo = 0, hi;
	double u;

	if (!w->cdf) /* Lemire's multiply-shift: bias below keys / 2^64 */
		return (uint32_t)(((unsigned __int128)workload_rng_next(r) * w->cfg.keys) >> 64);
	/* the first rank whose cumulative probability exceeds u */
	u = workload_rng_unit(r);
	hi = w->cfg.keys - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void workload_next(const struct workload *w, struct workload_rng *r, uint8_t *op, uint32_t *key)
{
	*op = workload_rng_unit(r) < w->cfg.get_ratio ? XKV_OP_GET : XKV_OP_PUT;
	*key = workload_next_key(w, r);
}

void workload_key(const struct workload *w, uint32_t key, uint8_t *out)
{
	out[0] = 'k';
	for (uint32_t i = w->cfg.key_size - 1; i >= 1; i--) {
		out[i] = (uint8_t)('0' + key % 10);
		key /= 10;
	}
}

/* The first WORKLOAD_TAG_LEN bytes of key's value: its index in hex. */
static void value_tag(uint32_t key, uint8_t tag[WORKLOAD_TAG_LEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = WORKLOAD_TAG_LEN - 1; i >= 0; i--) {
		tag[i] = (uint8_t)hex[key & 0xf];
		key >>= 4;
	}
}

void workload_value(const struct workload *w, uint32_t key, uint8_t *out)
{
	uint32_t size = w->cfg.value_size;
	uint8_t tag[WORKLOAD_TAG_LEN];
	uint32_t tag_len = size < WORKLOAD_TAG_LEN ? size : WORKLOAD_TAG_LEN;

	value_tag(key, tag);
	memcpy(out, tag, tag_len);
	memcpy(out + tag_len, w->pattern + tag_len, size - tag_len);
}

static int value_matches(const struct workload *w, uint32_t key, const uint8_t *value)
{
	uint8_t expected[WORKLOAD_VALUE_MAX];

	workload_value(w, key, expected);
	return !memcmp(value, expected, w->cfg.value_size);
}

enum workload_outcome workload_check_reply(const struct workload *w, uint8_t op, uint32_t key,
					   const struct xkv_msg *reply)
{
	if (reply->op != (op | XKV_OP_REPLY))
		return WORKLOAD_ERROR;
	if (op == XKV_OP_GET && reply->status == XKV_S_NOT_FOUND)
		return WORKLOAD_MISS;
	if (reply->status != XKV_S_OK)
		return WORKLOAD_ERROR;
	if (op == XKV_OP_PUT)
		return reply->value_len == 0 ? WORKLOAD_OK : WORKLOAD_ERROR;
	/* a GET hit: the whole value, in this one datagram, for this key */
	if (reply->value_len != w->cfg.value_size || reply->frag_offset != 0 ||
	    reply->frag_len != reply->value_len || !value_matches(w, key, reply->frag))
		return WORKLOAD_ERROR;
	return WORKLOAD_OK;
}
