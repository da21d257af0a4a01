// SPDX-License-Identifier: MIT
/*
 * Reassembly fed raw datagrams, as a worker or the client feeds it: each one the
 * decoder accepts goes in as a piece, from one of four peers, at a time that moves
 * forward, with an expiry now and then. Checks the limits after every call, and of
 * every completed message that it is the piece's message (peer, id, op, key, length)
 * and holds the completing piece's bytes where they belong, read again after the
 * piece's datagram is freed (the message must hold copies, not pointers into it),
 * and that a late piece is told the status its message was released with.
 *
 * Input: max_messages byte, memory limit byte (8 KiB units), then records of a
 * control byte (peer: bits 0-1, expire: bit 2, time step: bits 3-7), a big-endian
 * 16-bit length and that many datagram bytes (fewer at the end).
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "reasm_fuzz.h"

#define TIMEOUT_NS 1000

static volatile unsigned sink; /* what touch() read, so that it is read */

/* Every byte of the message, so that ASan sees a read past or after its buffers. */
static unsigned touch(const struct xkv_reasm_msg *done)
{
	const uint8_t *key = done->head.key, *value = done->head.frag;
	unsigned sum = 0;

	for (uint32_t i = 0; i < done->head.key_len; i++)
		sum += key[i];
	for (uint32_t i = 0; i < done->head.value_len; i++)
		sum += value[i];
	return sum;
}

static void check_complete(const struct xkv_reasm_msg *done, const struct xkv_peer *peer,
			   const struct xkv_msg *piece)
{
	const struct xkv_msg *h = &done->head;

	FUZZ_CHECK(xkv_peer_equal(&done->peer, peer) && done->pieces > 0);
	FUZZ_CHECK(h->request_id == piece->request_id && h->op == piece->op);
	FUZZ_CHECK(h->value_len == piece->value_len && h->frag_offset == 0 &&
		   h->frag_len == h->value_len);
	FUZZ_CHECK(h->key_len == piece->key_len && !memcmp(h->key, piece->key, h->key_len));
	FUZZ_CHECK(
	    !memcmp((const uint8_t *)h->frag + piece->frag_offset, piece->frag, piece->frag_len));
}

/* One datagram, in a buffer of its own size. */
static void feed(struct reasm_fuzz *f, const struct xkv_peer *peer, const uint8_t *bytes,
		 size_t len, uint64_t now)
{
	uint8_t *dgram = malloc(len ? len : 1);
	struct xkv_reasm_msg *done = NULL;
	struct xkv_msg piece;
	int ret = XKV_REASM_PENDING;

	FUZZ_CHECK(dgram);
	memcpy(dgram, bytes, len);
	if (xkv_decode(dgram, len, &piece) == XKV_R_OK) {
		ret = xkv_reasm_add(f->r, peer, &piece, now, &done);
		FUZZ_CHECK(ret == XKV_REASM_PENDING || ret == XKV_REASM_COMPLETE ||
			   ret == XKV_REASM_LATE || ret == -ENOMEM || ret == -EINVAL ||
			   ret == -E2BIG);
		if (ret == XKV_REASM_LATE)
			FUZZ_CHECK(xkv_reasm_late_status(f->r) ==
				   reasm_fuzz_status(piece.request_id));
		if (ret == XKV_REASM_COMPLETE)
			check_complete(done, peer, &piece);
	}
	free(dgram);
	if (ret == XKV_REASM_COMPLETE) {
		sink += touch(done);
		done->status = reasm_fuzz_status(done->head.request_id);
		xkv_reasm_release(f->r, done);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data + 2, *end = data + size;
	struct reasm_fuzz f;
	uint64_t now = 1;

	if (size < 2)
		return 0;
	reasm_fuzz_open(&f, 1 + data[0] % 8, (size_t)data[1] << 13, TIMEOUT_NS);
	while (end - p >= 3) {
		uint8_t ctl = p[0];
		size_t len = (size_t)p[1] << 8 | p[2];

		p += 3;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		now += (uint64_t)(ctl >> 3) * (TIMEOUT_NS / 8);
		feed(&f, reasm_fuzz_peer(ctl & 3), p, len, now);
		p += len;
		if (ctl & 4)
			xkv_reasm_expire(f.r, now);
		reasm_fuzz_check(&f);
	}
	reasm_fuzz_close(&f);
	return 0;
}

/* Too many holes takes 33 pieces, an eviction a model to check it: fuzz_reasm_ops's. */
int fuzz_replay_done(void)
{
	return reasm_fuzz_reached();
}
