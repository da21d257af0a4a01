// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/reassembly.h"

struct range {
	uint32_t start, end; /* [start, end) of the value received */
};

struct pending {
	struct xkv_reasm_msg msg; /* what the caller sees when complete */
	uint8_t key[XKV_KEY_MAX];
	uint8_t *value;	  /* malloc'd, or mapped if value_len >= XKV_REASM_MAP_MIN */
	uint64_t charged; /* what it counts in stats.bytes and its source's bytes */
	struct range got[XKV_REASM_GAPS]; /* sorted, disjoint, not adjacent */
	uint32_t ngot;
	uint32_t pos;	  /* its index in active while it collects pieces */
	uint64_t last_ns; /* arrival of the latest piece */
};

/* A sending address (any port) holding messages, complete ones not yet released too. */
struct source {
	uint8_t addr[16];
	uint64_t bytes;
	uint32_t messages;
};

/* A message completed lately: later pieces of it are retransmissions. */
struct finished {
	struct xkv_peer peer;
	uint32_t request_id;
	int status; /* its reply's */
	uint64_t at_ns;
};

struct xkv_reasm {
	struct xkv_reasm_config cfg;
	size_t page;
	struct pending *slots;
	uint32_t *active; /* slots still collecting pieces, in no order */
	uint32_t nactive;
	uint32_t *spare; /* slots free for a new message */
	uint32_t nspare;
	struct source *sources; /* at most one per slot */
	uint32_t nsources;
	struct finished *recent; /* a ring of max_messages */
	uint32_t nrecent, next_recent;
	int late_status; /* of the latest XKV_REASM_LATE piece's message */
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
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->slots = calloc(cfg->max_messages, sizeof(*r->slots));
	r->active = calloc(cfg->max_messages, sizeof(*r->active));
	r->spare = calloc(cfg->max_messages, sizeof(*r->spare));
	r->sources = calloc(cfg->max_messages, sizeof(*r->sources));
	r->recent = calloc(cfg->max_messages, sizeof(*r->recent));
	if (!r->slots || !r->active || !r->spare || !r->sources || !r->recent) {
		xkv_reasm_destroy(r);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < cfg->max_messages; i++)
		r->spare[r->nspare++] = cfg->max_messages - 1 - i;
	return r;
}

static bool mapped(uint32_t value_len)
{
	return value_len >= XKV_REASM_MAP_MIN;
}

static void value_free(struct pending *p)
{
	if (!p->value)
		return;
	if (mapped(p->msg.head.value_len))
		munmap(p->value, p->msg.head.value_len);
	else
		free(p->value);
	p->value = NULL;
}

void xkv_reasm_destroy(struct xkv_reasm *r)
{
	if (!r)
		return;
	if (r->slots)
		for (uint32_t i = 0; i < r->cfg.max_messages; i++)
			value_free(&r->slots[i]);
	free(r->slots);
	free(r->active);
	free(r->spare);
	free(r->sources);
	free(r->recent);
	free(r);
}

static struct source *source_of(struct xkv_reasm *r, const uint8_t *addr)
{
	for (uint32_t i = 0; i < r->nsources; i++)
		if (memcmp(r->sources[i].addr, addr, sizeof(r->sources[i].addr)) == 0)
			return &r->sources[i];
	return NULL;
}

static bool same_message(const struct xkv_reasm_msg *m, const struct xkv_peer *peer,
			 const struct xkv_msg *piece)
{
	return m->head.request_id == piece->request_id && xkv_peer_equal(&m->peer, peer);
}

static bool consistent(const struct pending *p, const struct xkv_msg *piece)
{
	const struct xkv_msg *h = &p->msg.head;

	return h->op == piece->op && h->value_len == piece->value_len &&
	       h->key_len == piece->key_len && memcmp(p->key, piece->key, h->key_len) == 0;
}

static struct pending *message_find(struct xkv_reasm *r, const struct xkv_peer *peer,
				    const struct xkv_msg *piece)
{
	for (uint32_t i = 0; i < r->nactive; i++)
		if (same_message(&r->slots[r->active[i]].msg, peer, piece))
			return &r->slots[r->active[i]];
	return NULL;
}

/* The message piece belongs to if it completed less than the timeout ago, or NULL. */
static const struct finished *finished_lately(const struct xkv_reasm *r,
					      const struct xkv_peer *peer,
					      const struct xkv_msg *piece, uint64_t now_ns)
{
	for (uint32_t i = 0; i < r->nrecent; i++) {
		const struct finished *f = &r->recent[i];

		if (f->request_id == piece->request_id && xkv_peer_equal(&f->peer, peer) &&
		    now_ns - f->at_ns < r->cfg.timeout_ns)
			return f;
	}
	return NULL;
}

