// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>

#include "xkv/hash.h"
#include "dir_fixture.h"
#include "packet.h"

void dir_fixture_server(__u32 id, char *text, size_t cap)
{
	snprintf(text, cap, "10.0.1.%u", id + 1);
}

int dir_fixture_config(struct dir_bpf *skel, enum xkv_dir_select select, __u32 live)
{
	struct xkv_dir_config cfg = {.port = PKT_PORT, .select = select, .nservers = DIR_SERVERS,
				     .live = live};
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_config), &zero, &cfg, 0) ? -errno
											    : 0;
}

static int add_server(struct dir_bpf *skel, __u32 id)
{
	struct xkv_dir_server srv = {.port = htons(PKT_PORT)};
	struct xkv_dir_addr addr = {.port = htons(PKT_PORT)};
	char text[16];

	dir_fixture_server(id, text, sizeof(text));
	inet_pton(AF_INET, text, &srv.addr);
	addr.addr = srv.addr;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_servers), &id, &srv, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_addrs), &addr, &id, 0))
		return -errno;
	return 0;
}

struct dir_bpf *dir_fixture_open(void)
{
	struct dir_bpf *skel = dir_bpf__open_and_load();
	int err = skel ? dir_fixture_config(skel, XKV_DIR_SELECT_ROUND_ROBIN,
					    (1u << DIR_SERVERS) - 1)
		       : -errno;

	for (__u32 id = 0; !err && id < DIR_SERVERS; id++)
		err = add_server(skel, id);
	if (err) {
		dir_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

int dir_fixture_replicate(struct dir_bpf *skel, const char *key,
			  const struct xkv_dir_entry *entry)
{
	__u64 hash = xkv_hash(key, (__u32)strlen(key));

	return bpf_map_update_elem(bpf_map__fd(skel->maps.xkv_dir_keys), &hash, entry, 0) ? -errno
											  : 0;
}
