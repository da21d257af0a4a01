// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
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

const char *workload_profile_name(enum workload_profile p)
{
	static const char *const names[] = {
		[WORKLOAD_FIXED] = "fixed", [WORKLOAD_BIMODAL] = "bimodal", [WORKLOAD_ETC] = "etc"};

	return names[p];
}

uint32_t workload_large_keys(const struct workload_config *cfg)
{
	double share;

	if (cfg->profile == WORKLOAD_FIXED || cfg->large_pct == 0)
		return 0;
	if (cfg->large_keys)
		return cfg->large_keys;
	share = ceil(cfg->keys * WORKLOAD_LARGE_SHARE);
	return share < cfg->keys - 1 ? (uint32_t)share : cfg->keys - 1;
}

/* The size checks of profile cfg->profile; 0 or -EINVAL with why written. */
static int sizes_check(const struct workload_config *cfg, char *why, size_t why_len)
{
	uint32_t large_min = cfg->profile == WORKLOAD_ETC ? WORKLOAD_LARGE_MIN : 1;

	if (cfg->profile != WORKLOAD_ETC && cfg->value_size > WORKLOAD_VALUE_MAX)
		snprintf(why, why_len, "--value-size %u: at most %u bytes", cfg->value_size,
			 WORKLOAD_VALUE_MAX);
	else if (cfg->profile == WORKLOAD_FIXED)
		return 0;
	else if (!(cfg->large_pct >= 0 && cfg->large_pct < 100))
		snprintf(why, why_len, "--large-pct %g: must be 0 or more and below 100",
			 cfg->large_pct);
	else if (cfg->large_pct == 0)
		return 0;
	else if (cfg->large_size < large_min || cfg->large_size > WORKLOAD_VALUE_MAX)
		snprintf(why, why_len, "--large-size %u: must be %u..%u bytes", cfg->large_size,
			 large_min, WORKLOAD_VALUE_MAX);
	else if (cfg->keys < 2 || workload_large_keys(cfg) >= cfg->keys)
		snprintf(why, why_len,
			 "--large-keys %u: must leave small keys among the %u (at least 2 keys)",
			 workload_large_keys(cfg), cfg->keys);
	else
		return 0;
	return -EINVAL;
}

int workload_config_check(const struct workload_config *cfg, char *why, size_t why_len)
{
	unsigned key_min = cfg->keys ? 1 + decimal_digits(cfg->keys - 1) : 1;

	if (cfg->keys < 1 || cfg->keys > WORKLOAD_KEYS_MAX)
		snprintf(why, why_len, "--keys %u: must be 1..%u", cfg->keys, WORKLOAD_KEYS_MAX);
	else if (cfg->key_size < key_min || cfg->key_size > XKV_KEY_MAX)
		snprintf(why, why_len,
			 "--key-size %u: %u keys are named \"k\" + %u digits, so %u..%u bytes",
			 cfg->key_size, cfg->keys, key_min - 1, key_min, XKV_KEY_MAX);
	else if (sizeof(struct xkv_hdr) + cfg->key_size >= XKV_DGRAM_MAX)
		snprintf(why, why_len, "--key-size %u: leaves no room for a value in a datagram",
			 cfg->key_size);
	else if (sizes_check(cfg, why, why_len))
		return -EINVAL;
	else if (!(cfg->get_ratio >= 0 && cfg->get_ratio <= 1))
		snprintf(why, why_len, "--get-ratio %g: must be 0..1", cfg->get_ratio);
	else if (!(cfg->zipf >= 0 && isfinite(cfg->zipf)))
		snprintf(why, why_len, "--zipf %g: must be 0 (uniform) or more", cfg->zipf);
	else if (!(cfg->shuffle_s >= 0 && cfg->shuffle_s <= WORKLOAD_MOVE_MAX_S))
		snprintf(why, why_len, "--shuffle %g: must be 0 (never) to %g s", cfg->shuffle_s,
			 WORKLOAD_MOVE_MAX_S);
	else if (!(cfg->hot_in_s >= 0 && cfg->hot_in_s <= WORKLOAD_MOVE_MAX_S))
		snprintf(why, why_len, "--hot-in %g: must be 0 (never) to %g s", cfg->hot_in_s,
			 WORKLOAD_MOVE_MAX_S);
	else
		return 0;
	return -EINVAL;
}

