// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfctl/bpfctl.h"
#include "roles_show.h"

int roles_read(const char *ifname, struct xkv_roles *r)
{
	struct xkv_roles slot[XKV_ROLES_SLOTS];
	int fd = bpfctl_map_open(ifname, "xkv_roles");
	int err = 0;

	if (fd < 0)
		return fd;
	for (__u32 i = 0; i < XKV_ROLES_SLOTS && !err; i++)
		if (bpf_map_lookup_elem(fd, &i, &slot[i]))
			err = -errno;
	close(fd);
	if (err)
		return err;
	*r = slot[slot[1].gen > slot[0].gen];
	return r->gen ? 0 : -ENODATA;
}

/* Smallest value size of class cls, and largest. */
static uint32_t class_min(uint32_t cls)
{
	return cls ? 1u << (cls - 1) : 0;
}

static uint32_t class_max(uint32_t cls)
{
	uint32_t top = cls ? (1u << cls) - 1 : 0;

	return top < XKV_VALUE_MAX ? top : XKV_VALUE_MAX;
}

struct role {
	const char *name; /* small, large, standby */
	uint32_t min_bytes, max_bytes; /* large and standby: the sizes it serves */
};

/* What worker w does under r. */
static struct role role_of(const struct xkv_roles *r, uint32_t w)
{
	struct role role = {.name = "small"};
	uint32_t lo = XKV_SIZE_CLASSES, hi = 0;

	for (uint32_t i = 0; i < r->nlarge && i < XKV_WORKERS_MAX; i++) {
		if (r->large[i] != w)
			continue;
		for (uint32_t c = r->threshold + 1; c < XKV_SIZE_CLASSES; c++) {
			const struct xkv_class_workers *cw = &r->classes[c];

			if (i >= cw->first && i < (uint32_t)cw->first + cw->count) {
				lo = c < lo ? c : lo;
				hi = c > hi ? c : hi;
			}
		}
		role.name = r->standby ? "standby" : "large";
	}
	if (lo <= hi) {
		role.min_bytes = class_min(lo);
		role.max_bytes = class_max(hi);
	}
	return role;
}

void roles_print_text(const struct xkv_roles *r, uint32_t workers, FILE *out)
{
	fprintf(out, "  minos roles %u: values up to %u B small (class %u, the %gth percentile)\n",
		r->gen, class_max(r->threshold), r->threshold, r->percentile_centi / 100.0);
	for (uint32_t w = 0; w < workers; w++) {
		struct role role = role_of(r, w);

		fprintf(out, "    worker %u: %s", w, role.name);
		if (role.max_bytes)
			fprintf(out, ", values %u..%u B", role.min_bytes, role.max_bytes);
		if (!strcmp(role.name, "standby"))
			fprintf(out, "; small reads while idle");
		fprintf(out, "\n");
	}
}

void roles_json(const struct xkv_roles *r, uint32_t workers, struct xkv_json *w)
{
	xkv_json_key(w, "minos");
	xkv_json_object_start(w);
	xkv_json_uint_field(w, "gen", r->gen);
	xkv_json_uint_field(w, "threshold_class", r->threshold);
	xkv_json_uint_field(w, "small_max_bytes", class_max(r->threshold));
	xkv_json_double_field(w, "percentile", r->percentile_centi / 100.0);
	xkv_json_key(w, "workers");
	xkv_json_array_start(w);
	for (uint32_t id = 0; id < workers; id++) {
		struct role role = role_of(r, id);

		xkv_json_object_start(w);
		xkv_json_uint_field(w, "id", id);
		xkv_json_string_field(w, "role", role.name);
		if (role.max_bytes) {
			xkv_json_uint_field(w, "min_bytes", role.min_bytes);
			xkv_json_uint_field(w, "max_bytes", role.max_bytes);
		}
		xkv_json_object_end(w);
	}
	xkv_json_array_end(w);
	xkv_json_object_end(w);
}
