// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "report.h"

/* One line of results: every operation together, or one kind. */
struct row {
	const char *name;
	uint64_t ops; /* answered: ok + misses */
	double ops_per_s;
	double p50_us, p90_us, p99_us, p999_us, mean_us, max_us;
	uint64_t misses, errors, lost;
};

static void make_row(struct row *row, const char *name, const struct op_stats *s, double seconds)
{
	const struct lat_hist *h = &s->latency;

	*row = (struct row){
		.name = name,
		.ops = s->ok + s->misses,
		.ops_per_s = seconds > 0 ? (double)(s->ok + s->misses) / seconds : 0,
		.p50_us = lat_hist_percentile(h, 50) / 1e3,
		.p90_us = lat_hist_percentile(h, 90) / 1e3,
		.p99_us = lat_hist_percentile(h, 99) / 1e3,
		.p999_us = lat_hist_percentile(h, 99.9) / 1e3,
		.mean_us = lat_hist_mean(h) / 1e3,
		.max_us = h->count ? h->max / 1e3 : 0,
		.misses = s->misses,
		.errors = s->errors,
		.lost = s->lost,
	};
}

/* The rows all, get, put. Returns 0 or -ENOMEM (the merged histogram is large). */
static int make_rows(struct row rows[3], const struct bench_stats *s, double seconds)
{
	struct op_stats *all = malloc(sizeof(*all));

	if (!all)
		return -ENOMEM;
	*all = s->op[BENCH_GET];
	op_stats_merge(all, &s->op[BENCH_PUT]);
	make_row(&rows[0], "all", all, seconds);
	make_row(&rows[1], "get", &s->op[BENCH_GET], seconds);
	make_row(&rows[2], "put", &s->op[BENCH_PUT], seconds);
	free(all);
	return 0;
}

static const char *popularity(const struct workload_config *w, char *buf, size_t cap)
{
	if (w->zipf == 0)
		return "uniform";
	snprintf(buf, cap, "zipf %g", w->zipf);
	return buf;
}

void report_table(FILE *f, const struct run_report *r)
{
	const struct workload_config *w = r->workload;
	struct row rows[3];
	char pop[32];

	fprintf(f, "xkv-bench: %s over %s, %u thread%s x depth %u, %.2f s measured, seed %llu\n",
		r->server, r->transport, r->threads, r->threads == 1 ? "" : "s", r->depth,
		r->seconds, (unsigned long long)r->seed);
	fprintf(f, "workload: %u keys %s, %.0f%% GET, key %u B, value %u B; ", w->keys,
		popularity(w, pop, sizeof(pop)), w->get_ratio * 100, w->key_size, w->value_size);
	if (r->load)
		fprintf(f, "loaded %u keys in %.2f s (%llu lost, %llu errors)\n", r->loaded_keys,
			r->load_seconds, (unsigned long long)r->load->op[BENCH_PUT].lost,
			(unsigned long long)r->load->op[BENCH_PUT].errors);
	else
		fprintf(f, "nothing loaded\n");

	if (make_rows(rows, r->measured, r->seconds)) {
		fprintf(f, "xkv-bench: out of memory for the report\n");
		return;
	}
	fprintf(f, "%-12s %-3s %12s %9s %9s %9s %9s %9s %9s %9s %9s\n", "label", "op", "ops/s",
		"p50 us", "p90 us", "p99 us", "p99.9 us", "mean us", "lost", "errors", "misses");
	for (int i = 0; i < 3; i++)
		fprintf(f, "%-12s %-3s %12.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9llu %9llu %9llu\n",
			r->label, rows[i].name, rows[i].ops_per_s, rows[i].p50_us, rows[i].p90_us,
			rows[i].p99_us, rows[i].p999_us, rows[i].mean_us,
			(unsigned long long)rows[i].lost, (unsigned long long)rows[i].errors,
			(unsigned long long)rows[i].misses);
	fprintf(f, "late replies %llu, invalid datagrams %llu\n",
		(unsigned long long)r->measured->late, (unsigned long long)r->measured->invalid);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_row(FILE *f, const struct row *row)
{
	fprintf(f,
		"\"%s\":{\"ops\":%llu,\"ops_per_s\":%.1f,\"p50_us\":%.3f,\"p90_us\":%.3f,"
		"\"p99_us\":%.3f,\"p999_us\":%.3f,\"mean_us\":%.3f,\"max_us\":%.3f,"
		"\"misses\":%llu,\"errors\":%llu,\"lost\":%llu}",
		row->name, (unsigned long long)row->ops, row->ops_per_s, row->p50_us, row->p90_us,
		row->p99_us, row->p999_us, row->mean_us, row->max_us,
		(unsigned long long)row->misses, (unsigned long long)row->errors,
		(unsigned long long)row->lost);
}

void report_json(FILE *f, const struct run_report *r)
{
	const struct workload_config *w = r->workload;
	const struct op_stats *load = r->load ? &r->load->op[BENCH_PUT] : NULL;
	struct row rows[3];

	if (make_rows(rows, r->measured, r->seconds)) {
		fprintf(stderr, "xkv-bench: out of memory for the report\n");
		return;
	}
	fputs("{\"label\":", f);
	json_string(f, r->label);
	fputs(",\"server\":", f);
	json_string(f, r->server);
	fprintf(f,
		",\"transport\":\"%s\",\"threads\":%u,\"depth\":%u,\"duration_s\":%.3f,"
		"\"seed\":%llu,\"timeout_ms\":%llu,\"keys\":%u,\"key_size\":%u,\"value_size\":%u,"
		"\"get_ratio\":%g,\"zipf\":%g,",
		r->transport, r->threads, r->depth, r->seconds, (unsigned long long)r->seed,
		(unsigned long long)r->timeout_ms, w->keys, w->key_size, w->value_size,
		w->get_ratio, w->zipf);
	fprintf(f,
		"\"load\":{\"keys\":%u,\"seconds\":%.3f,\"ok\":%llu,\"lost\":%llu,"
		"\"errors\":%llu},",
		r->loaded_keys, r->load_seconds, (unsigned long long)(load ? load->ok : 0),
		(unsigned long long)(load ? load->lost : 0),
		(unsigned long long)(load ? load->errors : 0));
	for (int i = 0; i < 3; i++) {
		json_row(f, &rows[i]);
		fputc(',', f);
	}
	fprintf(f, "\"late\":%llu,\"invalid\":%llu}\n", (unsigned long long)r->measured->late,
		(unsigned long long)r->measured->invalid);
}
