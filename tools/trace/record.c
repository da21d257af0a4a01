// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <time.h>

#include "pcapio.h"
#include "record.h"

#define POLL_MS	      100	/* how soon the deadline is seen (a signal ends a wait at once) */
#define CAPTURE_BYTES (8 << 20) /* kernel buffer: a burst of replies must not drop */

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
	/* immediate: frames are handed over as they arrive, not a buffer at a time */
	if (pcap_set_snaplen(p, TRACE_SNAPLEN) || pcap_set_immediate_mode(p, 1) ||
	    pcap_set_buffer_size(p, CAPTURE_BYTES)) {
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
	struct trace_pcap_out *file;
	uint64_t captured;
};

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct record_ctx *ctx = (struct record_ctx *)user;

	trace_pcap_write(ctx->file, h, bytes);
	ctx->captured++;
}

int trace_record(const struct trace_record_opts *opts, const volatile sig_atomic_t *stop, FILE *log,
		 struct trace_record_stats *stats, char *why, size_t why_len)
{
	double deadline = opts->seconds > 0 ? now_s() + opts->seconds : 0;
	struct trace_pcap_out file;
	struct record_ctx ctx = {.file = &file};
	struct pcap_stat ps;
	struct pollfd pfd = {.events = POLLIN};
	pcap_t *p;
	int ret, n;

	*stats = (struct trace_record_stats){0};
	ret = capture_open(&p, opts, why, why_len);
	if (ret)
		return ret;
	ret = trace_pcap_create(&file, opts->out, p, why, why_len);
	if (ret)
		goto out_close;
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
		if (trace_pcap_flush(&file)) {
			snprintf(why, why_len, "writing %s failed", opts->out);
			ret = -EIO;
			break;
		}
	}
	stats->captured = ctx.captured;
	if (!pcap_stats(p, &ps))
		stats->dropped = ps.ps_drop;
	if (trace_pcap_close(&file) && !ret) {
		snprintf(why, why_len, "writing %s failed", opts->out);
		ret = -EIO;
	}
out_close:
	pcap_close(p);
	return ret;
}
