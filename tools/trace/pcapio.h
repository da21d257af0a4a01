/* SPDX-License-Identifier: MIT */
/* Ethernet frames in and out of pcap files, with libpcap. */
#ifndef XKV_TRACE_PCAPIO_H
#define XKV_TRACE_PCAPIO_H

#include <pcap/pcap.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_SNAPLEN 65535 /* whole frames: check cannot judge a cut reply */

/*
 * Called per frame; frame counts from 1 as Wireshark numbers them, ns is its
 * capture time in nanoseconds since the epoch. Nonzero stops.
 */
typedef int (*trace_frame_fn)(void *ctx, uint64_t frame, uint64_t ns, const uint8_t *data,
			      uint32_t len);

/*
 * Calls fn on every frame of the Ethernet capture at path (pcap or pcapng). Returns 0, what fn
 * returned, or -errno with the reason in why (naming the file): it cannot be read, is not
 * Ethernet (-EPROTONOSUPPORT), or holds a frame cut by the snapshot length
 * (-EMSGSIZE: its replies could not be checked).
 */
int trace_pcap_each(const char *path, trace_frame_fn fn, void *ctx, char *why, size_t why_len);

struct trace_pcap_out {
	pcap_t *dead; /* the handle behind dumper when it has no live one */
	pcap_dumper_t *dumper;
};

/*
 * Creates a capture file at path with the link type of source (a live handle), or
 * Ethernet when source is NULL. Returns 0 or -errno with the reason in why
 * (naming the file).
 */
int trace_pcap_create(struct trace_pcap_out *out, const char *path, pcap_t *source, char *why,
		      size_t why_len);

/* Appends a frame; errors show at the next flush or at close. */
void trace_pcap_write(struct trace_pcap_out *out, const struct pcap_pkthdr *h,
		      const uint8_t *frame);

/* Appends a frame stamped ns after the epoch; ctx is a struct trace_pcap_out (a trace_gen_fn). */
int trace_pcap_write_at(void *ctx, uint64_t ns, const uint8_t *frame, uint32_t len);

/* Writes out what is buffered. Returns 0 or -errno. */
int trace_pcap_flush(struct trace_pcap_out *out);

/* Flushes and closes. Returns 0 or -errno (the file is incomplete). */
int trace_pcap_close(struct trace_pcap_out *out);

#endif /* XKV_TRACE_PCAPIO_H */
