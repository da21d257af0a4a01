// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "engine/ewt.h"
#include "engine/holds.h"

void xkv_holds_init(struct xkv_holds *h, struct xkv_ewt_slot *ewt, uint32_t id,
		    struct xkv_holds_shared *shared, struct xkv_request_counters *stats)
{
	memset(h, 0, sizeof(*h));
	h->ewt = ewt;
	h->stats = stats;
	h->id = id;
	h->shared = shared;
}

/* n holds of partition's slot, counted for this worker, are in its hand now. */
static void take(struct xkv_holds *h, uint32_t partition, uint32_t n)
{
	h->in_hand[partition] += n;
	h->taken[partition] += n;
}

bool xkv_holds_claim(struct xkv_holds *h, uint32_t partition)
{
	if (!xkv_ewt_holds(h->ewt, partition, h->id)) {
		h->stats->ewt_not_owner++;
		return false;
	}
	take(h, partition, 1);
	return true;
}

int xkv_holds_join(struct xkv_holds *h, uint32_t partition, uint32_t candidate)
{
	int holder = xkv_ewt_join(h->ewt, partition, candidate, XKV_EWT_TRIES);

	if (holder < 0) {
		h->stats->ewt_join_busy++;
		return holder;
	}
	h->stats->ewt_joined++;
	if ((uint32_t)holder == h->id)
		take(h, partition, 1);
	return holder;
}

/* Counts a release of n holds: err 0, or -EPERM when the slot did not count them. */
static void count_release(struct xkv_holds *h, int err, uint32_t n)
{
	if (!err)
		h->stats->ewt_released += n;
	else
		h->stats->ewt_not_owner += n;
}

void xkv_holds_let_go(struct xkv_holds *h, uint32_t partition, uint32_t n)
{
	if (!h->ewt || !n)
		return;
	/* gone either way: a release the slot refuses was never ours to make */
	h->in_hand[partition] -= n < h->in_hand[partition] ? n : h->in_hand[partition];
	count_release(h, xkv_ewt_release(h->ewt, partition, h->id, n), n);
}

void xkv_holds_give_back(struct xkv_holds *h, uint32_t partition, uint32_t holder)
{
	count_release(h, xkv_ewt_release(h->ewt, partition, holder, 1), 1);
}

void xkv_holds_round(struct xkv_holds *h)
{
	if (h->shared)
		atomic_store_explicit(&h->shared->beat[h->id].rounds, ++h->rounds,
				      memory_order_release);
}

static bool is_frozen(const struct xkv_holds *h, uint32_t p)
{
	return h->frozen[p / 64] >> (p % 64) & 1;
}

/* Whether the slot of p is this worker's and counts holds it does not have in hand. */
static bool holds_unseen(const struct xkv_holds *h, uint32_t p, uint64_t word)
{
	return xkv_ewt_writes(word) && xkv_ewt_owner(word) == h->id &&
	       xkv_ewt_writes(word) > h->in_hand[p];
}

/* Sets the healing field of p's slot while it is still as the look saw it. */
static bool freeze(struct xkv_holds *h, uint32_t p)
{
	uint64_t *word = xkv_ewt_word_of(h->ewt, p);
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);

	do {
		if (!holds_unseen(h, p, old) || xkv_ewt_healing(old))
			return false;
	} while (!__atomic_compare_exchange_n(word, &old, old | XKV_EWT_HEALING, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	h->frozen[p / 64] |= 1ULL << (p % 64);
	return true;
}

/* A look at every slot; freezes those that counted holds not in hand look after look. */
static uint32_t scan(struct xkv_holds *h)
{
	uint32_t nfrozen = 0;

	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		uint64_t word = __atomic_load_n(xkv_ewt_word_of(h->ewt, p), __ATOMIC_RELAXED);
		bool idle = h->taken[p] == h->taken_seen[p];

		h->taken_seen[p] = h->taken[p];
		if (!holds_unseen(h, p, word) || !(idle || h->dropped)) {
			h->suspect[p] = 0;
			continue;
		}
		if (++h->suspect[p] < XKV_HOLDS_SUSPECTS)
			continue;
		h->suspect[p] = 0;
		nfrozen += freeze(h, p);
	}
	return nfrozen;
}