/* Pages of [start, end) that no received byte touches yet: a mapped value's cost. */
static uint64_t pages_added(const struct xkv_reasm *r, const struct range *got, uint32_t ngot,
			    uint32_t start, uint32_t end)
{
	uint64_t n = 0;

	for (size_t pg = start / r->page; pg <= (end - 1) / r->page; pg++) {
		size_t lo = pg * r->page, hi = lo + r->page;
		bool touched = false;

		for (uint32_t i = 0; i < ngot && !touched; i++)
			touched = got[i].start < hi && got[i].end > lo;
		n += !touched;
	}
	return n * r->page;
}

/* What taking piece adds to the budget; p is its message, or NULL for a new one. */
static uint64_t piece_cost(const struct xkv_reasm *r, const struct pending *p,
			   const struct xkv_msg *piece)
{
	if (!mapped(piece->value_len))
		return p ? 0 : piece->value_len;
	return pages_added(r, p ? p->got : NULL, p ? p->ngot : 0, piece->frag_offset,
			   piece->frag_offset + piece->frag_len);
}

static void charge(struct xkv_reasm *r, struct pending *p, uint64_t bytes)
{
	p->charged += bytes;
	r->stats.bytes += bytes;
	source_of(r, p->msg.peer.addr)->bytes += bytes;
}

/* Takes slot active[pos] out of the lookup; the caller frees or hands out its value. */
static struct pending *message_unlist(struct xkv_reasm *r, uint32_t pos)
{
	struct pending *p = &r->slots[r->active[pos]];

	r->active[pos] = r->active[--r->nactive];
	r->slots[r->active[pos]].pos = pos;
	r->stats.in_flight--;
	return p;
}

static void message_free(struct xkv_reasm *r, struct pending *p)
{
	struct source *s = source_of(r, p->msg.peer.addr);

	r->stats.bytes -= p->charged;
	s->bytes -= p->charged;
	if (!--s->messages)
		*s = r->sources[--r->nsources];
	value_free(p);
	r->spare[r->nspare++] = (uint32_t)(p - r->slots);
}

/* An unfinished message goes: whoever held something for its pieces is told first. */
static void message_drop(struct xkv_reasm *r, struct pending *p)
{
	message_unlist(r, p->pos);
	if (r->cfg.dropped)
		r->cfg.dropped(r->cfg.ctx, &p->msg);
	message_free(r, p);
}

/* The source other than addr holding the most bytes (or messages), or NULL. */
static const struct source *heaviest(const struct xkv_reasm *r, const uint8_t *addr, bool bytes)
{
	const struct source *h = NULL;

	for (uint32_t i = 0; i < r->nsources; i++) {
		const struct source *s = &r->sources[i];

		if (memcmp(s->addr, addr, sizeof(s->addr)) == 0)
			continue;
		if (!h || (bytes ? s->bytes > h->bytes : s->messages > h->messages))
			h = s;
	}
	return h;
}

/* Drops the message of addr that waited longest for a piece; false if it has none open. */
static bool evict_oldest(struct xkv_reasm *r, const uint8_t *addr)
{
	struct pending *oldest = NULL;

	for (uint32_t i = 0; i < r->nactive; i++) {
		struct pending *p = &r->slots[r->active[i]];

		if (memcmp(p->msg.peer.addr, addr, sizeof(p->msg.peer.addr)) == 0 &&
		    (!oldest || p->last_ns < oldest->last_ns))
			oldest = p;
	}
	if (!oldest)
		return false;
	message_drop(r, oldest);
	r->stats.evicted++;
	return true;
}

/*
 * Finds room for bytes more (and a slot if slot) for addr: what is free, else what
 * sources over their fair share hold, if addr stays within its own. The share is
 * the budget (or the slots) divided by the sources present, addr counted.
 */
static int make_room(struct xkv_reasm *r, const uint8_t *addr, uint64_t bytes, bool slot)
{
	for (;;) {
		const struct source *me = source_of(r, addr), *h;
		bool short_bytes = r->stats.bytes + bytes > r->cfg.memory_limit;
		uint32_t n = r->nsources + !me;
		uint8_t victim[16];

		if (!short_bytes && !(slot && !r->nspare))
			return 0;
		if (short_bytes ? (me ? me->bytes : 0) + bytes > r->cfg.memory_limit / n
				: (me ? me->messages : 0) + 1u > r->cfg.max_messages / n)
			return -ENOMEM;
		h = heaviest(r, addr, short_bytes);
		if (!h)
			return -ENOMEM;
		memcpy(victim, h->addr, sizeof(victim)); /* h may move as sources go */
		if (!evict_oldest(r, victim))
			return -ENOMEM;
	}
}

