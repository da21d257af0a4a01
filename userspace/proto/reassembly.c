// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/reassembly.h"

struct range {
	uint32_t start, end; /* [start, end) of the value received */
};

struct pending {
	struct xkv_reasm_msg msg; /* what the caller sees when complete */
	uint8_t key[XKV_KEY_MAX];
	uint8_t *value;
	struct range got[XKV_REASM_GAPS]; /* sorted, disjoint, not adjacent */
	uint32_t ngot;
	uint64_t last_ns; /* arrival of the latest piece */
};

struct xkv_reasm {
	struct xkv_reasm_config cfg;
	struct pending *slots;
	uint32_t *active; /* slots still collecting pieces, in no order */
	uint32_t nactive;
	uint32_t *spare; /* slots free for a new message */
	uint32_t nspare;
	struct xkv_reasm_stats stats;
};

struct xkv_reasm *xkv_reasm_create(const struct xkv_reasm_config *cfg)
{
	struct xkv_reasm *r;

	if (!cfg->max_messages) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cfg = *cfg;
	r->slots = calloc(cfg->max_messages, sizeof(*r->slots));
	r->active = calloc(cfg->max_messages, sizeof(*r->active));
	r->spare = calloc(cfg->max_messages, sizeof(*r->spare));
	if (!r->slots || !r->active || !r->spare) {
		xkv_reasm_destroy(r);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < cfg->max_messages; i++)
		r->spare[r->nspare++] = cfg->max_messages - 1 - i;
	return r;
}

void xkv_reasm_destroy(struct xkv_reasm *r)
{
	if (!r)
		return;
	if (r->slots)
		for (uint32_t i = 0; i < r->cfg.max_messages; i++)
			free(r->slots[i].value);
	free(r->slots);
	free(r->active);
	free(r->spare);
	free(r);
}

static bool same_message(const struct pending *p, const struct xkv_peer *peer,
			 const struct xkv_msg *piece)
{
	return p->msg.head.request_id == piece->request_id && xkv_peer_equal(&p->msg.peer, peer);
}

static bool consistent(const struct pending *p, const struct xkv_msg *piece)
{
	const struct xkv_msg *h = &p->msg.head;

	return h->op == piece->op && h->value_len == piece->value_len &&
	       h->key_len == piece->key_len && memcmp(p->key, piece->key, h->key_len) == 0;
}

static struct pending *message_open(struct xkv_reasm *r, const struct xkv_peer *peer,
				    const struct xkv_msg *piece)
{
	struct pending *p;

	if (!r->nspare || r->stats.bytes + piece->value_len > r->cfg.memory_limit)
		return NULL;
	p = &r->slots[r->spare[r->nspare - 1]];
	p->value = malloc(piece->value_len);
	if (!p->value)
		return NULL;
	r->active[r->nactive++] = r->spare[--r->nspare];
	p->msg.peer = *peer;
	p->msg.head = *piece;
	p->msg.head.frag_offset = 0;
	p->msg.head.frag_len = piece->value_len;
	memcpy(p->key, piece->key, piece->key_len);
	p->msg.head.key = p->key;
	p->msg.head.frag = p->value;
	p->ngot = 0;
	p->msg.pieces = 0;
	r->stats.bytes += piece->value_len;
	r->stats.in_flight++;
	return p;
}

/* Takes slot active[i] out of the lookup; the caller frees or hands out its value. */
static struct pending *message_unlist(struct xkv_reasm *r, uint32_t i)
{
	struct pending *p = &r->slots[r->active[i]];

	r->active[i] = r->active[--r->nactive];
	r->stats.in_flight--;
	return p;
}

static void message_free(struct xkv_reasm *r, struct pending *p)
{
	r->stats.bytes -= p->msg.head.value_len;
	free(p->value);
	p->value = NULL;
	r->spare[r->nspare++] = (uint32_t)(p - r->slots);
}

/* An unfinished message goes: whoever held something for its pieces is told first. */
static void message_drop(struct xkv_reasm *r, uint32_t i)
{
	struct pending *p = message_unlist(r, i);

	if (r->cfg.dropped)
		r->cfg.dropped(r->cfg.ctx, &p->msg);
	message_free(r, p);
}

/*
 * Records [start, end) as received. Returns 1 if every byte was there already,
 * 0 if it added bytes, -E2BIG if the message would have too many holes.
 */
static int ranges_add(struct pending *p, uint32_t start, uint32_t end)
{
	uint32_t i = 0, j;

	while (i < p->ngot && p->got[i].end < start)
		i++;
	if (i < p->ngot && p->got[i].start <= start && end <= p->got[i].end)
		return 1;
	/* ranges i..j-1 touch or overlap [start, end): merge them into one */
	for (j = i; j < p->ngot && p->got[j].start <= end; j++) {
		if (p->got[j].start < start)
			start = p->got[j].start;
		if (p->got[j].end > end)
			end = p->got[j].end;
	}
	if (j == i) {
		if (p->ngot == XKV_REASM_GAPS)
			return -E2BIG;
		memmove(&p->got[i + 1], &p->got[i], (p->ngot - i) * sizeof(p->got[0]));
		p->ngot++;
	} else {
		memmove(&p->got[i + 1], &p->got[j], (p->ngot - j) * sizeof(p->got[0]));
		p->ngot -= j - i - 1;
	}
	p->got[i] = (struct range){start, end};
	return 0;
}

int xkv_reasm_add(struct xkv_reasm *r, const struct xkv_peer *peer, const struct xkv_msg *piece,
		  uint64_t now_ns, struct xkv_reasm_msg **done)
{
	struct pending *p = NULL;
	uint32_t i;
	int dup;

	for (i = 0; i < r->nactive; i++) {
		if (same_message(&r->slots[r->active[i]], peer, piece)) {
			p = &r->slots[r->active[i]];
			break;
		}
	}
	if (!p) {
		p = message_open(r, peer, piece);
		if (!p) {
			r->stats.no_room++;
			return -ENOMEM;
		}
		i = r->nactive - 1;
	} else if (!consistent(p, piece)) {
		r->stats.mismatches++;
		return -EINVAL;
	}

	dup = ranges_add(p, piece->frag_offset, piece->frag_offset + piece->frag_len);
	if (dup < 0) {
		r->stats.too_scattered++;
		message_drop(r, i);
		return dup;
	}
	p->msg.pieces++;
	if (dup) {
		r->stats.duplicates++;
		return XKV_REASM_PENDING;
	}
	memcpy(p->value + piece->frag_offset, piece->frag, piece->frag_len);
	p->last_ns = now_ns;
	if (p->ngot != 1 || p->got[0].start != 0 || p->got[0].end != p->msg.head.value_len)
		return XKV_REASM_PENDING;

	message_unlist(r, i);
	r->stats.completed++;
	*done = &p->msg;
	return XKV_REASM_COMPLETE;
}

void xkv_reasm_release(struct xkv_reasm *r, struct xkv_reasm_msg *msg)
{
	message_free(r, (struct pending *)msg);
}

unsigned xkv_reasm_expire(struct xkv_reasm *r, uint64_t now_ns)
{
	unsigned expired = 0;

	for (uint32_t i = 0; i < r->nactive;) {
		struct pending *p = &r->slots[r->active[i]];

		if (now_ns - p->last_ns < r->cfg.timeout_ns) {
			i++;
			continue;
		}
		message_drop(r, i);
		expired++;
	}
	r->stats.timeouts += expired;
	return expired;
}

void xkv_reasm_get_stats(const struct xkv_reasm *r, struct xkv_reasm_stats *stats)
{
	*stats = r->stats;
}
