/* SPDX-License-Identifier: MIT */
/*
 * The EWT holds one worker has in hand (a ledger every take and release goes
 * through), and how a hold it will never get heals (docs/DESIGN.md, "Holds that heal").
 *
 * XDP counts a write in its partition's slot (engine/ewt.h) before the kernel puts
 * the packet on the worker's RX ring. When the kernel then drops it (the ring full,
 * the fill ring empty), nothing would ever release that hold: the partition would
 * stay the worker's, and at XKV_EWT_WRITES_MAX leaked holds refuse every write. So
 * each worker looks, on rounds when its rings ran dry, for slots of its own holding
 * more than it has in hand. A write on its way from XDP looks the same for a moment
 * (a closed-loop client's next one, claimed as the last reply left), so a slot is
 * suspect only if the worker took none of its holds since the last look, or the
 * kernel dropped frames of this worker's since its last heal. One suspect at several
 * looks in a row is healed:
 *  1. freeze: the worker sets the slot's healing field; from then no write joins it
 *     (XDP drops one as ewt_busy, a worker's join is refused), so its count can only
 *     fall;
 *  2. fence: the server's main thread waits for every XDP program run that began
 *     before the freeze to end (a grace period: every write it claimed is on a ring
 *     or dropped by then), then marks how far each RX ring was filled;
 *  3. the worker reads its rings up to those marks, and waits for every other worker
 *     to begin a new round (a write another worker joined for this one is then in its
 *     hand-off ring, or was given back);
 *  4. on the round after, having taken its hand-offs, the worker has in hand every
 *     hold the slot still counts that will ever reach it: the rest were dropped. It
 *     sets the count to what it has in hand and ends the healing.
 * Only the owner changes its slot's count downwards here, and never below what it
 * holds, so no partition ever has two writers (invariant 1).
 */
#ifndef XKV_ENGINE_HOLDS_H
#define XKV_ENGINE_HOLDS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <xkv/ewt.h>
#include <xkv/maps.h>
#include <xkv/stats.h>

#define XKV_HOLDS_SCAN_NS  50000000ULL /* between two looks for holds not in hand */
#define XKV_HOLDS_SUSPECTS 3	       /* looks in a row that saw one before it heals */

/* What the workers and the main thread share, one line per worker. */
struct xkv_holds_beat {
	alignas(64) _Atomic uint64_t rounds; /* rounds begun: a heal waits for others' */
	_Atomic uint64_t fence_asked;	     /* the worker's last fence request */
	_Atomic uint64_t fence_made;	     /* the last one main has made for it */
};

struct xkv_holds_shared {
	struct xkv_holds_beat beat[XKV_WORKERS_MAX];
	uint32_t nworkers;
};

enum xkv_heal_phase {
	XKV_HEAL_IDLE,	 /* nothing frozen */
	XKV_HEAL_FENCE,	 /* frozen: waiting for main's fence */
	XKV_HEAL_RINGS,	 /* fenced: reading the RX rings up to main's marks */
	XKV_HEAL_ROUNDS, /* waiting for every other worker to begin a round */
	XKV_HEAL_TAKE,	 /* the next round's hand-offs, then the count */
};

struct xkv_holds {
	struct xkv_ewt_slot *ewt; /* NULL: the policy claims no slot, and the ledger is empty */
	struct xkv_request_counters *stats; /* the worker's: releases, refusals, joins */
	struct xkv_holds_shared *shared; /* NULL: no healing (no fence to be had) */
	/* whether the RX rings were read up to main's marks; NULL: the transport has none */
	bool (*rings_read)(void *ctx);
	void *rings_ctx;
	uint32_t id;
	uint32_t in_hand[XKV_PARTITIONS]; /* holds received and not yet let go */
	uint8_t suspect[XKV_PARTITIONS];  /* looks in a row that saw more held than in hand */
	uint32_t taken[XKV_PARTITIONS];	  /* holds ever taken, and at the last look */
	uint32_t taken_seen[XKV_PARTITIONS];
	bool dropped;			  /* the kernel dropped frames for it since its last heal */
	uint64_t frozen[XKV_PARTITIONS / 64];
	enum xkv_heal_phase phase;
	uint64_t next_scan_ns;
	uint64_t fence;				   /* the last fence asked for */
	uint64_t rounds_at_freeze[XKV_WORKERS_MAX]; /* the others', after the freeze */
	uint64_t rounds;
	uint64_t heals;	 /* slots frozen to be healed */
	uint64_t healed; /* holds given back that no worker received */
};

/*
 * Worker id's ledger over ewt, counting in stats; shared NULL: it keeps the ledger
 * but never heals. A transport whose rings XDP fills sets rings_read before the
 * worker starts.
 */
void xkv_holds_init(struct xkv_holds *h, struct xkv_ewt_slot *ewt, uint32_t id,
		    struct xkv_holds_shared *shared, struct xkv_request_counters *stats);

/*
 * A write XDP counted in partition's slot for this worker (or another worker joined
 * it for this one): true with its hold in hand, when the slot says it is this
 * worker's; its acquire orders the write after the slot's previous holder
 * (engine/ewt.h). False: it came without its slot (counted in ewt_not_owner), and is
 * refused.
 */
bool xkv_holds_claim(struct xkv_holds *h, uint32_t partition);

/*
 * A write no XDP counted (memcached over TCP; under xkv a PUT whole from its pieces)
 * joins partition's slot as XDP would, candidate taking it if it is free. Returns the
 * holder, with the hold in hand if that is this worker (counted in ewt_joined), or
 * -EBUSY when the slot stayed contended or full (ewt_join_busy).
 */
int xkv_holds_join(struct xkv_holds *h, uint32_t partition, uint32_t candidate);

/*
 * Lets n holds in hand go, their writes applied and answered or never to be; counted
 * in ewt_released, or ewt_not_owner when the slot did not count them for this worker
 * (nothing changed). Nothing to do with n 0 or without an EWT.
 */
void xkv_holds_let_go(struct xkv_holds *h, uint32_t partition, uint32_t n);

/* A write this worker joined for holder and never handed it: the hold goes back. */
void xkv_holds_give_back(struct xkv_holds *h, uint32_t partition, uint32_t holder);

/* The transport saw the kernel drop frames meant for this worker (e.g. its RX ring full). */
static inline void xkv_holds_kernel_dropped(struct xkv_holds *h)
{
	h->dropped = true;
}

/* First thing in a round: the others see this worker go on. */
void xkv_holds_round(struct xkv_holds *h);

/* Last thing in a round (dry: the worker's rings had nothing): heals move on. */
void xkv_holds_round_end(struct xkv_holds *h, uint64_t now_ns, bool dry);

/*
 * Main's side: the fences the workers asked for, into asked[] (by worker); true if
 * any. Once one fence (and the marks) is made after this call, made() answers them.
 */
bool xkv_holds_fences_asked(struct xkv_holds_shared *s, uint64_t *asked);
void xkv_holds_fences_made(struct xkv_holds_shared *s, const uint64_t *asked);

#endif /* XKV_ENGINE_HOLDS_H */
