// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "engine/exec.h"

int xkv_exec_init(struct xkv_exec *x, struct xkv_store *store,
		  const struct xkv_validate *validate)
{
	*x = (struct xkv_exec){.store = store, .validate = validate,
			       .small_class_max = XKV_SIZE_CLASSES};
	if (!validate)
		return -EINVAL;
	xkv_fast_clock_init(&x->clock);
	x->scratch = malloc(XKV_EXEC_SCRATCH);
	return x->scratch ? 0 : -ENOMEM;
}

void xkv_exec_fini(struct xkv_exec *x)
{
	free(x->scratch);
	x->scratch = NULL;
}

void xkv_exec_count_size(struct xkv_exec *x, uint32_t value_len)
{
	uint32_t cls = xkv_size_class(value_len);

	x->stats.size_classes[cls]++;
	if (cls > x->small_class_max)
		x->stats.large_on_small++;
}

void xkv_exec_done(struct xkv_exec *x, const struct xkv_origin *from, const struct xkv_msg *req,
		   uint32_t value_len)
{
	static const enum xkv_lat_op by_op[XKV_OP_SLOTS] = {
		[XKV_OP_GET] = XKV_LAT_GET, [XKV_OP_PUT] = XKV_LAT_PUT, [XKV_OP_DELETE] = XKV_LAT_DELETE};
	uint8_t op = req->op & ~XKV_OP_REPLY;
	uint64_t now;

	x->vouch.valid = false;
	if (!x->lat)
		return;
	if (!from->peer.arrival_ns) {
		x->stats.lat_unstamped++;
		return;
	}
	now = xkv_fast_clock_now(&x->clock);
	xkv_latency_request(x->lat,
			    req->mc.dialect != XKV_DIALECT_XKV || op >= XKV_OP_SLOTS ? XKV_LAT_MC
										 : by_op[op],
			    xkv_size_class(value_len), from->peer.arrival_ns, x->start_ns, now);
	x->start_ns = now;
}
