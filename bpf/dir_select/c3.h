/* SPDX-License-Identifier: MIT */
/*
 * C3's scoring (Suresh et al., NSDI'15, as Hector reimplements it; bpf/dir_select.h):
 *
 *	score = R - 1/mu + (1/mu) (1 + c m + q)^3
 *
 * R the moving mean of a request's time there and back (the directory stamps each
 * request, the server echoes the stamp), 1/mu of the server's time per request and q
 * of its queue (both from its replies), c the requests sent there and not answered. m
 * is the number of coordinators that send to the server, c m their outstanding
 * requests together: one here, the directory. The cube makes a longer queue cost more
 * than in proportion. Without C3's rate limiter, as in Hector. Least score wins, ties
 * turning.
 */
#ifndef XKV_BPF_DIR_SELECT_C3_H
#define XKV_BPF_DIR_SELECT_C3_H

/* (1 + c + q) at most this, cubed at most 2^36: times 1/mu (< 2^21 ns) it fits 64 bits */
#define DIR_C3_QUEUE_MAX 4096

static __always_inline __u64 dir_c3_score(const struct xkv_dir_telemetry *t)
{
	__s64 c = (__s64)t->outstanding; /* racing replies may take it below 0 */
	__u64 inv_mu = t->service_avg ? t->service_avg : XKV_DIR_SERVICE_DEFAULT_NS;
	__u64 n = 1 + (c > 0 ? (__u64)c : 0) + (t->queue_avg >> 4);

	if (n > DIR_C3_QUEUE_MAX)
		n = DIR_C3_QUEUE_MAX;
	/* R - 1/mu + 1/mu n^3, in an order that cannot go below 0 */
	return t->response_avg + inv_mu * (n * n * n - 1);
}

static __always_inline __u32 dir_select_c3(struct dir_choice *c, __u32 set)
{
	return DIR_LEAST(set, id, dir_c3_score(&c->load->server[id]));
}

static __always_inline __u32 dir_sent_c3(struct dir_choice *c, __u32 id)
{
	struct xkv_dir_telemetry *t = &c->load->server[id & (XKV_DIR_SERVERS - 1)];
	__u64 now = dir_now(c);

	/* a reply lost never comes to take its request off: counting restarts each second */
	if (now - t->outstanding_since > XKV_DIR_RESPONSE_MAX_NS) {
		t->outstanding = 0;
		t->outstanding_since = now;
	}
	__sync_fetch_and_add(&t->outstanding, 1);
	return (__u32)now | 1; /* 0 is no stamp */
}

#endif
