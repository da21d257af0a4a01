// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "bpfctl/large_keys.h"
#include "xkv/maps.h"

int bpfctl_large_keys_open(struct bpfctl_large_keys *k, int keys_fd, int filter_fd)
{
	struct bpf_map_info info = {0};
	__u32 info_len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *cells;

	k->keys_fd = keys_fd;
	k->filter = NULL;
	if (bpf_obj_get_info_by_fd(filter_fd, &info, &info_len))
		return -errno;
	if (info.value_size != sizeof(*k->filter) || info.max_entries != XKV_LARGE_FILTER_CELLS)
		return -EINVAL; /* pins of another build */
	k->filter_len = (sizeof(*k->filter) * XKV_LARGE_FILTER_CELLS + page - 1) / page * page;
	cells = mmap(NULL, k->filter_len, PROT_READ | PROT_WRITE, MAP_SHARED, filter_fd, 0);
	if (cells == MAP_FAILED)
		return -errno;
	k->filter = cells;
	return 0;
}

void bpfctl_large_keys_close(struct bpfctl_large_keys *k)
{
	if (k->filter)
		munmap((void *)k->filter, k->filter_len);
	k->filter = NULL;
}

int bpfctl_large_key_record(struct bpfctl_large_keys *k, __u64 hash, __u32 value_len)
{
	_Atomic __u64 *cell = &k->filter[xkv_large_cell(hash)];
	int err;

	/* counted first: XDP that finds the key finds its cell counted */
	atomic_fetch_add_explicit(cell, 1, memory_order_relaxed);
	if (!bpf_map_update_elem(k->keys_fd, &hash, &value_len, BPF_NOEXIST))
		return 0;
	err = errno;
	atomic_fetch_sub_explicit(cell, 1, memory_order_relaxed);
	if (err != EEXIST) /* E2BIG: full */
		return -err;
	return bpf_map_update_elem(k->keys_fd, &hash, &value_len, BPF_EXIST) ? -errno : 0;
}

void bpfctl_large_key_forget(struct bpfctl_large_keys *k, __u64 hash)
{
	if (!bpf_map_delete_elem(k->keys_fd, &hash))
		atomic_fetch_sub_explicit(&k->filter[xkv_large_cell(hash)], 1,
					  memory_order_relaxed);
}

void bpfctl_large_keys_clear(struct bpfctl_large_keys *k)
{
	__u64 key;

	while (bpf_map_get_next_key(k->keys_fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(k->keys_fd, &key))
			break;
	for (__u32 c = 0; c < XKV_LARGE_FILTER_CELLS; c++)
		atomic_store_explicit(&k->filter[c], 0, memory_order_relaxed);
}