int workload_init(struct workload *w, const struct workload_config *cfg)
{
	char why[160];

	if (workload_config_check(cfg, why, sizeof(why)))
		return -EINVAL;
	*w = (struct workload){.cfg = *cfg};
	w->cfg.large_keys = workload_large_keys(cfg);
	w->regular_keys = cfg->keys - w->cfg.large_keys;
	w->large_p = w->cfg.large_keys ? cfg->large_pct / 100 : 0;
	for (uint32_t i = 0; i < sizeof(w->letters); i++)
		w->letters[i] = (uint8_t)('a' + i % 26);
	w->shuffle_ns = (uint64_t)(cfg->shuffle_s * 1e9);
	w->hot_in_ns = (uint64_t)(cfg->hot_in_s * 1e9);
	return zipf_init(&w->popularity, w->regular_keys, cfg->zipf);
}

uint32_t workload_rank_key(const struct workload *w, uint32_t rank, uint64_t elapsed_ns)
{
	uint32_t n = w->regular_keys, coldest = n - 1;
	uint64_t period;

	if (w->hot_in_ns && elapsed_ns >= w->hot_in_ns)
		rank = rank == 0 ? coldest : rank == coldest ? 0 : rank;
	if (!w->shuffle_ns)
		return rank;
	period = elapsed_ns / w->shuffle_ns;
	/* period 0 keeps rank r on key r: what the load phase wrote first is hottest */
	return period ? (uint32_t)((rank + mix64(period) % n) % n) : rank;
}

static uint32_t next_key(const struct workload *w, struct rng *r, double large_p,
			 uint64_t elapsed_ns)
{
	if (large_p && w->cfg.large_keys && rng_uniform(r) < large_p) /* large keys: uniform */
		return w->regular_keys + (uint32_t)rng_below(r, w->cfg.large_keys);
	return workload_rank_key(w, (uint32_t)zipf_sample(&w->popularity, r), elapsed_ns);
}

uint32_t workload_next_key(const struct workload *w, struct rng *r)
{
	return next_key(w, r, w->large_p, 0);
}

void workload_next_p(const struct workload *w, struct rng *r, double large_p,
		     uint64_t elapsed_ns, uint8_t *op, uint32_t *key)
{
	*op = rng_uniform(r) < w->cfg.get_ratio ? XKV_OP_GET : XKV_OP_PUT;
	*key = next_key(w, r, large_p, elapsed_ns);
}

void workload_next(const struct workload *w, struct rng *r, uint8_t *op, uint32_t *key)
{
	workload_next_p(w, r, w->large_p, 0, op, key);
}

void workload_key(const struct workload *w, uint32_t key, uint8_t *out)
{
	out[0] = 'k';
	for (uint32_t i = w->cfg.key_size - 1; i >= 1; i--) {
		out[i] = (uint8_t)('0' + key % 10);
		key /= 10;
	}
}

/* A value's size is a function of its key alone: every run loads the same values. */
uint32_t workload_value_size(const struct workload *w, uint32_t key)
{
	const struct workload_config *cfg = &w->cfg;
	uint64_t h = mix64(key + 0x5eedULL);

	if (key >= w->regular_keys) {
		if (cfg->profile == WORKLOAD_BIMODAL)
			return cfg->large_size;
		return WORKLOAD_LARGE_MIN +
		       (uint32_t)(h % (cfg->large_size - WORKLOAD_LARGE_MIN + 1));
	}
	if (cfg->profile != WORKLOAD_ETC)
		return cfg->value_size;
	/* 40 % tiny, 60 % small: the low bits pick the class, the high bits the size */
	if ((uint32_t)h % 10 < 4)
		return 1 + (uint32_t)((h >> 32) % WORKLOAD_TINY_MAX);
	return WORKLOAD_TINY_MAX + 1 +
	       (uint32_t)((h >> 32) % (WORKLOAD_SMALL_MAX - WORKLOAD_TINY_MAX));
}