static struct pending *message_open(struct xkv_reasm *r, const struct xkv_peer *peer,
				    const struct xkv_msg *piece)
{
	struct pending *p = &r->slots[r->spare[r->nspare - 1]];
	struct source *s;

	if (mapped(piece->value_len)) {
		/* untouched pages cost nothing, and munmap gives them back */
		p->value = mmap(NULL, piece->value_len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p->value == MAP_FAILED)
			p->value = NULL;
	} else {
		p->value = malloc(piece->value_len);
	}
	if (!p->value)
		return NULL;
	s = source_of(r, peer->addr);
	if (!s) {
		s = &r->sources[r->nsources++];
		*s = (struct source){0};
		memcpy(s->addr, peer->addr, sizeof(s->addr));
	}
	s->messages++;
	p->pos = r->nactive;
	r->active[r->nactive++] = r->spare[--r->nspare];
	p->msg.peer = *peer;
	p->msg.head = *piece;
	p->msg.head.frag_offset = 0;
	p->msg.head.frag_len = piece->value_len;
	memcpy(p->key, piece->key, piece->key_len);
	p->msg.head.key = p->key;
	p->msg.head.frag = p->value;
	p->ngot = 0;
	p->charged = 0;
	p->msg.pieces = 0;
	p->msg.status = -1;
	r->stats.in_flight++;
	return p;
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

/* Kept from its completion (its last piece) for the timeout. */
static void remember_finished(struct xkv_reasm *r, const struct pending *p)
{
	r->recent[r->next_recent] = (struct finished){
		.peer = p->msg.peer,
		.request_id = p->msg.head.request_id,
		.status = p->msg.status,
		.at_ns = p->last_ns,
	};
	r->next_recent = (r->next_recent + 1) % r->cfg.max_messages;
	if (r->nrecent < r->cfg.max_messages)
		r->nrecent++;
}

int xkv_reasm_add(struct xkv_reasm *r, const struct xkv_peer *peer, const struct xkv_msg *piece,
		  uint64_t now_ns, struct xkv_reasm_msg **done)
{
	struct pending *p = message_find(r, peer, piece);
	const struct finished *f = p ? NULL : finished_lately(r, peer, piece, now_ns);
	uint64_t cost;
	int dup;

	if (f) {
		r->late_status = f->status;
		r->stats.late++;
		return XKV_REASM_LATE;
	}
	if (p && !consistent(p, piece)) {
		r->stats.mismatches++;
		return -EINVAL;
	}
	cost = piece_cost(r, p, piece);
	if (make_room(r, peer->addr, cost, !p) || (!p && !(p = message_open(r, peer, piece)))) {
		r->stats.no_room++;
		return -ENOMEM;
	}

	dup = ranges_add(p, piece->frag_offset, piece->frag_offset + piece->frag_len);
	if (dup < 0) {
		r->stats.too_scattered++;
		message_drop(r, p);
		return dup;
	}
	charge(r, p, cost);
	p->msg.pieces++;
	if (dup) {
		r->stats.duplicates++;
		return XKV_REASM_PENDING;
	}
	memcpy(p->value + piece->frag_offset, piece->frag, piece->frag_len);
	p->last_ns = now_ns;
	if (p->ngot != 1 || p->got[0].start != 0 || p->got[0].end != p->msg.head.value_len)
		return XKV_REASM_PENDING;

	message_unlist(r, p->pos);
	r->stats.completed++;
	*done = &p->msg;
	return XKV_REASM_COMPLETE;
}

void xkv_reasm_release(struct xkv_reasm *r, struct xkv_reasm_msg *msg)
{
	remember_finished(r, (struct pending *)msg);
	message_free(r, (struct pending *)msg);
}

int xkv_reasm_late_status(const struct xkv_reasm *r)
{
	return r->late_status;
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
		message_drop(r, p);
		expired++;
	}
	r->stats.timeouts += expired;
	return expired;
}

void xkv_reasm_get_stats(const struct xkv_reasm *r, struct xkv_reasm_stats *stats)
{
	*stats = r->stats;
}
