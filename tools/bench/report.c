// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "report.h"
#include "util/json.h"

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
	const struct hist *h = &s->latency;

	*row = (struct row){
		.name = name,
		.ops = s->ok + s->misses,
		.ops_per_s = seconds > 0 ? (double)(s->ok + s->misses) / seconds : 0,
		.p50_us = hist_percentile(h, 50) / 1e3,
		.p90_us = hist_percentile(h, 90) / 1e3,
		.p99_us = hist_percentile(h, 99) / 1e3,
		.p999_us = hist_percentile(h, 99.9) / 1e3,
		.mean_us = hist_mean(h) / 1e3,
		.max_us = h->count ? h->max / 1e3 : 0,
		.misses = s->misses,
		.errors = s->errors,
		.lost = s->lost,
	};
}

#define ROWS_MAX (3 + WORKLOAD_SIZE_CLASSES)

/*
 * The rows all, get, put, then with sizes that vary each size class that had
 * requests. Returns how many, or -ENOMEM (the merged histogram is large).
 */
static int make_rows(struct row rows[ROWS_MAX], const struct run_report *r,
		     const struct bench_stats *s)
{
	static const char *const class_names[] = {
		[WORKLOAD_TINY] = "tiny", [WORKLOAD_SMALL] = "small", [WORKLOAD_LARGE] = "large"};
	struct op_stats *all = malloc(sizeof(*all));
	int n = 3;

	if (!all)
		return -ENOMEM;
	bench_stats_total(s, all);
	make_row(&rows[0], "all", all, r->seconds);
	make_row(&rows[1], "get", &s->op[BENCH_GET], r->seconds);
	make_row(&rows[2], "put", &s->op[BENCH_PUT], r->seconds);
	free(all);
	for (int c = 0; c < WORKLOAD_SIZE_CLASSES && r->workload->profile != WORKLOAD_FIXED; c++) {
		const struct op_stats *cs = &s->size_class[c];

		if (cs->ok + cs->misses + cs->errors + cs->lost)
			make_row(&rows[n++], class_names[c], cs, r->seconds);
	}
	return n;
}

/* How well an open loop kept to its schedule. */
struct schedule_row {
	double scheduled_per_s;
	double lag_p50_us, lag_p99_us, lag_max_us; /* from intended to actual send */
	double behind_ms;
	uint64_t unsent, slot_waits;
};

static struct schedule_row schedule_row(const struct bench_stats *m, double seconds)
{
	return (struct schedule_row){
		.scheduled_per_s = seconds > 0 ? m->scheduled / seconds : 0,
		.lag_p50_us = hist_percentile(&m->send_lag, 50) / 1e3,
		.lag_p99_us = hist_percentile(&m->send_lag, 99) / 1e3,
		.lag_max_us = hist_percentile(&m->send_lag, 100) / 1e3,
		.behind_ms = m->behind_ns / 1e6,
		.unsent = m->unsent,
		.slot_waits = m->slot_waits,
	};
}

static const char *popularity(const struct workload_config *w, char *buf, size_t cap)
{
	if (w->zipf == 0)
		return "uniform";
	snprintf(buf, cap, "zipf %g", w->zipf);
	return buf;
}

/* The sizes of values that are not large: "64", or ETC's "1-13 and 14-1400". */
static const char *value_sizes(const struct workload_config *w, char *buf, size_t cap)
{
	if (w->profile == WORKLOAD_ETC)
		snprintf(buf, cap, "1-%u and %u-%u", WORKLOAD_TINY_MAX, WORKLOAD_TINY_MAX + 1,
			 WORKLOAD_SMALL_MAX);
	else
		snprintf(buf, cap, "%u", w->value_size);
	return buf;
}

/* "udp", or "xdp (copy mode, IF queue Q)", or with several queues "IF queues Q-R" */
static const char *transport_name(const struct run_report *r, char *buf, size_t cap)
{
	const struct afxdp_info *x = r->xdp;

	if (!x)
		return r->transport;
	if (x->nqueues > 1)
		snprintf(buf, cap, "%s (%s mode, %s queues %u-%u)", r->transport, x->mode, x->iface,
			 x->queue, x->queue + x->nqueues - 1);
	else
		snprintf(buf, cap, "%s (%s mode, %s queue %u)", r->transport, x->mode, x->iface,
			 x->queue);
	return buf;
}

