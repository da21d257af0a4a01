// SPDX-License-Identifier: MIT
/* A snapshot in Prometheus's text format (prometheus.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prometheus.h"
#include "util/counters.h"

#define HELP_SEE "(docs/LOADER.md, xkv-loader stats)"

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A family of one sample without labels. */
static void single(FILE *out, const char *name, const char *type, const char *help,
		   const char *value)
{
	family(out, name, type, help);
	fprintf(out, "%s %s\n", name, value);
}

static void single_u64(FILE *out, const char *name, const char *type, const char *help,
		       uint64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRIu64, value);
	single(out, name, type, help, text);
}

/* A time in nanoseconds (a name ending _ns): Prometheus's base unit is the second. */
static bool in_ns(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, "_ns");
}

/* "xkv_<prefix>_<group>_<name>", _ns as _seconds, _total on a counter. */
static void counter_name(char *buf, size_t cap, const char *prefix, const char *group,
			 const char *name)
{
	bool ns = in_ns(name);

	snprintf(buf, cap, "xkv_%s%s%s_%.*s%s%s", prefix, group ? "_" : "", group ? group : "",
		 (int)(strlen(name) - (ns ? 3 : 0)), name, ns ? "_seconds" : "",
		 xkv_counter_is_gauge(group, name) ? "" : "_total");
}

/* A counter's value as its name says: nanoseconds in seconds. */
static void counter_value(FILE *out, const char *name, uint64_t value)
{
	if (in_ns(name))
		fprintf(out, "%.9f\n", (double)value / 1e9);
	else
		fprintf(out, "%" PRIu64 "\n", value);
}

static void program_write(FILE *out, const struct snapshot *s)
{
	const struct bpfctl_stats *st = &s->stats;
	struct ewt_field ewt[EWT_FIELDS_MAX];

	if (s->cfg) {
		family(out, "xkv_xdp_info", "gauge", "The program attached: its policy and ports.");
		fprintf(out, "xkv_xdp_info{policy=\"%s\",port=\"%u\",memcached_port=\"%u\"} 1\n",
			xkv_policy_name(s->cfg->policy), s->cfg->port, s->cfg->memcached_port);
	}
	single_u64(out, "xkv_xdp_passed_total", "counter",
		   "Packets the XDP program passed to the kernel's stack.",
		   st->slots[XKV_STAT_PASSED]);
	family(out, "xkv_xdp_dropped_total", "counter",
	       "Packets the XDP program dropped, by reason (docs/PROTOCOL.md).");
	for (__u32 r = XKV_STAT_PASSED + 1; r < XKV_R_END; r++)
		fprintf(out, "xkv_xdp_dropped_total{reason=\"%s\"} %llu\n", xkv_reason_name(r),
			(unsigned long long)st->slots[r]);
	family(out, "xkv_xdp_steered_total", "counter",
	       "Requests the XDP program steered to each worker's socket.");
	for (__u32 w = 0; w < s->workers; w++)
		fprintf(out, "xkv_xdp_steered_total{worker=\"%u\"} %llu\n", w,
			(unsigned long long)st->steered[w]);
	if (!s->has_ewt)
		return;
	for (size_t i = 0, n = ewt_fields(s, ewt); i < n; i++) {
		char name[64], help[96];

		snprintf(name, sizeof(name), "xkv_ewt_%s%s", ewt[i].name,
			 ewt[i].gauge ? "" : "_total");
		snprintf(help, sizeof(help), "The Exclusive Writer Table's %s " HELP_SEE ".",
			 ewt[i].name);
		single_u64(out, name, ewt[i].gauge ? "gauge" : "counter", help, ewt[i].value);
	}
}

/* The server's own figures (the store's); its ewt group is the EWT's section above. */
static void server_counter(void *ctx, const char *group, const char *name, uint64_t value)
{
	char metric[96], help[128];

	if (group && !strcmp(group, "ewt"))
		return;
	counter_name(metric, sizeof(metric), "server", group, name);
	snprintf(help, sizeof(help), "xkv-server's %s %s " HELP_SEE ".", group ? group : "",
		 name);
	single_u64(ctx, metric, xkv_counter_is_gauge(group, name) ? "gauge" : "counter", help,
		   value);
}

/*
 * The workers' counters, a family each with a sample per worker: the names and their
 * order are the same for every worker, so row i of each is the same counter.
 */
#define ROWS_MAX 320

struct counter_rows {
	uint32_t n, at, worker;
	struct {
		const char *group, *name;
		uint64_t value[XKV_WORKERS_MAX];
	} row[ROWS_MAX];
};

static void row_take(void *ctx, const char *group, const char *name, uint64_t value)
{
	struct counter_rows *t = ctx;

	if (t->worker == 0 && t->n < ROWS_MAX) {
		t->row[t->n].group = group;
		t->row[t->n].name = name;
		t->n++;
	}
	if (t->at < t->n)
		t->row[t->at++].value[t->worker] = value;
}

