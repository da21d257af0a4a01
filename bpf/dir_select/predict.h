/* SPDX-License-Identifier: MIT */
/*
 * Load prediction (bpf/dir_select.h), Pegasus Sec. 6.4 and 7: the directory counts what
 * it sends each server and lets the count drain at the rate the server reports, so it
 * needs no reply to know a burst went there. Kept as the time the server's predicted
 * queue drains (backlog_until): each request sent adds the server's time per request;
 * the least backlog wins, ties turning. Pegasus's switch drains a counter with packets
 * it generates; a time needs no timer.
 */
#ifndef XKV_BPF_DIR_SELECT_PREDICT_H
#define XKV_BPF_DIR_SELECT_PREDICT_H

/* How long server t's predicted queue takes to drain from now. */
static __always_inline __u64 dir_backlog(const struct xkv_dir_telemetry *t, __u64 now)
{
	return t->backlog_until > now ? t->backlog_until - now : 0;
}

static __always_inline __u32 dir_select_predict(struct dir_choice *c, __u32 set)
{
	__u64 now = dir_now(c);

	return DIR_LEAST(set, id, dir_backlog(&c->load->server[id], now));
}

static __always_inline __u32 dir_sent_predict(struct dir_choice *c, __u32 id)
{
	struct xkv_dir_telemetry *t = &c->load->server[id & (XKV_DIR_SERVERS - 1)];
	__u64 now = dir_now(c);

	/* an idle server's queue starts now; racing CPUs may each restart it, and lose a request */
	if (t->backlog_until < now)
		t->backlog_until = now;
	__sync_fetch_and_add(&t->backlog_until, dir_service_ns(t));
	return 0;
}

#endif