/*
 * Step 1 done: what the others' rounds were after the freeze (a write one joined for
 * us before it is pushed or given back once it begins another), and the fence asked.
 */
static void ask_fence(struct xkv_holds *h)
{
	struct xkv_holds_shared *s = h->shared;

	for (uint32_t w = 0; w < s->nworkers; w++)
		h->rounds_at_freeze[w] = atomic_load(&s->beat[w].rounds);
	atomic_store_explicit(&s->beat[h->id].fence_asked, ++h->fence, memory_order_release);
	h->phase = XKV_HEAL_FENCE;
}

static bool others_went_on(const struct xkv_holds *h)
{
	const struct xkv_holds_shared *s = h->shared;

	for (uint32_t w = 0; w < s->nworkers; w++)
		if (w != h->id && atomic_load_explicit(&s->beat[w].rounds, memory_order_acquire) ==
					  h->rounds_at_freeze[w])
			return false;
	return true;
}

/* Step 4: each frozen slot counts what is in hand, and takes writes again. */
static void thaw(struct xkv_holds *h)
{
	for (uint32_t p = 0; p < XKV_PARTITIONS; p++) {
		uint64_t *word = xkv_ewt_word_of(h->ewt, p), old, next;
		uint32_t leaked = 0;

		if (!is_frozen(h, p))
			continue;
		old = __atomic_load_n(word, __ATOMIC_RELAXED);
		do {
			/* emptied meanwhile, which ended the healing: nothing leaked */
			if (!xkv_ewt_healing(old) || xkv_ewt_owner(old) != h->id)
				break;
			leaked = xkv_ewt_writes(old) > h->in_hand[p]
					 ? xkv_ewt_writes(old) - h->in_hand[p]
					 : 0;
			next = xkv_ewt_writes(old) - leaked
				       ? xkv_ewt_word(h->id, xkv_ewt_writes(old) - leaked)
				       : 0;
		} while (!__atomic_compare_exchange_n(word, &old, next, true, __ATOMIC_RELEASE,
						      __ATOMIC_RELAXED));
		if (xkv_ewt_healing(old) && xkv_ewt_owner(old) == h->id)
			h->healed += leaked;
	}
	memset(h->frozen, 0, sizeof(h->frozen));
}

void xkv_holds_round_end(struct xkv_holds *h, uint64_t now_ns, bool dry)
{
	if (!h->shared)
		return;
	switch (h->phase) {
	case XKV_HEAL_IDLE:
		if (!dry || now_ns < h->next_scan_ns)
			return;
		h->next_scan_ns = now_ns + XKV_HOLDS_SCAN_NS;
		if (scan(h)) {
			h->heals++;
			h->dropped = false;
			ask_fence(h);
		}
		return;
	case XKV_HEAL_FENCE:
		if (atomic_load_explicit(&h->shared->beat[h->id].fence_made,
					 memory_order_acquire) >= h->fence)
			h->phase = XKV_HEAL_RINGS;
		return;
	case XKV_HEAL_RINGS:
		if (!h->rings_read || h->rings_read(h->rings_ctx))
			h->phase = XKV_HEAL_ROUNDS;
		return;
	case XKV_HEAL_ROUNDS:
		/* this round's hand-offs may predate the others' pushes: the next one's won't */
		if (others_went_on(h))
			h->phase = XKV_HEAL_TAKE;
		return;
	case XKV_HEAL_TAKE:
		thaw(h);
		h->phase = XKV_HEAL_IDLE;
		return;
	}
}

bool xkv_holds_fences_asked(struct xkv_holds_shared *s, uint64_t *asked)
{
	bool any = false;

	for (uint32_t w = 0; w < s->nworkers; w++) {
		asked[w] = atomic_load_explicit(&s->beat[w].fence_asked, memory_order_acquire);
		any |= asked[w] > atomic_load_explicit(&s->beat[w].fence_made,
							memory_order_relaxed);
	}
	return any;
}

void xkv_holds_fences_made(struct xkv_holds_shared *s, const uint64_t *asked)
{
	for (uint32_t w = 0; w < s->nworkers; w++)
		atomic_store_explicit(&s->beat[w].fence_made, asked[w], memory_order_release);
}