static int workers_write(FILE *out, const struct live_counters *l)
{
	const struct xkv_server_counters *srv = &l->server;
	struct counter_rows *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t w = 0; w < srv->workers; w++) {
		t->worker = w;
		t->at = 0;
		xkv_request_counters_each(&l->workers[w].req, row_take, t);
		xkv_socket_counters_each(&l->workers[w].sock, srv->backend, row_take, t);
		xkv_mc_counters_each(&l->workers[w].mc, row_take, t);
	}
	for (uint32_t i = 0; i < t->n; i++) {
		const char *group = t->row[i].group, *name = t->row[i].name;
		char metric[96], help[128];

		counter_name(metric, sizeof(metric), "worker", group, name);
		snprintf(help, sizeof(help), "Each xkv-server worker's %s %s " HELP_SEE ".",
			 group ? group : "", name);
		family(out, metric, xkv_counter_is_gauge(group, name) ? "gauge" : "counter", help);
		for (uint32_t w = 0; w < srv->workers; w++) {
			fprintf(out, "%s{worker=\"%u\"} ", metric, w);
			counter_value(out, name, t->row[i].value[w]);
		}
	}
	free(t);
	return 0;
}

#define LATENCY "xkv_request_duration_seconds"

/*
 * One merged histogram (every worker's) of an op, size class and interval: buckets at
 * each octave's end (the histograms' own bounds, so the counts are exact), and the sum
 * of each request's bucket middle, within 0.8 % of the true sum (include/xkv/latency.h).
 */
static void latency_one(void *ctx, const struct xkv_lat_key *k, const struct xkv_lat_hist *h)
{
	FILE *out = ctx;
	uint64_t below = 0;
	double sum_ns = 0;
	char labels[96];

	if (k->worker >= 0)
		return;
	snprintf(labels, sizeof(labels), "op=\"%s\",class=\"%s\",interval=\"%s\"",
		 xkv_lat_op_name(k->op), xkv_size_class_name(k->cls),
		 xkv_lat_interval_name(k->interval));
	for (uint32_t octave = 0; octave < XKV_LAT_OCTAVES; octave++) {
		uint32_t last = (octave + 1) * XKV_LAT_SUB - 1;
		double le = (double)(xkv_lat_bucket_low(last) + xkv_lat_bucket_width(last)) / 1e9;

		for (uint32_t b = octave * XKV_LAT_SUB; b <= last; b++) {
			below += h->count[b];
			sum_ns += (double)h->count[b] * (double)xkv_lat_bucket_value(b);
		}
		fprintf(out, LATENCY "_bucket{%s,le=\"%.9g\"} %" PRIu64 "\n", labels, le, below);
	}
	fprintf(out, LATENCY "_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n", labels, below);
	fprintf(out, LATENCY "_sum{%s} %.9g\n", labels, sum_ns / 1e9);
	fprintf(out, LATENCY "_count{%s} %" PRIu64 "\n", labels, below);
}

static int live_write(FILE *out, const struct snapshot *s)
{
	const struct live_counters *l = &s->live;
	const struct xkv_server_counters *srv = &l->server;

	family(out, "xkv_server_info", "gauge", "The server publishing here: its pid and backend.");
	fprintf(out, "xkv_server_info{pid=\"%u\",backend=\"%s\"} 1\n", srv->pid, srv->backend);
	single(out, "xkv_server_up", "gauge", "1 while that server's process runs.",
	       l->running ? "1" : "0");
	single_u64(out, "xkv_server_workers", "gauge", "Its workers.", srv->workers);
	fprintf(out, "# HELP xkv_server_uptime_seconds Its time serving, when it last published.\n"
		     "# TYPE xkv_server_uptime_seconds gauge\nxkv_server_uptime_seconds %.3f\n",
		(double)(srv->published_ns - srv->started_ns) / 1e9);
	fprintf(out, "# HELP xkv_server_published_age_seconds Since it last published its "
		     "counters (every 0.1 s while it runs).\n"
		     "# TYPE xkv_server_published_age_seconds gauge\n"
		     "xkv_server_published_age_seconds %.3f\n",
		l->age_s);
	xkv_server_counters_each(srv, server_counter, out);
	if (workers_write(out, l))
		return -ENOMEM;
	family(out, LATENCY, "histogram",
	       "Requests' time in the server, every worker's: queued (kernel arrival to the "
	       "worker), served (to the reply on the TX ring) and total, by op and value size "
	       "class.");
	xkv_lat_each(&s->lat, NULL, latency_one, out);
	return 0;
}

int prometheus_write(FILE *out, const struct snapshot *s)
{
	program_write(out, s);
	return s->has_live ? live_write(out, s) : 0;
}