static void table_header(FILE *f, const struct run_report *r, const char *window)
{
	const struct workload_config *w = r->workload;
	char pop[32], transport[96], loop[48], sizes[48];

	if (r->sweep)
		snprintf(loop, sizeof(loop), "open-loop sweep from %.0f/s", r->rate);
	else if (r->rate > 0)
		snprintf(loop, sizeof(loop), "open loop at %.0f/s", r->rate);
	else
		snprintf(loop, sizeof(loop), "closed loop");
	fprintf(f, "xkv-bench: %s over %s, %u thread%s x depth %u, %s, %.2f s %s, seed %llu\n",
		r->server, transport_name(r, transport, sizeof(transport)), r->threads,
		r->threads == 1 ? "" : "s", r->depth, loop, r->seconds, window,
		(unsigned long long)r->seed);
	fprintf(f, "workload: %u keys %s, %.0f%% GET, key %u B, ", w->keys,
		popularity(w, pop, sizeof(pop)), w->get_ratio * 100, w->key_size);
	if (w->profile == WORKLOAD_FIXED || !workload_large_keys(w))
		fprintf(f, "value %s B; ", value_sizes(w, sizes, sizeof(sizes)));
	else
		fprintf(f, "values %s B, %g%% of requests to %u large keys of %s%u B; ",
			value_sizes(w, sizes, sizeof(sizes)), w->large_pct, workload_large_keys(w),
			w->profile == WORKLOAD_ETC ? "1500-" : "", w->large_size);
	if (r->load)
		fprintf(f, "loaded %u keys in %.2f s (%llu lost, %llu errors)\n", r->loaded_keys,
			r->load_seconds, (unsigned long long)r->load->op[BENCH_PUT].lost,
			(unsigned long long)r->load->op[BENCH_PUT].errors);
	else
		fprintf(f, "nothing loaded\n");
}

static void table_xdp(FILE *f, const struct afxdp_info *x)
{
	if (!x)
		return;
	fprintf(f,
		"client XDP program: %llu replies redirected, %llu on the wrong queue "
		"(dropped), %llu for no socket (passed); AF_XDP sockets: %llu dropped, "
		"%llu RX ring full, %llu fill ring empty\n",
		(unsigned long long)x->redirected, (unsigned long long)x->wrong_queue,
		(unsigned long long)x->no_socket, (unsigned long long)x->rx_dropped,
		(unsigned long long)x->rx_ring_full, (unsigned long long)x->fill_empty);
	fprintf(f, "frames sent/received, the load too:");
	for (uint32_t i = 0; i < x->nqueues; i++)
		fprintf(f, "%s queue %u %llu/%llu", i ? "," : "", x->queues[i].queue,
			(unsigned long long)x->queues[i].sent,
			(unsigned long long)x->queues[i].received);
	fprintf(f, "\n");
}

void report_table(FILE *f, const struct run_report *r)
{
	const struct bench_stats *m = r->measured;
	struct row rows[ROWS_MAX];
	int nrows = make_rows(rows, r, m);

	table_header(f, r, "measured");
	if (nrows < 0) {
		fprintf(f, "xkv-bench: out of memory for the report\n");
		return;
	}
	fprintf(f, "%-12s %-5s %12s %9s %9s %9s %9s %9s %9s %9s %9s\n", "label", "op", "ops/s",
		"p50 us", "p90 us", "p99 us", "p99.9 us", "mean us", "lost", "errors", "misses");
	for (int i = 0; i < nrows; i++)
		fprintf(f, "%-12s %-5s %12.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9llu %9llu %9llu\n",
			r->label, rows[i].name, rows[i].ops_per_s, rows[i].p50_us, rows[i].p90_us,
			rows[i].p99_us, rows[i].p999_us, rows[i].mean_us,
			(unsigned long long)rows[i].lost, (unsigned long long)rows[i].errors,
			(unsigned long long)rows[i].misses);
	fprintf(f, "late replies %llu, invalid datagrams %llu, validations %llu\n",
		(unsigned long long)m->late, (unsigned long long)m->invalid,
		(unsigned long long)m->validations);
	if (r->rate > 0) {
		struct schedule_row o = schedule_row(m, r->seconds);

		fprintf(f,
			"open loop: %.0f/s scheduled; send lag p50 %.1f, p99 %.1f, max %.1f us; "
			"%llu never sent (%.1f ms behind at the end); %llu waited for a free "
			"slot\n",
			o.scheduled_per_s, o.lag_p50_us, o.lag_p99_us, o.lag_max_us,
			(unsigned long long)o.unsent, o.behind_ms,
			(unsigned long long)o.slot_waits);
	}
	table_xdp(f, r->xdp);
}

