// SPDX-License-Identifier: MIT
/*
 * One writer publishes a snapshot under a sequence count; any thread reads it whole
 * (seqcount.h): the live counters' slots, a worker's hot keys.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "util/seqcount.h"

#define READ_TRIES 100

struct slot_head {
	uint64_t seq, published_ns;
};

/*
 * The slot's side of a copy is relaxed atomic words, so that a reader copying while
 * the writer writes is a copy the sequence count rejects, not a data race; the fences
 * order them. The snapshot's side is plain. len is a whole number of words (stats.h).
 */
static void slot_store(uint8_t *slot, const uint8_t *snap, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(uint64_t)) {
		uint64_t w;

		memcpy(&w, snap + i, sizeof(w));
		__atomic_store_n((uint64_t *)(slot + i), w, __ATOMIC_RELAXED);
	}
}

static void slot_load(uint8_t *snap, const uint8_t *slot, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(uint64_t)) {
		uint64_t w = __atomic_load_n((const uint64_t *)(slot + i), __ATOMIC_RELAXED);

		memcpy(snap + i, &w, sizeof(w));
	}
}

void xkv_counters_publish(void *dst, const void *src, size_t len, uint64_t now_ns)
{
	struct slot_head *head = dst;
	uint64_t seq = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);

	/* odd: readers retry; the fence keeps the copy after it */
	__atomic_store_n(&head->seq, seq + 1, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_release);
	slot_store((uint8_t *)dst + sizeof(*head), (const uint8_t *)src + sizeof(*head),
		   len - sizeof(*head));
	__atomic_store_n(&head->published_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&head->seq, seq + 2, __ATOMIC_RELEASE);
}

int xkv_counters_read(void *dst, const void *src, size_t len)
{
	const struct slot_head *head = src;

	for (int i = 0; i < READ_TRIES; i++) {
		uint64_t seq = __atomic_load_n(&head->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		slot_load(dst, src, len);
		atomic_thread_fence(memory_order_acquire);
		if (__atomic_load_n(&head->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
	return -EAGAIN;
}
