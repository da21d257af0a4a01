// SPDX-License-Identifier: MIT
/*
 * memcached over TCP in xkv-server (docs/MEMCACHED.md): each worker listens on the
 * memcached port (net/tcp_uring.h) and serves its connections between its other
 * requests, one text-protocol session each (proto/mc_text.h). Reads are served by
 * the session from the store; writes go to their partition's writer
 * (xkv_worker_mc_write), which may be another worker: the connection then waits for
 * the result, and reads nothing more meanwhile.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/mc_write.h"
#include "net/tcp_uring.h"
#include "proto/mc_text.h"
#include "server/server.h"
#include "util/counters.h"

/* the longest request: a 1 MiB value, its line (memcached's keys and flags) and CRLFs */
#define MC_IN_MAX (XKV_VALUE_MAX + 4096)

struct mc_worker {
	struct server *srv;
	struct server_worker *w;
	struct xkv_tcp tcp;
	bool open;
	struct xkv_mc_counters counters; /* its commands; connections are the listener's */
	/*
	 * "stats reset": this worker's counters when it last took one (reset_seen), which
	 * `stats` subtracts; set by the worker itself, read by others under the lock. The
	 * live counters (xkv_wstats) are never reset: tools count on them growing.
	 */
	uint64_t reset_seen;
	pthread_mutex_t reset_lock;
	struct xkv_mc_counters reset_base;
};

/* One connection's session. */
struct mc_conn {
	struct mc_worker *mw;
	struct xkv_tcp_conn *c;
	struct xkv_mc_backend backend;
	struct xkv_mc_session session;
	enum xkv_mc_op op; /* of the write away on another worker */
	/*
	 * When the bytes of the command being read came out of io_uring: its arrival, for
	 * latency (the kernel's receive time is not at hand here); kept while a command
	 * waits for more bytes.
	 */
	uint64_t arrival_ns;
	bool partial;
};

struct server_mc {
	struct xkv_handoffs handoffs; /* the rings, when minos does not bring its own */
	bool handoffs_ready;
	struct mc_worker *workers;
	time_t started;
	/* a `flush_all N`: when it runs, on the store's clock; 0: none */
	_Atomic uint32_t flush_at;
	/* "stats reset": how many there were (each worker takes them: reset_seen) */
	_Atomic uint64_t resets;
	_Atomic uint64_t evictions_base; /* the store's evictions at the last one */
	struct xkv_tls *tls; /* with --tls-cert: every worker's connections are TLS */
};

/*
 * The session appends its replies to the connection's output itself: both buffers
 * are plain malloc'd bytes, so the session's is lent the connection's for the call.
 */
static struct xkv_mc_buf out_lend(struct xkv_tcp_conn *c)
{
	return (struct xkv_mc_buf){.data = c->out.data, .len = c->out.len, .cap = c->out.cap};
}

/* ... and given back; an allocation that failed lost replies: the connection closes. */
static void out_return(struct xkv_tcp_conn *c, const struct xkv_mc_buf *out)
{
	c->out = (struct xkv_tcp_buf){.data = out->data, .len = out->len, .cap = out->cap};
	if (out->failed)
		c->close_after = true;
}

static uint64_t conn_tag(const struct xkv_tcp_conn *c)
{
	return (uint64_t)c->slot << 32 | c->gen;
}

/* A write's outcome, as memcached counts it. */
static void count_write(struct xkv_mc_counters *c, enum xkv_mc_op op, enum xkv_mc_status status)
{
	bool miss = status == XKV_MC_NOT_FOUND;

	switch (op) {
	case XKV_MC_CAS:
		c->cas_misses += miss;
		c->cas_badval += status == XKV_MC_EXISTS;
		c->cas_hits += status == XKV_MC_STORED;
		c->cmd_set++;
		break;
	case XKV_MC_DELETE:
		c->delete_hits += !miss;
		c->delete_misses += miss;
		break;
	case XKV_MC_INCR:
		c->incr_hits += !miss;
		c->incr_misses += miss;
		break;
	case XKV_MC_DECR:
		c->decr_hits += !miss;
		c->decr_misses += miss;
		break;
	case XKV_MC_TOUCH:
		c->touch_hits += !miss;
		c->touch_misses += miss;
		c->cmd_touch++;
		break;
	default:
		c->cmd_set++;
		break;
	}
}