static void json_row(struct xkv_json *w, const struct row *row)
{
	xkv_json_key(w, row->name);
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "ops", row->ops);
	xkv_json_fixed_field(w, "ops_per_s", row->ops_per_s, 1);
	xkv_json_fixed_field(w, "p50_us", row->p50_us, 3);
	xkv_json_fixed_field(w, "p90_us", row->p90_us, 3);
	xkv_json_fixed_field(w, "p99_us", row->p99_us, 3);
	xkv_json_fixed_field(w, "p999_us", row->p999_us, 3);
	xkv_json_fixed_field(w, "mean_us", row->mean_us, 3);
	xkv_json_fixed_field(w, "max_us", row->max_us, 3);
	xkv_json_uint_field(w, "misses", row->misses);
	xkv_json_uint_field(w, "errors", row->errors);
	xkv_json_uint_field(w, "lost", row->lost);
	xkv_json_object_end(w);
}

static void json_xdp(struct xkv_json *w, const struct afxdp_info *x)
{
	xkv_json_key(w, "xdp");
	xkv_json_object_start(w);
	xkv_json_string_field(w, "iface", x->iface);
	xkv_json_uint_field(w, "queue", x->queue);
	xkv_json_string_field(w, "mode", x->mode);
	xkv_json_uint_field(w, "redirected", x->redirected);
	xkv_json_uint_field(w, "wrong_queue", x->wrong_queue);
	xkv_json_uint_field(w, "no_socket", x->no_socket);
	xkv_json_uint_field(w, "rx_dropped", x->rx_dropped);
	xkv_json_uint_field(w, "rx_ring_full", x->rx_ring_full);
	xkv_json_uint_field(w, "fill_empty", x->fill_empty);
	xkv_json_key(w, "queues");
	xkv_json_array_start(w);
	for (uint32_t i = 0; i < x->nqueues; i++) {
		xkv_json_object_start(w);
		xkv_json_uint_field(w, "queue", x->queues[i].queue);
		xkv_json_uint_field(w, "sent", x->queues[i].sent);
		xkv_json_uint_field(w, "received", x->queues[i].received);
		xkv_json_object_end(w);
	}
	xkv_json_array_end(w);
	xkv_json_object_end(w);
}

/* The fields a run and a sweep share, in the object they open. */
static void json_run_fields(struct xkv_json *w, const struct run_report *r)
{
	const struct workload_config *wc = r->workload;

	xkv_json_string_field(w, "label", r->label);
	xkv_json_string_field(w, "server", r->server);
	xkv_json_string_field(w, "transport", r->transport);
	xkv_json_uint_field(w, "threads", r->threads);
	xkv_json_uint_field(w, "depth", r->depth);
	xkv_json_fixed_field(w, "rate", r->rate, 1);
	xkv_json_fixed_field(w, "duration_s", r->seconds, 3);
	xkv_json_uint_field(w, "seed", r->seed);
	xkv_json_uint_field(w, "timeout_ms", r->timeout_ms);
	xkv_json_uint_field(w, "keys", wc->keys);
	xkv_json_uint_field(w, "key_size", wc->key_size);
	xkv_json_uint_field(w, "value_size", wc->value_size);
	xkv_json_string_field(w, "value_profile", workload_profile_name(wc->profile));
	xkv_json_double_field(w, "large_pct", wc->profile == WORKLOAD_FIXED ? 0 : wc->large_pct);
	xkv_json_uint_field(w, "large_size", wc->large_size);
	xkv_json_uint_field(w, "large_keys", workload_large_keys(wc));
	xkv_json_double_field(w, "get_ratio", wc->get_ratio);
	xkv_json_double_field(w, "zipf", wc->zipf);
	xkv_json_double_field(w, "shuffle_s", wc->shuffle_s);
	xkv_json_double_field(w, "hot_in_s", wc->hot_in_s);
	if (r->xdp)
		json_xdp(w, r->xdp);
}

