// SPDX-License-Identifier: MIT
/* bpfctl: the program's counters and the EWT, summed over CPUs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"
#include "bpfctl/log.h"

static int percpu_sum(int fd, __u32 key, __u64 *values, int ncpus, __u64 *sum)
{
	if (bpf_map_lookup_elem(fd, &key, values))
		return -errno;
	*sum = 0;
	for (int cpu = 0; cpu < ncpus; cpu++)
		*sum += values[cpu];
	return 0;
}

int bpfctl_stats_read(int stats_fd, int steered_fd, struct bpfctl_stats *stats)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	__u64 *values;

	if (ncpus < 0)
		return ncpus;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (__u32 slot = 0; slot < XKV_R_END && !err; slot++)
		err = percpu_sum(stats_fd, slot, values, ncpus, &stats->slots[slot]);
	for (__u32 worker = 0; worker < XKV_WORKERS_MAX && !err; worker++)
		err = percpu_sum(steered_fd, worker, values, ncpus, &stats->steered[worker]);
	if (err)
		pr_warn("read the stats maps: %s\n", strerror(-err));
	free(values);
	return err;
}

/* Opens two pinned maps of the interface: 0 with both fds, or -errno with none. */
static int map_open_pair(const char *ifname, const char *first, const char *second, int fds[2])
{
	fds[0] = bpfctl_map_open(ifname, first);
	if (fds[0] < 0)
		return fds[0];
	fds[1] = bpfctl_map_open(ifname, second);
	if (fds[1] < 0) {
		close(fds[0]);
		return fds[1];
	}
	return 0;
}

int bpfctl_stats(const char *ifname, struct bpfctl_stats *stats)
{
	int fds[2], err;

	err = map_open_pair(ifname, "xkv_stats", "xkv_steered", fds);
	if (err)
		return err;
	err = bpfctl_stats_read(fds[0], fds[1], stats);
	close(fds[1]);
	close(fds[0]);
	return err;
}

int bpfctl_ewt_read(int ewt_fd, int ewt_stats_fd, struct bpfctl_ewt *ewt)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	struct xkv_ewt_counters *percpu;
	struct xkv_ewt_slot slot;
	__u32 zero = 0;

	if (ncpus < 0)
		return ncpus;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	memset(ewt, 0, sizeof(*ewt));
	for (__u32 i = 0; i < XKV_EWT_SLOTS && !err; i++) {
		if (bpf_map_lookup_elem(ewt_fd, &i, &slot))
			err = -errno;
		else
			ewt->active += slot.writes > 0;
	}
	if (!err && bpf_map_lookup_elem(ewt_stats_fd, &zero, percpu))
		err = -errno;
	for (int cpu = 0; cpu < ncpus && !err; cpu++) {
		ewt->counters.taken += percpu[cpu].taken;
		ewt->counters.joined += percpu[cpu].joined;
		ewt->counters.cas_retry += percpu[cpu].cas_retry;
		ewt->counters.dropped += percpu[cpu].dropped;
	}
	if (err)
		pr_warn("read the EWT maps: %s\n", strerror(-err));
	free(percpu);
	return err;
}

int bpfctl_ewt(const char *ifname, struct bpfctl_ewt *ewt)
{
	int fds[2], err;

	err = map_open_pair(ifname, "xkv_ewt", "xkv_ewt_stats", fds);
	if (err)
		return err;
	err = bpfctl_ewt_read(fds[0], fds[1], ewt);
	close(fds[1]);
	close(fds[0]);
	return err;
}
