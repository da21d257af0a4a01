/* SPDX-License-Identifier: MIT */
/*
 * A snapshot (snapshot.h) in Prometheus's text exposition format 0.0.4: what
 * `xkv-loader stats` shows, as families named xkv_*, counters ending in _total, the
 * latency histograms in seconds. docs/LOADER.md, "Prometheus", lists them.
 */
#ifndef XKV_LOADER_PROMETHEUS_H
#define XKV_LOADER_PROMETHEUS_H

#include <stdio.h>

#include "snapshot.h"

/* Writes s to out: 0, or -ENOMEM when a table could not be allocated. */
int prometheus_write(FILE *out, const struct snapshot *s);

#endif /* XKV_LOADER_PROMETHEUS_H */
