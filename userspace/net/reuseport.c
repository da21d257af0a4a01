// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "net/reuseport.h"
#include "reuseport.skel.h"

int xkv_reuseport_load(struct xkv_reuseport *r, uint16_t port, uint32_t workers,
		       enum xkv_policy policy)
{
	struct xkv_config cfg = {.port = port, .policy = (uint8_t)policy, .workers = workers};
	long page = sysconf(_SC_PAGESIZE);
	uint32_t zero = 0;
	int err;

	r->skel = reuseport_bpf__open_and_load();
	if (!r->skel)
		return -errno;
	err = bpf_map_update_elem(bpf_map__fd(r->skel->maps.xkv_config), &zero, &cfg, 0);
	if (err)
		goto out_destroy;
	/* the skeleton does not map BPF_F_MMAPABLE arrays itself */
	r->qdepth_len = (sizeof(struct xkv_qdepth) * XKV_WORKERS_MAX + page - 1) / page * page;
	r->qdepth = mmap(NULL, r->qdepth_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(r->skel->maps.xkv_qdepth), 0);
	if (r->qdepth == MAP_FAILED) {
		err = -errno;
		r->qdepth = NULL;
		goto out_destroy;
	}
	return 0;

out_destroy:
	reuseport_bpf__destroy(r->skel);
	r->skel = NULL;
	return err;
}

int xkv_reuseport_prog_fd(const struct xkv_reuseport *r)
{
	return bpf_program__fd(r->skel->progs.xkv_reuseport);
}

int xkv_reuseport_add(struct xkv_reuseport *r, uint32_t worker, int fd)
{
	uint64_t value = (uint64_t)fd;

	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.xkv_socks), &worker, &value, BPF_ANY))
		return -errno;
	return 0;
}

int xkv_reuseport_map_fd(const struct xkv_reuseport *r, const char *name)
{
	int fd = bpf_object__find_map_fd_by_name(r->skel->obj, name);

	if (fd < 0)
		return fd;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

uint64_t xkv_reuseport_dropped(const struct xkv_reuseport *r, uint32_t reason)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *per_cpu, sum = 0;

	if (ncpus <= 0)
		return 0;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.xkv_stats), &reason, per_cpu))
		for (int i = 0; i < ncpus; i++)
			sum += per_cpu[i];
	free(per_cpu);
	return sum;
}

void xkv_reuseport_close(struct xkv_reuseport *r)
{
	if (r->qdepth)
		munmap(r->qdepth, r->qdepth_len);
	reuseport_bpf__destroy(r->skel);
	r->skel = NULL;
	r->qdepth = NULL;
}
