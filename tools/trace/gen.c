// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "net/packet.h"
#include "util/parse.h"
#include "workload.h"

#define HDR	 sizeof(struct xkv_hdr)
#define NS_PER_S 1000000000ull

static const struct trace_spec spec_default = {
	.keys = 1000,
	.key_size = 16,
	.weight = {[XKV_OP_GET] = 0.9, [XKV_OP_PUT] = 0.1},
	.value_min = 64,
	.value_max = 64,
	.zipf = 0,
};

static const char *const op_field[] = {
	[XKV_OP_GET] = "get", [XKV_OP_PUT] = "put", [XKV_OP_DELETE] = "del"};

/* The workload of xkv-bench that names and picks keys; values are made here. */
static struct workload_config key_config(const struct trace_spec *spec)
{
	return (struct workload_config){
		.keys = spec->keys,
		.key_size = spec->key_size,
		.get_ratio = 1,
		.zipf = spec->zipf,
	};
}

static bool name_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && !strncmp(name, want, len);
}

/* The op a weight field names ("get", "put", "del"), or 0. */
static int op_named(const char *name, size_t len)
{
	for (int op = XKV_OP_GET; op <= XKV_OP_DELETE; op++)
		if (name_is(name, len, op_field[op]))
			return op;
	return 0;
}

/* "MIN" or "MIN-MAX" */
static int parse_range(char *text, uint32_t *min, uint32_t *max)
{
	char *dash = strchr(text, '-');

	if (dash)
		*dash = 0;
	if (xkv_parse_u32(text, 0, UINT32_MAX, min))
		return -EINVAL;
	if (!dash) {
		*max = *min;
		return 0;
	}
	return xkv_parse_u32(dash + 1, 0, UINT32_MAX, max);
}

/* One field "name=value" of f[0..len); ops_given: a weight was set before. */
static int parse_field(const char *f, size_t len, struct trace_spec *spec, bool *ops_given,
		       char *why, size_t why_len)
{
	const char *eq = memchr(f, '=', len);
	char val[32]; /* longer than any number or range */
	size_t name_len, val_len;
	int op, err;

	if (!eq) {
		snprintf(why, why_len, "\"%.*s\": a field is name=value", (int)len, f);
		return -EINVAL;
	}
	name_len = (size_t)(eq - f);
	val_len = len - name_len - 1;
	if (val_len >= sizeof(val))
		val_len = sizeof(val) - 1; /* cut, so that it parses as junk */
	memcpy(val, eq + 1, val_len);
	val[val_len] = 0;
	if (name_is(f, name_len, "keys")) {
		err = xkv_parse_u32(val, 0, UINT32_MAX, &spec->keys);
	} else if (name_is(f, name_len, "key")) {
		err = xkv_parse_u32(val, 0, UINT32_MAX, &spec->key_size);
	} else if (name_is(f, name_len, "zipf")) {
		err = xkv_parse_double(val, -INFINITY, INFINITY, &spec->zipf); /* judged later */
	} else if (name_is(f, name_len, "value")) {
		err = parse_range(val, &spec->value_min, &spec->value_max);
	} else if ((op = op_named(f, name_len))) {
		if (!*ops_given) /* the default mix goes as soon as any weight is given */
			memset(spec->weight, 0, sizeof(spec->weight));
		*ops_given = true;
		err = xkv_parse_double(val, 0, 1, &spec->weight[op]);
	} else {
		snprintf(why, why_len,
			 "unknown field \"%.*s\" (known: keys key get put del value zipf)",
			 (int)name_len, f);
		return -EINVAL;
	}
	if (!err)
		return 0;
	snprintf(why, why_len, "\"%.*s\": not a %s", (int)len, f,
		 name_is(f, name_len, "value") ? "size or MIN-MAX range"
		 : op_named(f, name_len)       ? "fraction between 0 and 1"
					       : "number");
	return -EINVAL;
}

static int spec_check(const struct trace_spec *spec, char *why, size_t why_len)
{
	struct workload_config cfg = key_config(spec);
	double sum = 0;

	if (workload_config_check(&cfg, why, why_len))
		return -EINVAL;
	for (int op = XKV_OP_GET; op <= XKV_OP_DELETE; op++)
		sum += spec->weight[op];
	if (fabs(sum - 1) > 1e-6) {
		snprintf(why, why_len, "get + put + del is %g: they must sum to 1", sum);
		return -EINVAL;
	}
	if (spec->value_min > spec->value_max || spec->value_max > XKV_VALUE_MAX) {
		snprintf(why, why_len, "value=%u-%u: sizes must rise and stay within 0..%u",
			 spec->value_min, spec->value_max, XKV_VALUE_MAX);
		return -EINVAL;
	}
	return 0;
}