void report_json(FILE *f, const struct run_report *r)
{
	const struct op_stats *load = r->load ? &r->load->op[BENCH_PUT] : NULL;
	const struct bench_stats *m = r->measured;
	struct row rows[ROWS_MAX];
	int nrows = make_rows(rows, r, m);
	struct xkv_json w;

	if (nrows < 0) {
		fprintf(stderr, "xkv-bench: out of memory for the report\n");
		return;
	}
	xkv_json_init(&w, f);
	xkv_json_object_start(&w);
	json_run_fields(&w, r);
	xkv_json_key(&w, "load");
	xkv_json_object_start(&w);
	xkv_json_uint_field(&w, "keys", r->loaded_keys);
	xkv_json_fixed_field(&w, "seconds", r->load_seconds, 3);
	xkv_json_uint_field(&w, "ok", load ? load->ok : 0);
	xkv_json_uint_field(&w, "lost", load ? load->lost : 0);
	xkv_json_uint_field(&w, "errors", load ? load->errors : 0);
	xkv_json_object_end(&w);
	for (int i = 0; i < nrows; i++)
		json_row(&w, &rows[i]);
	if (r->rate > 0) {
		struct schedule_row o = schedule_row(m, r->seconds);

		xkv_json_key(&w, "open_loop");
		xkv_json_object_start(&w);
		xkv_json_fixed_field(&w, "scheduled_per_s", o.scheduled_per_s, 1);
		xkv_json_fixed_field(&w, "send_lag_p50_us", o.lag_p50_us, 3);
		xkv_json_fixed_field(&w, "send_lag_p99_us", o.lag_p99_us, 3);
		xkv_json_fixed_field(&w, "send_lag_max_us", o.lag_max_us, 3);
		xkv_json_uint_field(&w, "unsent", o.unsent);
		xkv_json_fixed_field(&w, "behind_ms", o.behind_ms, 3);
		xkv_json_uint_field(&w, "slot_waits", o.slot_waits);
		xkv_json_object_end(&w);
	}
	xkv_json_uint_field(&w, "late", m->late);
	xkv_json_uint_field(&w, "invalid", m->invalid);
	xkv_json_uint_field(&w, "validations", m->validations);
	xkv_json_object_end(&w);
	xkv_json_finish(&w);
}

void report_sweep_table(FILE *f, const struct run_report *r, const struct sweep_result *s)
{
	char tail[32];

	table_header(f, r, "per step");
	fprintf(f, "SLO: p%g <= %.1f us", s->percentile, s->slo_us);
	if (s->service_us > 0)
		fprintf(f, " (%.3g x the %.1f us mean latency of the first step)",
			s->slo_us / s->service_us, s->service_us);
	fprintf(f,
		", over every request due, lost ones counting as infinitely late; a rate "
		"fails after %u misses in a row\n",
		s->retries + 1);
	snprintf(tail, sizeof(tail), "p%g all us", s->percentile);
	fprintf(f, "%4s %11s %11s %11s %9s %9s %11s %11s %8s %8s %8s %5s\n", "step", "offered/s",
		"scheduled/s", "achieved/s", "p50 us", "p99 us", tail, "lag p99 us", "lost",
		"errors", "unsent", "SLO");
	for (unsigned i = 0; i < s->n; i++) {
		const struct sweep_point *p = &s->steps[i];

		fprintf(f, "%4u %11.0f %11.0f %11.0f %9.1f %9.1f %11.1f %11.1f %8llu %8llu %8llu "
			   "%5s\n",
			i + 1, p->offered, p->scheduled, p->achieved, p->p50_us, p->p99_us,
			p->tail_us, p->send_lag_p99_us, (unsigned long long)p->lost,
			(unsigned long long)p->errors, (unsigned long long)p->unsent,
			p->meets ? "meets" : p->retry ? "again" : "miss");
	}
	if (!s->rate)
		fprintf(f, "rate found: none: the first step missed the SLO\n");
	else
		fprintf(f, "rate found: %.0f/s%s\n", s->rate,
			s->bracketed ? "" : " (not bracketed: the search stopped at --sweep-max or "
					    "its step limit)");
	table_xdp(f, r->xdp);
}