static int mc_write(void *ctx, const struct xkv_msg *w, uint64_t hash, struct xkv_mc_result *r)
{
	struct mc_conn *mc = ctx;
	int err = xkv_worker_mc_write(&mc->mw->w->proto, w, hash, r, conn_tag(mc->c));

	if (err == -EINPROGRESS) {
		mc->op = w->mc.cmd.op;
		xkv_tcp_pause(mc->c);
	} else {
		count_write(&mc->mw->counters, w->mc.cmd.op, r->status);
	}
	return err;
}

/* A write another worker applied: its connection, if still there, goes on. */
static void mc_done(void *ctx, uint64_t tag, const struct xkv_mc_result *r)
{
	struct mc_worker *mw = ctx;
	struct xkv_tcp_conn *c = xkv_tcp_conn_of(&mw->tcp, (uint32_t)(tag >> 32), (uint32_t)tag);
	struct xkv_mc_buf out;
	struct mc_conn *mc;

	if (!c)
		return; /* it closed while its write was away */
	mc = c->session;
	count_write(&mw->counters, mc->op, r->status);
	out = out_lend(c);
	xkv_mc_session_resume(&mc->session, r, &out);
	out_return(c, &out);
	/* gat goes on with its next key from resume, and may be waiting again */
	if (xkv_mc_session_waiting(&mc->session))
		xkv_tcp_kick(&mw->tcp, c);
	else
		xkv_tcp_resume(&mw->tcp, c);
}

#define STAT_LINE_MAX 128 /* "STAT name value\r\n" */

