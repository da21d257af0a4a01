// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int trace_model_init(struct trace_model *m)
{
	return trace_table_init(&m->items);
}

void trace_model_free(struct trace_model *m)
{
	trace_table_free(&m->items, free);
}

static int model_put(struct trace_model *m, const struct xkv_msg *req)
{
	struct trace_value *v = malloc(sizeof(*v) + req->value_len);
	void **slot;
	int ret;

	if (!v)
		return -ENOMEM;
	v->len = req->value_len;
	memcpy(v->bytes, req->frag, req->value_len);
	ret = trace_table_insert(&m->items, req->key, req->key_len, &slot);
	if (ret < 0) {
		free(v);
		return ret;
	}
	free(*slot);
	*slot = v;
	return 0;
}

int trace_model_apply(struct trace_model *m, const struct xkv_msg *req, enum xkv_status *status,
		      const struct trace_value **value)
{
	void **slot, *old;

	*value = NULL;
	*status = XKV_S_OK;
	switch (req->op) {
	case XKV_OP_GET:
		slot = trace_table_find(&m->items, req->key, req->key_len);
		if (slot)
			*value = *slot;
		else
			*status = XKV_S_NOT_FOUND;
		return 0;
	case XKV_OP_PUT:
		if (req->frag_len != req->value_len)
			return -EINVAL;
		return model_put(m, req);
	case XKV_OP_DELETE:
		if (trace_table_remove(&m->items, req->key, req->key_len, &old))
			*status = XKV_S_NOT_FOUND;
		else
			free(old);
		return 0;
	default:
		return -EINVAL;
	}
}
