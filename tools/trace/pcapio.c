// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>

#include "pcapio.h"

int trace_pcap_each(const char *path, trace_frame_fn fn, void *ctx, char *why, size_t why_len)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t frame = 0;
	pcap_t *p;
	int ret;

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!p) { /* errbuf names the file */
		snprintf(why, why_len, "%s", errbuf);
		return -EIO;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		snprintf(why, why_len, "%s: link type %s: only Ethernet captures are read", path,
			 pcap_datalink_val_to_name(pcap_datalink(p)) ?: "unknown");
		ret = -EPROTONOSUPPORT;
		goto out_close;
	}
	while ((ret = pcap_next_ex(p, &h, &data)) == 1) {
		frame++;
		if (h->caplen < h->len) {
			snprintf(why, why_len,
				 "%s: frame %llu: %u of its %u bytes were captured (snapshot "
				 "length)",
				 path, (unsigned long long)frame, h->caplen, h->len);
			ret = -EMSGSIZE;
			goto out_close;
		}
		/* tv_usec holds nanoseconds at this precision */
		ret = fn(ctx, frame, (uint64_t)h->ts.tv_sec * 1000000000 + (uint64_t)h->ts.tv_usec,
			 data, h->caplen);
		if (ret)
			goto out_close;
	}
	if (ret == PCAP_ERROR) {
		snprintf(why, why_len, "%s: after frame %llu: %s", path, (unsigned long long)frame,
			 pcap_geterr(p));
		ret = -EIO;
		goto out_close;
	}
	ret = 0;
out_close:
	pcap_close(p);
	return ret;
}

int trace_pcap_create(struct trace_pcap_out *out, const char *path, pcap_t *source, char *why,
		      size_t why_len)
{
	*out = (struct trace_pcap_out){0};
	if (!source) {
		out->dead = pcap_open_dead(DLT_EN10MB, TRACE_SNAPLEN);
		if (!out->dead) {
			snprintf(why, why_len, "%s: out of memory", path);
			return -ENOMEM;
		}
		source = out->dead;
	}
	out->dumper = pcap_dump_open(source, path);
	if (!out->dumper) {
		snprintf(why, why_len, "%s", pcap_geterr(source));
		if (out->dead)
			pcap_close(out->dead);
		out->dead = NULL;
		return -EIO;
	}
	return 0;
}

void trace_pcap_write(struct trace_pcap_out *out, const struct pcap_pkthdr *h, const uint8_t *frame)
{
	pcap_dump((u_char *)out->dumper, h, frame);
}

int trace_pcap_write_at(void *ctx, uint64_t ns, const uint8_t *frame, uint32_t len)
{
	struct pcap_pkthdr h = {
		.ts = {.tv_sec = (time_t)(ns / 1000000000),
		       .tv_usec = (suseconds_t)(ns % 1000000000 / 1000)},
		.caplen = len,
		.len = len,
	};

	trace_pcap_write(ctx, &h, frame);
	return 0;
}

int trace_pcap_flush(struct trace_pcap_out *out)
{
	/* pcap_dump() has no error return: a full disk shows in the stream */
	errno = 0;
	if (pcap_dump_flush(out->dumper) || ferror(pcap_dump_file(out->dumper)))
		return errno ? -errno : -EIO;
	return 0;
}

int trace_pcap_close(struct trace_pcap_out *out)
{
	int ret = trace_pcap_flush(out);

	/* pcap_dump_close() hides fclose()'s result: the flush is the last check */
	pcap_dump_close(out->dumper);
	if (out->dead)
		pcap_close(out->dead);
	*out = (struct trace_pcap_out){0};
	return ret;
}