static void stat_printf(struct xkv_mc_buf *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void stat_printf(struct xkv_mc_buf *out, const char *fmt, ...)
{
	char *at = xkv_mc_buf_reserve(out, STAT_LINE_MAX);
	va_list ap;
	int n;

	if (!at)
		return;
	va_start(ap, fmt);
	n = vsnprintf(at, STAT_LINE_MAX, fmt, ap);
	va_end(ap);
	out->len += n > 0 && n < STAT_LINE_MAX ? (size_t)n : 0;
}

static void stat_line(void *ctx, const char *group, const char *name, uint64_t value)
{
	(void)group;
	stat_printf(ctx, "STAT %s %llu\r\n", name, (unsigned long long)value);
}

/*
 * "STAT latency_OP_INTERVAL_p50_ns N", p99, p999: every worker's requests of op, all
 * size classes merged, as they are now (each count an 8-byte word a worker increments).
 */
static void stat_latency(const struct server *s, struct xkv_mc_buf *out)
{
	static const struct {
		const char *name;
		double q;
	} ps[] = {{"p50", 0.5}, {"p99", 0.99}, {"p999", 0.999}};
	struct xkv_lat_hist *h = malloc(sizeof(*h));

	if (!h || !s->o.latency)
		goto out_free;
	for (uint32_t op = 0; op < XKV_LAT_OPS; op++)
		for (uint32_t i = 0; i < XKV_LAT_INTERVALS; i++) {
			memset(h, 0, sizeof(*h));
			for (uint32_t w = 0; w < s->o.workers; w++)
				for (uint32_t cls = 0; cls < XKV_SIZE_CLASSES; cls++)
					xkv_lat_hist_add_dir(h, &s->counters.lat_dirs[w],
							     s->counters.lat_chunks, op, cls, i);
			if (!xkv_lat_hist_count(h))
				continue;
			for (size_t p = 0; p < sizeof(ps) / sizeof(ps[0]); p++)
				stat_printf(out, "STAT latency_%s_%s_%s_ns %llu\r\n",
					    xkv_lat_op_name(op), xkv_lat_interval_name(i), ps[p].name,
					    (unsigned long long)xkv_lat_hist_percentile(h, ps[p].q));
		}
out_free:
	free(h);
}

/* Worker w's counters as they are: for w itself, or once it has stopped. */
static void mc_counters_raw(const struct mc_worker *mw, struct xkv_mc_counters *c)
{
	*c = mw->counters;
	c->curr_connections = mw->tcp.nconns;
	c->total_connections = mw->tcp.accepted;
	c->refused_connections = mw->tcp.refused;
	c->idle_kicks = mw->tcp.kicks;
	c->ssl_handshake_errors = mw->tcp.tls_handshake_errors;
}

/* On mw's own thread: a `stats reset` it has not taken yet starts its counters again. */
static void mc_reset_catch_up(struct mc_worker *mw)
{
	uint64_t resets = atomic_load_explicit(&mw->srv->mc->resets, memory_order_acquire);

	if (mw->reset_seen == resets)
		return;
	pthread_mutex_lock(&mw->reset_lock);
	mc_counters_raw(mw, &mw->reset_base);
	pthread_mutex_unlock(&mw->reset_lock);
	mw->reset_seen = resets;
}

/* *c less worker mw's reset base, curr_connections (what is open now) aside. */
static void mc_counters_since_reset(struct mc_worker *mw, struct xkv_mc_counters *c)
{
	uint64_t *word = (uint64_t *)c;
	const uint64_t *base = (const uint64_t *)&mw->reset_base;
	size_t gauge = offsetof(struct xkv_mc_counters, curr_connections) / sizeof(uint64_t);

	_Static_assert(sizeof(*c) % sizeof(uint64_t) == 0, "counters are words");
	pthread_mutex_lock(&mw->reset_lock);
	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		if (i != gauge) /* a snapshot published before the reset is older: none below 0 */
			word[i] = word[i] > base[i] ? word[i] - base[i] : 0;
	pthread_mutex_unlock(&mw->reset_lock);
}

/*
 * The counters memcached's `stats` reports, since the last `stats reset`: this
 * worker's as they are, the others' as they last published them (every
 * XKV_PUBLISH_NS), so that no counter is shared between workers.
 */
static void mc_counters_now(struct mc_worker *mw, struct xkv_mc_counters *sum)
{
	struct server *s = mw->srv;
	struct xkv_worker_counters snap;
	struct xkv_mc_counters c;

	*sum = (struct xkv_mc_counters){0};
	for (uint32_t i = 0; i < s->o.workers; i++) {
		struct mc_worker *other = &s->mc->workers[i];

		if (other == mw) {
			mc_reset_catch_up(mw);
			mc_counters_raw(mw, &c);
		} else if (xkv_counters_read(&snap, &s->counters.workers[i], sizeof(snap)) == 0) {
			c = snap.mc;
		} else {
			continue;
		}
		mc_counters_since_reset(other, &c);
		xkv_mc_counters_add(sum, &c);
	}
}

/*
 * `stats reset`: this worker starts again from 0 at once. Every other starts from what
 * it last published (exact for a worker that served nothing since), until it takes the
 * reset itself as it next publishes (within XKV_PUBLISH_NS, docs/MEMCACHED.md).
 */
static void mc_stats_reset(void *ctx)
{
	struct mc_worker *mw = ((struct mc_conn *)ctx)->mw;
	struct server *s = mw->srv;
	struct xkv_worker_counters snap;
	struct xkv_store_stats st;

	xkv_store_get_stats(s->store, &st);
	atomic_store_explicit(&s->mc->evictions_base, st.evictions, memory_order_relaxed);
	for (uint32_t i = 0; i < s->o.workers; i++) {
		struct mc_worker *other = &s->mc->workers[i];

		if (other == mw ||
		    xkv_counters_read(&snap, &s->counters.workers[i], sizeof(snap)))
			continue;
		pthread_mutex_lock(&other->reset_lock);
		other->reset_base = snap.mc;
		pthread_mutex_unlock(&other->reset_lock);
	}
	/* after the bases above: a worker that sees the reset replaces its own exactly */
	atomic_fetch_add_explicit(&s->mc->resets, 1, memory_order_release);
	mc_reset_catch_up(mw);
}

/* memcached's TLS settings, as memcached 1.6 built with TLS shows them. */
static void mc_stats_settings_tls(const struct server_opts *o, struct xkv_mc_buf *out)
{
	const struct xkv_tls_opts *t = &o->tls;
	const char *none = "NULL";

	stat_printf(out, "STAT ssl_enabled %s\r\n", t->cert ? "yes" : "no");
	stat_printf(out, "STAT ssl_chain_cert %s\r\n", t->cert ? t->cert : none);
	stat_printf(out, "STAT ssl_key %s\r\n", t->key ? t->key : t->cert ? t->cert : none);
	stat_printf(out, "STAT ssl_verify_mode %d\r\n", (int)t->verify);
	stat_printf(out, "STAT ssl_keyformat 1\r\n"); /* SSL_FILETYPE_PEM */
	stat_printf(out, "STAT ssl_ciphers %s\r\n", t->ciphers ? t->ciphers : none);
	stat_printf(out, "STAT ssl_ca_cert %s\r\n", t->ca ? t->ca : none);
	stat_printf(out, "STAT ssl_session_cache no\r\n");
	stat_printf(out, "STAT ssl_kernel_tls no\r\n");
	stat_printf(out, "STAT ssl_min_version tlsv%s\r\n",
		    t->min_version ? t->min_version : "1.2");
}

/* memcached's `stats settings`: those of its settings xkv has, as xkv has them. */
static void mc_stats_settings(void *ctx, struct xkv_mc_buf *out)
{
	const struct server *s = ((struct mc_conn *)ctx)->mw->srv;
	struct xkv_store_stats st;

	xkv_store_get_stats(s->store, &st);
	stat_printf(out, "STAT maxbytes %llu\r\n", (unsigned long long)st.bytes_limit);
	stat_printf(out, "STAT maxconns %u\r\n", s->o.max_conns);
	stat_printf(out, "STAT tcpport %u\r\n", s->o.memcached_port);
	/* memcached's UDP dialect is served where XDP steers it */
	stat_printf(out, "STAT udpport %u\r\n",
		    strcmp(s->o.backend->name, "xdp") ? 0 : s->o.memcached_port);
	stat_printf(out, "STAT evictions %s\r\n", s->o.mode == XKV_MODE_CACHE ? "on" : "off");
	stat_printf(out, "STAT num_threads %u\r\n", s->o.workers);
	stat_printf(out, "STAT cas_enabled yes\r\n");
	stat_printf(out, "STAT binding_protocol auto-negotiate\r\n");
	stat_printf(out, "STAT item_size_max %u\r\n", XKV_VALUE_MAX);
	stat_printf(out, "STAT flush_enabled yes\r\n");
	mc_stats_settings_tls(&s->o, out);
}

/* A footprint class (store.h) memcached's `stats items` and `stats slabs` show. */
static bool class_shown(const struct xkv_store_class_stats *c)
{
	return c->items || c->evicted || c->outofmemory;
}

/*
 * memcached's `stats items`, a slab class being one of the store's footprint classes,
 * by its number: the items in it, their bytes, those evicted and those refused.
 * memcached's LRU ages and segments have no counterpart in a CLOCK without timestamps.
 */
static void mc_stats_items(void *ctx, struct xkv_mc_buf *out)
{
	struct xkv_store_class_stats cls[XKV_STORE_CLASSES];

	xkv_store_get_class_stats(((struct mc_conn *)ctx)->mw->srv->store, cls);
	for (uint32_t c = 0; c < XKV_STORE_CLASSES; c++) {
		if (!class_shown(&cls[c]))
			continue;
		stat_printf(out, "STAT items:%u:number %llu\r\n", c,
			    (unsigned long long)cls[c].items);
		stat_printf(out, "STAT items:%u:mem_requested %llu\r\n", c,
			    (unsigned long long)cls[c].bytes);
		stat_printf(out, "STAT items:%u:evicted %llu\r\n", c,
			    (unsigned long long)cls[c].evicted);
		stat_printf(out, "STAT items:%u:outofmemory %llu\r\n", c,
			    (unsigned long long)cls[c].outofmemory);
	}
}

/*
 * memcached's `stats slabs` for the same classes: every item is allocated to its size,
 * so a chunk is an item, every chunk is used (no free ones), and pages are the class's
 * bytes in memcached's 1 MiB pages, rounded up; chunk_size is the class's bound.
 */
static void mc_stats_slabs(void *ctx, struct xkv_mc_buf *out)
{
	const struct server *s = ((struct mc_conn *)ctx)->mw->srv;
	struct xkv_store_class_stats cls[XKV_STORE_CLASSES];
	struct xkv_store_stats st;
	uint32_t active = 0;

	xkv_store_get_class_stats(s->store, cls);
	xkv_store_get_stats(s->store, &st);
	for (uint32_t c = 0; c < XKV_STORE_CLASSES; c++) {
		unsigned long long items = cls[c].items;

		if (!class_shown(&cls[c]))
			continue;
		active++;
		stat_printf(out, "STAT %u:chunk_size %llu\r\n", c, 1ull << c);
		stat_printf(out, "STAT %u:total_pages %llu\r\n", c,
			    (unsigned long long)(cls[c].bytes + (1 << 20) - 1) >> 20);
		stat_printf(out, "STAT %u:total_chunks %llu\r\n", c, items);
		stat_printf(out, "STAT %u:used_chunks %llu\r\n", c, items);
		stat_printf(out, "STAT %u:free_chunks 0\r\n", c);
		stat_printf(out, "STAT %u:free_chunks_end 0\r\n", c);
		stat_printf(out, "STAT %u:mem_requested %llu\r\n", c,
			    (unsigned long long)cls[c].bytes);
	}
	stat_printf(out, "STAT active_slabs %u\r\n", active);
	stat_printf(out, "STAT total_malloced %llu\r\n", (unsigned long long)st.bytes_used);
}

/* refresh_certs: the TLS context made again from its files, for new connections. */
static int mc_refresh_certs(void *ctx, char *why, size_t why_len)
{
	struct xkv_tls *tls = ((struct mc_conn *)ctx)->mw->srv->mc->tls;

	return tls ? xkv_tls_refresh(tls, why, why_len) : -ENOTSUP;
}

/* memcached's `stats`: the counters since the last `stats reset`, the store as it is. */
static void mc_stats(void *ctx, struct xkv_mc_buf *out)
{
	struct mc_worker *mw = ((struct mc_conn *)ctx)->mw;
	struct server *s = mw->srv;
	uint64_t base = atomic_load_explicit(&s->mc->evictions_base, memory_order_relaxed);
	struct xkv_mc_counters sum;
	struct xkv_store_stats st;
	uint64_t evictions;

	mc_counters_now(mw, &sum);
	xkv_store_get_stats(s->store, &st);
	evictions = st.evictions > base ? st.evictions - base : 0;
	stat_printf(out, "STAT pid %d\r\n", (int)getpid());
	stat_printf(out, "STAT uptime %lld\r\n", (long long)(time(NULL) - s->mc->started));
	stat_printf(out, "STAT time %u\r\n", xkv_store_now(s->store));
	stat_printf(out, "STAT version %s\r\n", XKV_MC_VERSION);
	stat_printf(out, "STAT pointer_size %zu\r\n", sizeof(void *) * 8);
	stat_printf(out, "STAT threads %u\r\n", s->o.workers);
	xkv_mc_counters_each(&sum, stat_line, out);
	if (s->mc->tls)
		stat_printf(out, "STAT time_since_server_cert_refresh %lld\r\n",
			    (long long)(time(NULL) - xkv_tls_loaded(s->mc->tls)));
	stat_printf(out, "STAT curr_items %llu\r\n", (unsigned long long)st.items);
	stat_printf(out, "STAT bytes %llu\r\n", (unsigned long long)st.bytes_used);
	stat_printf(out, "STAT limit_maxbytes %llu\r\n", (unsigned long long)st.bytes_limit);
	stat_printf(out, "STAT evictions %llu\r\n", (unsigned long long)evictions);
	stat_latency(s, out);
}

/*
 * flush_all: now, or at the time memcached's exptime rule gives the delay, which the
 * main thread's tick keeps (server_mc_tick). Either replaces a flush still to come, as
 * in memcached, where the last flush_all sets the one time items older than are gone.
 */
static int mc_flush(void *ctx, int32_t delay)
{
	struct mc_conn *mc = ctx;
	struct server *s = mc->mw->srv;

	mc->mw->counters.cmd_flush++;
	if (delay <= 0) {
		atomic_store_explicit(&s->mc->flush_at, 0, memory_order_relaxed);
		xkv_store_flush(s->store);
		return 0;
	}
	atomic_store_explicit(&s->mc->flush_at, xkv_mc_exptime_at(xkv_store_now(s->store), delay),
			      memory_order_relaxed);
	return 0;
}

void server_mc_tick(struct server *s)
{
	uint32_t at;

	if (!s->mc)
		return;
	at = atomic_load_explicit(&s->mc->flush_at, memory_order_relaxed);
	/* a flush_all that set another time meanwhile keeps it */
	if (at && xkv_store_now(s->store) >= at &&
	    atomic_compare_exchange_strong(&s->mc->flush_at, &at, 0))
		xkv_store_flush(s->store);
}

/*
 * cache_memlimit: up to --memory, which the store's tables were sized for (their
 * bucket_bits), down to anything; see xkv_store_set_limit.
 */
static int mc_memlimit(void *ctx, size_t bytes)
{
	struct mc_conn *mc = ctx;

	if (bytes > mc->mw->srv->o.memory)
		return -ERANGE;
	xkv_store_set_limit(mc->mw->srv->store, bytes);
	return 0;
}

static uint32_t mc_now(void *ctx)
{
	const struct mc_conn *mc = ctx;

	return xkv_store_now(mc->mw->srv->store);
}

/* A retrieval, served here from the store whichever worker writes the key. */
static int mc_read(void *ctx, const void *key, uint16_t key_len, uint64_t hash, void *buf,
		   size_t cap, uint32_t *value_len, struct xkv_item_meta *meta)
{
	struct mc_conn *mc = ctx;
	struct xkv_mc_counters *c = &mc->mw->counters;
	int err = xkv_store_get_meta(mc->mw->srv->store, key, key_len, hash, buf, cap, value_len,
				     meta);

	/* -ENOBUFS: the session asks again with room for the value */
	c->cmd_get += err != -ENOBUFS;
	c->get_hits += err == 0;
	c->get_misses += err == -ENOENT;
	return err;
}

static int mc_peek(void *ctx, const void *key, uint16_t key_len, uint64_t hash,
		   struct xkv_item_meta *meta)
{
	const struct mc_conn *mc = ctx;
	uint32_t value_len;

	return xkv_store_peek_meta(mc->mw->srv->store, key, key_len, hash, &value_len, meta);
}

/*
 * A command answered: its worker's round was busy (busy_ns), and with --latency on it is
 * timed as a memcached request from its arrival (exec's latency).
 */
static void mc_answered(void *ctx, size_t bytes)
{
	struct mc_conn *mc = ctx;
	static const struct xkv_msg mc_request = {.mc.dialect = XKV_DIALECT_MC_ASCII};
	struct xkv_origin from = {.peer = mc->c->peer}; /* its reply went on the connection */

	xkv_worker_tcp_served(&mc->mw->w->proto);
	if (!mc->mw->w->proto.exec.lat)
		return;
	from.peer.arrival_ns = mc->arrival_ns;
	xkv_exec_done(&mc->mw->w->proto.exec, &from, &mc_request,
		      bytes < UINT32_MAX ? (uint32_t)bytes : UINT32_MAX);
}

static int conn_open(void *ctx, struct xkv_tcp_conn *c)
{
	struct mc_worker *mw = ctx;
	const struct server_opts *o = &mw->srv->o;
	struct mc_conn *mc;

	/* as the UDP path: only the allowlist's networks are served */
	if (!xkv_peer_in(&c->peer, o->allow, o->n_allow))
		return -EACCES;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	*mc = (struct mc_conn){.mw = mw, .c = c};
	mc->backend = (struct xkv_mc_backend){.read = mc_read,
					      .peek = mc_peek,
					      .write = mc_write,
					      .stats = mc_stats,
					      .stats_settings = mc_stats_settings,
					      .stats_items = mc_stats_items,
					      .stats_slabs = mc_stats_slabs,
					      .stats_reset = mc_stats_reset,
					      .flush = mc_flush,
					      .memlimit = mc_memlimit,
					      .refresh_certs = mc_refresh_certs,
					      .now = mc_now,
					      .answered = mc_answered,
					      .ctx = mc};
	xkv_mc_session_init(&mc->session, &mc->backend);
	c->session = mc;
	return 0;
}

static size_t conn_input(void *ctx, struct xkv_tcp_conn *c, const char *in, size_t len,
			 bool *close)
{
	struct mc_conn *mc = c->session;
	struct xkv_mc_buf out = out_lend(c);
	struct xkv_exec *x = &mc->mw->w->proto.exec;
	size_t used;

	(void)ctx;
	if (x->lat) {
		/* the worker starts on these bytes now; a command begun before arrived before */
		x->start_ns = xkv_fast_clock_now(&x->clock);
		if (!mc->partial)
			mc->arrival_ns = x->start_ns;
	}
	used = xkv_mc_session_feed(&mc->session, in, len, &out, close);
	mc->partial = used < len;
	out_return(c, &out);
	return used;
}

static void conn_close(void *ctx, struct xkv_tcp_conn *c)
{
	struct mc_conn *mc = c->session;

	(void)ctx;
	xkv_mc_session_free(&mc->session);
	free(mc);
}

int server_mc_open(struct server *s)
{
	const struct xkv_tcp_handler handler = {
		.open = conn_open, .input = conn_input, .close = conn_close};
	uint32_t per_worker = (s->o.max_conns + s->o.workers - 1) / s->o.workers;
	struct server_mc *m = calloc(1, sizeof(*m));
	char why[512];
	int err;

	if (!m)
		return -ENOMEM;
	s->mc = m;
	m->started = time(NULL);
	m->workers = calloc(s->o.workers, sizeof(*m->workers));
	if (!m->workers)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->o.workers; i++)
		pthread_mutex_init(&m->workers[i].reset_lock, NULL);
	if (s->o.tls.cert) {
		err = xkv_tls_new(&s->o.tls, &m->tls, why, sizeof(why));
		if (err) {
			fprintf(stderr, "xkv-server: TLS: %s\n", why);
			return err;
		}
	}
	if (!s->minos) {
		err = xkv_handoffs_init(&m->handoffs, s->o.workers);
		if (err)
			return err;
		m->handoffs_ready = true;
	}
	for (uint32_t i = 0; i < s->o.workers; i++) {
		struct mc_worker *mw = &m->workers[i];
		struct xkv_tcp_handler h = handler;

		mw->srv = s;
		mw->w = &s->workers[i];
		h.ctx = mw;
		err = xkv_tcp_open(&mw->tcp, s->o.memcached_port, per_worker, MC_IN_MAX, m->tls,
				   &h);
		if (err) {
			fprintf(stderr, "xkv-server: worker %u: memcached TCP port %u: %s\n", i,
				s->o.memcached_port, strerror(-err));
			return err;
		}
		mw->open = true;
	}
	return 0;
}

