// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "pcapio.h"
#include "pcapng.h"
#include "record.h"

#define POLL_MS	      100	 /* how soon the deadline is seen (a signal ends a wait at once) */
#define BLOCK_MS      20	 /* TPACKET_V3 hands a block over when full or this old */
#define CAPTURE_BYTES (64 << 20) /* kernel ring: 0.2 s of full-size frames at 200 K pps */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* pcap_set_*() and pcap_activate() results, with pcap's reason in why. */
static int capture_open(pcap_t **out, const struct trace_record_opts *opts, char *why,
			size_t why_len)
{
	char errbuf[PCAP_ERRBUF_SIZE], filter[32];
	struct bpf_program prog;
	pcap_t *p;
	int ret;

	p = pcap_create(opts->iface, errbuf);
	if (!p) {
		snprintf(why, why_len, "%s", errbuf);
		return -ENODEV;
	}
	/*
	 * Not immediate: libpcap then uses TPACKET_V3, whose blocks hold frames back to
	 * back at their own length, and which hands over a block at a time, so one wakeup
	 * and one write serve many frames. Immediate mode (TPACKET_V2, a slot of the
	 * largest frame's size per frame, a wakeup per frame) kept up with 50 K pps of
	 * small frames but dropped 3 % at 200 K pps (docs/TRACE.md, "record").
	 */
	if (pcap_set_snaplen(p, TRACE_SNAPLEN) || pcap_set_immediate_mode(p, 0) ||
	    pcap_set_timeout(p, BLOCK_MS) || pcap_set_buffer_size(p, CAPTURE_BYTES) ||
	    pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO)) {
		snprintf(why, why_len, "setting capture options failed");
		ret = -EINVAL;
		goto out_close;
	}
	ret = pcap_activate(p);
	if (ret < 0) {
		/* pcap_geterr() is empty for some statuses; the status alone says less */
		snprintf(why, why_len, "%s",
			 *pcap_geterr(p) ? pcap_geterr(p) : pcap_statustostr(ret));
		ret = ret == PCAP_ERROR_PERM_DENIED ? -EPERM : -ENODEV;
		goto out_close;
	}
	/* libpcap's own wait ignores signals and timeouts: trace_record() polls instead */
	if (pcap_setnonblock(p, 1, errbuf)) {
		snprintf(why, why_len, "%s", errbuf);
		ret = -EIO;
		goto out_close;
	}
	snprintf(filter, sizeof(filter), "udp port %u", opts->port);
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN))
		goto out_filter;
	ret = pcap_setfilter(p, &prog);
	pcap_freecode(&prog);
	if (ret)
		goto out_filter;
	*out = p;
	return 0;

out_filter:
	snprintf(why, why_len, "filter \"%s\": %s", filter, pcap_geterr(p));
	ret = -EINVAL;
out_close:
	pcap_close(p);
	return ret;
}

struct record_ctx {
	struct trace_pcapng *file;
	uint64_t captured;
	int error; /* the first failed write */
};

static uint64_t ts_ns(const struct timeval *ts) /* tv_usec holds ns: nanosecond precision */
{
	return (uint64_t)ts->tv_sec * 1000000000 + (uint64_t)ts->tv_usec;
}

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct record_ctx *ctx = (struct record_ctx *)user;
	int ret = trace_pcapng_write(ctx->file, ts_ns(&h->ts), bytes, h->caplen, h->len);

	if (ret && !ctx->error)
		ctx->error = ret;
	ctx->captured++;
}

int trace_record(const struct trace_record_opts *opts, const volatile sig_atomic_t *stop, FILE *log,
		 struct trace_record_stats *stats, char *why, size_t why_len)
{
	double deadline = opts->seconds > 0 ? now_s() + opts->seconds : 0;
	struct trace_pcapng file;
	struct record_ctx ctx = {.file = &file};
	struct timespec end;
	struct pcap_stat ps;
	struct pollfd pfd = {.events = POLLIN};
	pcap_t *p;
	int ret, n;

	*stats = (struct trace_record_stats){0};
	ret = capture_open(&p, opts, why, why_len);
	if (ret)
		return ret;
	ret = trace_pcapng_create(&file, opts->out, pcap_datalink(p), TRACE_SNAPLEN);
	if (ret) {
		snprintf(why, why_len, "%s: %s", opts->out, strerror(-ret));
		goto out_close;
	}
	pfd.fd = pcap_get_selectable_fd(p);
	fprintf(log, "recording UDP port %u on %s to %s\n", opts->port, opts->iface, opts->out);
	fflush(log);

	while (!*stop && (!opts->count || ctx.captured < opts->count) &&
	       (!deadline || now_s() < deadline)) {
		uint64_t left = opts->count ? opts->count - ctx.captured : 0;

		n = pcap_dispatch(p,
				  !left		   ? -1
				  : left > INT_MAX ? INT_MAX
						   : (int)left,
				  on_frame, (u_char *)&ctx);
		if (n == PCAP_ERROR) {
			snprintf(why, why_len, "capture failed: %s", pcap_geterr(p));
			ret = -EIO;
			break;
		}
		if (n == 0) { /* nothing yet: wait for a frame, the deadline or a signal */
			poll(&pfd, 1, POLL_MS);
			continue;
		}
		/* a reader of the growing file sees every frame captured so far */
		if (ctx.error || trace_pcapng_flush(&file)) {
			snprintf(why, why_len, "writing %s failed", opts->out);
			ret = -EIO;
			break;
		}
	}
	stats->captured = ctx.captured;
	if (!pcap_stats(p, &ps))
		stats->dropped = ps.ps_drop;
	/* the drops go in the file itself, where check reads them */
	clock_gettime(CLOCK_REALTIME, &end);
	if (trace_pcapng_close(&file, (uint64_t)end.tv_sec * 1000000000 + (uint64_t)end.tv_nsec,
			       ctx.captured + stats->dropped, stats->dropped) &&
	    !ret) {
		snprintf(why, why_len, "writing %s failed", opts->out);
		ret = -EIO;
	}
out_close:
	pcap_close(p);
	return ret;
}
