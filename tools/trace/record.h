/* SPDX-License-Identifier: MIT */
/* Capture of live xkv traffic (requests to a port and replies from it) to a pcapng file. */
#ifndef XKV_TRACE_RECORD_H
#define XKV_TRACE_RECORD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_record_opts {
	const char *iface;
	const char *out;
	uint16_t port;	/* the server's UDP port, host order */
	uint64_t count; /* stop after this many frames; 0: no limit */
	double seconds; /* stop after this long; 0: no limit */
};

struct trace_record_stats {
	uint64_t captured; /* frames written */
	uint32_t dropped;  /* frames the kernel had no room for (pcap_stats ps_drop) */
};

/*
 * Captures UDP to or from opts->port on opts->iface into opts->out until the
 * count or the time is reached or *stop becomes nonzero (a signal handler sets
 * it). Says on log when the capture is running, so a script can start the
 * traffic after that line. Returns 0, or -errno with the reason in why.
 */
int trace_record(const struct trace_record_opts *opts, const volatile sig_atomic_t *stop, FILE *log,
		 struct trace_record_stats *stats, char *why, size_t why_len);

#endif /* XKV_TRACE_RECORD_H */