void server_mc_worker(struct server *s, struct server_worker *w)
{
	struct server_mc *m = s->mc;

	if (m->handoffs_ready)
		xkv_worker_handoff_rings(&w->proto, &m->handoffs);
	xkv_worker_mc(&w->proto, mc_done, &m->workers[w->id]);
}

void server_mc_counters(const struct server *s, uint32_t w, struct xkv_mc_counters *c)
{
	struct mc_worker *mw = s->mc ? &s->mc->workers[w] : NULL;
	struct xkv_mc_counters raw;

	if (!mw || !mw->open)
		return;
	/* its own thread publishing: a reset it has not taken yet, taken now */
	mc_reset_catch_up(mw);
	mc_counters_raw(mw, &raw);
	xkv_mc_counters_add(c, &raw);
}

unsigned server_mc_poll(struct server *s, struct server_worker *w)
{
	return s->mc ? xkv_tcp_reap(&s->mc->workers[w->id].tcp) : 0;
}

int server_mc_fd(const struct server *s, const struct server_worker *w)
{
	return s->mc ? xkv_tcp_fd(&s->mc->workers[w->id].tcp) : -1;
}

void server_mc_close(struct server *s)
{
	struct server_mc *m = s->mc;

	if (!m)
		return;
	for (uint32_t i = 0; m->workers && i < s->o.workers; i++) {
		if (m->workers[i].open)
			xkv_tcp_close(&m->workers[i].tcp);
	}
	if (m->handoffs_ready)
		xkv_handoffs_fini(&m->handoffs);
	xkv_tls_free(m->tls); /* after every connection made from it */
	for (uint32_t i = 0; m->workers && i < s->o.workers; i++)
		pthread_mutex_destroy(&m->workers[i].reset_lock);
	free(m->workers);
	free(m);
	s->mc = NULL;
}
