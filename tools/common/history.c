// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "history.h"

struct history {
	FILE *f;
	int err; /* the first write error, reported again by history_close */
};

uint64_t history_token(const void *value, size_t len)
{
	return XXH3_64bits(value, len);
}

struct history *history_open(const char *path)
{
	struct history *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->f = fopen(path, "w");
	if (!h->f)
		goto out_free;
	if (fputs("# xkv-history 1\n", h->f) < 0) {
		fclose(h->f);
		goto out_free;
	}
	return h;
out_free:
	free(h);
	return NULL;
}

static bool result_fits(const struct history_rec *r)
{
	switch (r->op) {
	case HISTORY_PUT:
		return r->result == HISTORY_OK || r->result == HISTORY_UNKNOWN;
	case HISTORY_GET:
		return r->result == HISTORY_VALUE || r->result == HISTORY_NONE ||
		       r->result == HISTORY_UNKNOWN;
	case HISTORY_DEL:
		return r->result == HISTORY_OK || r->result == HISTORY_NONE ||
		       r->result == HISTORY_UNKNOWN || r->result == HISTORY_DONE;
	}
	return false;
}

int history_write(struct history *h, const struct history_rec *r)
{
	static const char *const ops[] = {"put", "get", "del"};
	static const char *const results[] = {"ok", "none", NULL, "?", "done"};
	const unsigned char *key = r->key;
	bool unknown = r->result == HISTORY_UNKNOWN;
	char result[17], ret[21];

	if (!result_fits(r) || (!unknown && r->return_ns < r->invoke_ns) || !r->key_len)
		return -EINVAL;
	if (h->err)
		return h->err;
	if (r->op == HISTORY_GET && unknown)
		return 0;
	if (r->result == HISTORY_VALUE)
		snprintf(result, sizeof(result), "%016" PRIx64, r->token);
	else
		snprintf(result, sizeof(result), "%s", results[r->result]);
	if (unknown)
		snprintf(ret, sizeof(ret), "-");
	else
		snprintf(ret, sizeof(ret), "%" PRIu64, r->return_ns);

	fprintf(h->f, "%" PRIu32 " %s ", r->client, ops[r->op]);
	for (size_t i = 0; i < r->key_len; i++)
		fprintf(h->f, "%02x", key[i]);
	if (r->op == HISTORY_PUT)
		fprintf(h->f, " %016" PRIx64, r->token);
	else
		fputs(" -", h->f);
	if (fprintf(h->f, " %" PRIu64 " %s %s\n", r->invoke_ns, ret, result) < 0)
		h->err = -(errno ? errno : EIO);
	return h->err;
}

int history_close(struct history *h)
{
	int err;

	if (!h)
		return 0;
	err = h->err;
	if (fclose(h->f) && !err)
		err = -(errno ? errno : EIO);
	free(h);
	return err;
}