void report_sweep_json(FILE *f, const struct run_report *r, const struct sweep_result *s)
{
	struct xkv_json w;

	xkv_json_init(&w, f);
	xkv_json_object_start(&w);
	json_run_fields(&w, r);
	xkv_json_bool_field(&w, "sweep", true);
	xkv_json_fixed_field(&w, "slo_us", s->slo_us, 3);
	xkv_json_double_field(&w, "slo_percentile", s->percentile);
	xkv_json_fixed_field(&w, "service_us", s->service_us, 3);
	xkv_json_uint_field(&w, "retries", s->retries);
	xkv_json_fixed_field(&w, "rate_found", s->rate, 1);
	xkv_json_bool_field(&w, "bracketed", s->bracketed);
	xkv_json_key(&w, "steps");
	xkv_json_array_start(&w);
	for (unsigned i = 0; i < s->n; i++) {
		const struct sweep_point *p = &s->steps[i];

		xkv_json_object_start(&w);
		xkv_json_fixed_field(&w, "offered_per_s", p->offered, 1);
		xkv_json_fixed_field(&w, "scheduled_per_s", p->scheduled, 1);
		xkv_json_fixed_field(&w, "achieved_per_s", p->achieved, 1);
		xkv_json_fixed_field(&w, "p50_us", p->p50_us, 3);
		xkv_json_fixed_field(&w, "p99_us", p->p99_us, 3);
		/* infinite when requests were lost: null */
		xkv_json_fixed_field(&w, "tail_us", p->tail_us, 3);
		xkv_json_fixed_field(&w, "mean_us", p->mean_us, 3);
		xkv_json_fixed_field(&w, "send_lag_p99_us", p->send_lag_p99_us, 3);
		xkv_json_uint_field(&w, "lost", p->lost);
		xkv_json_uint_field(&w, "errors", p->errors);
		xkv_json_uint_field(&w, "unsent", p->unsent);
		xkv_json_bool_field(&w, "meets_slo", p->meets);
		xkv_json_bool_field(&w, "retry", p->retry);
		xkv_json_object_end(&w);
	}
	xkv_json_array_end(&w);
	xkv_json_object_end(&w);
	xkv_json_finish(&w);
}

void report_sweep_csv(FILE *f, const struct run_report *r, const struct sweep_result *s)
{
	fputs("label,transport,threads,step,offered_per_s,scheduled_per_s,achieved_per_s,p50_us,"
	      "p99_us,tail_us,mean_us,send_lag_p99_us,lost,errors,unsent,meets_slo,slo_us,"
	      "slo_percentile,retry\n",
	      f);
	for (unsigned i = 0; i < s->n; i++) {
		const struct sweep_point *p = &s->steps[i];

		/* labels are the user's: keep the columns whatever they hold */
		fputc('"', f);
		for (const char *c = r->label; *c; c++) {
			if (*c == '"')
				fputc('"', f); /* doubled, as CSV quotes a quote */
			fputc(*c, f);
		}
		fprintf(f,
			"\",%s,%u,%u,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%llu,%llu,%llu,%d,"
			"%.3f,%g,%d\n",
			r->transport, r->threads, i + 1, p->offered, p->scheduled, p->achieved,
			p->p50_us, p->p99_us, p->tail_us, p->mean_us, p->send_lag_p99_us,
			(unsigned long long)p->lost, (unsigned long long)p->errors,
			(unsigned long long)p->unsent, p->meets, s->slo_us, s->percentile,
			p->retry);
	}
}
