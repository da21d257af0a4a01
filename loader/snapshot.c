// SPDX-License-Identifier: MIT
/* What stats and metrics show of an interface, read at once (snapshot.h). */
#include <errno.h>
#include <string.h>

#include "bpfctl/log.h"
#include "snapshot.h"

int snapshot_read(const char *ifname, struct snapshot *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = bpfctl_status(ifname, &s->status);
	if (!err)
		err = bpfctl_stats(ifname, &s->stats);
	if (err)
		return err;
	s->cfg = s->status.has_config ? &s->status.config : NULL;
	/* every worker slot when the config is unreadable, so no count hides */
	s->workers = s->cfg ? s->cfg->workers : XKV_WORKERS_MAX;
	/* the EWT section only under the policies that use it, as status shows minos's roles */
	s->has_ewt = s->cfg && xkv_policy_ewt(s->cfg->policy);
	if (s->has_ewt) {
		err = bpfctl_ewt(ifname, &s->ewt);
		if (err)
			return err;
	}
	/* a server publishes its own counters beside the maps; an attachment alone has none */
	err = live_counters_read(ifname, &s->live);
	if (err == -ENODATA)
		return 0;
	if (err) {
		pr_warn("xkv-loader: reading the server's counters: %s\n", strerror(-err));
		return 0;
	}
	s->has_live = true;
	err = live_latency_read(ifname, s->live.server.workers, &s->lat);
	if (err)
		pr_warn("xkv-loader: reading the server's latency histograms: %s\n", strerror(-err));
	return err;
}

void snapshot_free(struct snapshot *s)
{
	xkv_lat_view_free(&s->lat);
}

size_t ewt_fields(const struct snapshot *s, struct ewt_field out[EWT_FIELDS_MAX])
{
	const struct bpfctl_ewt *ewt = &s->ewt;
	size_t n = 0;

	out[n++] = (struct ewt_field){"active", ewt->active, true};
	if (s->has_live)
		out[n++] = (struct ewt_field){"active_max", s->live.server.ewt_active_max, true};
	out[n++] = (struct ewt_field){"taken", ewt->counters.taken, false};
	out[n++] = (struct ewt_field){"conflicts", ewt->counters.joined, false};
	out[n++] = (struct ewt_field){"cas_retries", ewt->counters.cas_retry, false};
	out[n++] = (struct ewt_field){"dropped", ewt->counters.dropped, false};
	return n;
}