uint32_t workload_value_size_max(const struct workload_config *cfg)
{
	uint32_t regular = cfg->profile == WORKLOAD_ETC ? WORKLOAD_SMALL_MAX : cfg->value_size;

	if (workload_large_keys(cfg) && cfg->large_size > regular)
		return cfg->large_size;
	return regular;
}

/* The value's first WORKLOAD_TAG_LEN bytes: its key's index in hex. */
static void value_tag(uint32_t key, uint8_t tag[WORKLOAD_TAG_LEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = WORKLOAD_TAG_LEN - 1; i >= 0; i--) {
		tag[i] = (uint8_t)hex[key & 0xf];
		key >>= 4;
	}
}

void workload_value(const struct workload *w, uint32_t key, uint32_t offset, uint32_t len,
		    uint8_t *out)
{
	uint8_t tag[WORKLOAD_TAG_LEN];

	value_tag(key, tag);
	for (; len && offset < WORKLOAD_TAG_LEN; len--)
		*out++ = tag[offset++];
	while (len) {
		uint32_t n = len < WORKLOAD_CHUNK ? len : WORKLOAD_CHUNK;

		memcpy(out, w->letters + offset % 26, n);
		out += n;
		offset += n;
		len -= n;
	}
}

/* Whether value bytes offset .. offset + len of key's value are those at p. */
static bool value_matches(const struct workload *w, uint32_t key, uint32_t offset, uint32_t len,
			  const uint8_t *p)
{
	uint8_t tag[WORKLOAD_TAG_LEN];

	value_tag(key, tag);
	for (; len && offset < WORKLOAD_TAG_LEN; len--)
		if (*p++ != tag[offset++])
			return false;
	while (len) {
		uint32_t n = len < WORKLOAD_CHUNK ? len : WORKLOAD_CHUNK;

		if (memcmp(p, w->letters + offset % 26, n))
			return false;
		p += n;
		offset += n;
		len -= n;
	}
	return true;
}

enum workload_outcome workload_check_reply(const struct workload *w, uint8_t op, uint32_t key,
					   const struct xkv_msg *reply, uint32_t *received)
{
	if (reply->op != (op | XKV_OP_REPLY))
		return WORKLOAD_ERROR;
	if (op == XKV_OP_GET && reply->status == XKV_S_NOT_FOUND && !*received)
		return WORKLOAD_MISS;
	if (reply->status != XKV_S_OK)
		return WORKLOAD_ERROR;
	if (op == XKV_OP_PUT)
		return reply->value_len == 0 ? WORKLOAD_OK : WORKLOAD_ERROR;
	/* a GET hit: a piece of this key's value */
	if (reply->value_len != workload_value_size(w, key) ||
	    reply->frag_offset > reply->value_len ||
	    reply->frag_len > reply->value_len - reply->frag_offset ||
	    (!reply->frag_len && reply->value_len) ||
	    !value_matches(w, key, reply->frag_offset, reply->frag_len, reply->frag))
		return WORKLOAD_ERROR;
	/*
	 * Not the next one: a piece taken before (a duplicate), or one after a piece that
	 * is missing. Either way the reply waits for the next piece, and is lost if it
	 * never comes.
	 */
	if (reply->frag_offset != *received)
		return WORKLOAD_PARTIAL;
	*received += reply->frag_len;
	return *received == reply->value_len ? WORKLOAD_OK : WORKLOAD_PARTIAL;
}
