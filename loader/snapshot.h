/* SPDX-License-Identifier: MIT */
/*
 * Everything `xkv-loader stats` and `xkv-loader metrics` show of an interface, read at
 * once: the program's counters, dcrew's EWT, and a running server's live counters and
 * latency histograms.
 */
#ifndef XKV_LOADER_SNAPSHOT_H
#define XKV_LOADER_SNAPSHOT_H

#include <stdbool.h>

#include "bpfctl/bpfctl.h"
#include "live.h"

struct snapshot {
	struct bpfctl_status status;
	const struct xkv_config *cfg; /* NULL when the config is unreadable */
	__u32 workers;		      /* steered slots shown: every one without a config */
	struct bpfctl_stats stats;
	bool has_ewt;		      /* under the policies that use it */
	struct bpfctl_ewt ewt;
	bool has_live;		      /* a server has published its counters here */
	struct live_counters live;
	struct xkv_lat_view lat;      /* its histograms, with has_live */
};

/*
 * Reads ifname's snapshot into *s (which is large: allocate it): 0, or -errno after
 * saying what failed. A server that published nothing is no failure (has_live false).
 */
int snapshot_read(const char *ifname, struct snapshot *s);
void snapshot_free(struct snapshot *s);

/* One figure of the EWT's section. */
struct ewt_field {
	const char *name;
	__u64 value;
	bool gauge; /* a level now, not a count so far */
};

#define EWT_FIELDS_MAX 6

/*
 * dcrew's EWT as stats and metrics show it: slots held now, the most a running server
 * saw held at once (it samples them), and what XDP did with writes. Returns how many.
 */
size_t ewt_fields(const struct snapshot *s, struct ewt_field out[EWT_FIELDS_MAX]);

#endif /* XKV_LOADER_SNAPSHOT_H */