int trace_spec_parse(const char *text, struct trace_spec *spec, char *why, size_t why_len)
{
	bool ops_given = false;
	const char *f = text;
	int err;

	*spec = spec_default;
	while (*f) {
		size_t len = strcspn(f, ",");

		err = parse_field(f, len, spec, &ops_given, why, why_len);
		if (err)
			return err;
		f += len + (f[len] == ',');
	}
	return spec_check(spec, why, why_len);
}

static uint8_t pick_op(const struct trace_spec *spec, struct rng *r)
{
	double u = rng_uniform(r);

	for (uint8_t op = XKV_OP_GET; op < XKV_OP_DELETE; op++) {
		if (u < spec->weight[op])
			return op;
		u -= spec->weight[op];
	}
	return XKV_OP_DELETE;
}

/* A PUT's value: its own stream of the seed, so each PUT writes different bytes. */
static uint32_t make_value(const struct trace_gen_opts *o, struct rng *r, uint32_t id,
			   uint8_t *value)
{
	uint32_t span = o->spec.value_max - o->spec.value_min + 1u; /* values stay <= 1 MiB */
	uint32_t len = o->spec.value_min + (uint32_t)(rng_next(r) % span);
	struct rng bytes;

	rng_seed(&bytes, o->seed, id);
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t word = rng_next(&bytes);

		memcpy(value + i, &word, len - i < 8 ? len - i : 8);
	}
	return len;
}

struct gen_state {
	const struct trace_gen_opts *opts;
	struct xkv_route route; /* of a frame from dst to src: a request is its reply */
	uint32_t hdr_len;
	uint8_t frame[TRACE_FRAME_MAX];
	trace_gen_fn fn;
	void *ctx;
	struct trace_gen_stats *stats;
};

/* Sends req in as many datagrams as its value needs (at least one). */
static int send_request(struct gen_state *g, struct xkv_msg *req, const uint8_t *value)
{
	uint32_t room = XKV_DGRAM_MAX - HDR - req->key_len, off = 0;
	int len, ret;

	if (req->value_len > room)
		g->stats->split_puts++;
	do {
		uint64_t ns = g->stats->frames * NS_PER_S / g->opts->pps;

		req->timestamp = ns;
		req->frag_offset = off;
		req->frag_len = req->value_len - off < room ? req->value_len - off : room;
		req->frag = value + off;
		len = xkv_encode(g->frame + g->hdr_len, sizeof(g->frame) - g->hdr_len, req);
		if (len < 0)
			return len;
		ret = g->fn(g->ctx, ns, g->frame,
			    xkv_reply_write_hdr(g->frame, &g->route, (uint32_t)len));
		if (ret)
			return ret;
		g->stats->frames++;
		off += req->frag_len;
	} while (off < req->value_len);
	return 0;
}

int trace_gen(const struct trace_gen_opts *opts, trace_gen_fn fn, void *ctx,
	      struct trace_gen_stats *stats)
{
	struct workload_config cfg = key_config(&opts->spec);
	struct gen_state *g;
	uint8_t key[XKV_KEY_MAX], *value;
	struct rng rng;
	struct workload w;
	char why[160];
	int ret;

	*stats = (struct trace_gen_stats){0};
	if (spec_check(&opts->spec, why, sizeof(why)) || !opts->pps || opts->count >= UINT32_MAX)
		return -EINVAL;
	ret = workload_init(&w, &cfg);
	if (ret)
		return ret;
	value = malloc(opts->spec.value_max + 1u);
	if (!value)
		return -ENOMEM;
	g = calloc(1, sizeof(*g));
	if (!g) {
		free(value);
		return -ENOMEM;
	}
	*g = (struct gen_state){.opts = opts, .fn = fn, .ctx = ctx, .stats = stats};
	g->route = (struct xkv_route){
		.ip_version = 4, .port_src = opts->dst.port, .port_dst = opts->src.port};
	memcpy(g->route.eth_src, opts->dst.mac, 6);
	memcpy(g->route.eth_dst, opts->src.mac, 6);
	memcpy(g->route.ip_src, opts->dst.ip, 4);
	memcpy(g->route.ip_dst, opts->src.ip, 4);
	g->hdr_len = xkv_reply_hdr_len(&g->route);

	rng_seed(&rng, opts->seed, 0);
	ret = 0;
	for (uint64_t i = 1; i <= opts->count && !ret; i++) {
		uint32_t id = (uint32_t)i; /* 1..count: unique, and never 0 */
		struct xkv_msg req = {
			.op = pick_op(&opts->spec, &rng),
			.key_len = (uint16_t)opts->spec.key_size,
			.key = key,
			.request_id = id,
		};

		workload_key(&w, workload_next_key(&w, &rng), key);
		if (req.op == XKV_OP_PUT)
			req.value_len = make_value(opts, &rng, id, value);
		stats->requests[req.op]++;
		ret = send_request(g, &req, value);
	}
	free(g);
	free(value);
	return ret;
}
