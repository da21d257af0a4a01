/* SPDX-License-Identifier: MIT */
/*
 * What a correct store answers: an in-memory map from key to value that requests
 * are applied to one at a time. PUT stores the value (OK), GET returns it (OK) or
 * NOT_FOUND, DELETE removes it (OK) or answers NOT_FOUND when the key is absent.
 * The model has no memory limit: it assumes a store that never evicts.
 */
#ifndef XKV_TRACE_MODEL_H
#define XKV_TRACE_MODEL_H

#include <stdint.h>

#include "proto/codec.h"
#include "table.h"

struct trace_model {
	struct trace_table items; /* key -> struct trace_value */
};

struct trace_value {
	uint32_t len;
	uint8_t bytes[];
};

int trace_model_init(struct trace_model *m);
void trace_model_free(struct trace_model *m);

/*
 * Applies one whole request (a PUT's frag holds its whole value). Sets *status to
 * the status its reply must carry, and for a GET that finds its key *value to the
 * value (valid until the next apply; NULL otherwise). Returns 0, -ENOMEM, or
 * -EINVAL for a reply or a PUT that is only a piece of its value.
 */
int trace_model_apply(struct trace_model *m, const struct xkv_msg *req, enum xkv_status *status,
		      const struct trace_value **value);

#endif /* XKV_TRACE_MODEL_H */
