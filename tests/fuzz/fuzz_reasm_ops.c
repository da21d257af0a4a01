// SPDX-License-Identifier: MIT
/*
 * Reassembly against a model: the input is a sequence of operations (a piece of
 * (peer, request id, offset, length), time passing with an expiry, the release of a
 * completed message held so far), and the model, a bitmap of the bytes each message
 * has, says what each call must return. Checks that every call returns exactly
 * that: room when the slots (in flight or completed and unreleased) and the budget
 * allow, and else no room or room made by dropping messages of other sources only; a
 * contradiction when the value length or the key differ, a duplicate when every byte
 * was there, too many holes past XKV_REASM_GAPS disjoint ranges, the messages the
 * expiry drops; a late piece only for a message released less than the timeout
 * after it completed, told the status it was released with; that a completed value
 * equals the bytes sent, with its peer, id, key and number of pieces; and after every
 * call, that the bytes charged and the messages in flight are the model's (values
 * here are below XKV_REASM_MAP_MIN: charged whole), within the limits.
 *
 * Input: a header (max_messages byte, memory limit byte in 256-byte units, timeout
 * byte, then IDS big-endian 16-bit value lengths, one per request id), then 6-byte
 * operations:
 *   byte 0: bits 0-1 kind (0, 1 piece; 2 time and expiry; 3 release), bits 2-3 peer,
 *           bit 4 hold the message if it completes, bits 5-6 a lie (2: value length
 *           one more, 3: the key's first byte changed)
 *   byte 1: request id (mod IDS), or the time step
 *   bytes 2-3, 4-5: offset and length, big-endian, folded into the value
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "reasm_fuzz.h"

#define IDS	  8
#define VALUE_MAX 4096 /* values small enough for a bitmap model */
#define KEY_MAX	  16
#define HDR_LEN	  (3 + 2 * IDS)
#define OP_LEN	  6

struct model {
	bool live; /* in flight */
	uint32_t value_len;
	uint8_t key[KEY_MAX];
	uint16_t key_len;
	uint32_t pieces;
	uint64_t last_ns;
	uint64_t have[VALUE_MAX / 64]; /* bit i: byte i received */
};

struct run {
	struct reasm_fuzz f;
	uint32_t value_len[IDS];
	struct model msgs[REASM_FUZZ_PEERS][IDS];
	/* the latest completion of a message released, per peer and id; 0: none */
	uint64_t released_done_ns[REASM_FUZZ_PEERS][IDS];
	struct held {
		struct xkv_reasm_msg *msg; /* completed, not released */
		uint64_t done_ns;
	} held[IDS * REASM_FUZZ_PEERS];
	uint32_t nheld;
	uint32_t in_flight;
	uint64_t bytes;
	uint64_t now;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The value's byte at offset i: differs across peers, ids and 256-byte shifts. */
static uint8_t value_byte(unsigned peer, unsigned id, uint32_t i)
{
	return (uint8_t)(i ^ i >> 8 ^ (peer * IDS + id) * 37);
}

static uint16_t make_key(unsigned peer, unsigned id, uint8_t *key)
{
	uint16_t len = (uint16_t)(1 + (peer * IDS + id) % KEY_MAX);

	for (uint16_t k = 0; k < len; k++)
		key[k] = (uint8_t)('a' + (peer * IDS + id + k) % 26);
	return len;
}

static bool has(const struct model *m, uint32_t i)
{
	return m->have[i / 64] >> (i % 64) & 1;
}

/* Disjoint runs of bytes received (a run starts at a bit whose lower neighbour is
 * clear), and how many bytes. */
static uint32_t runs(const struct model *m, uint32_t *count)
{
	uint64_t below = 0; /* the previous word's top bit */
	uint32_t n = 0;

	*count = 0;
	for (uint32_t w = 0; w < (m->value_len + 63) / 64; w++) {
		*count += (uint32_t)__builtin_popcountll(m->have[w]);
		n += (uint32_t)__builtin_popcountll(m->have[w] & ~(m->have[w] << 1 | below));
		below = m->have[w] >> 63;
	}
	return n;
}

static void model_end(struct run *run, struct model *m, bool freed)
{
	m->live = false;
	run->in_flight--;
	if (freed)
		run->bytes -= m->value_len;
}

/* Which of the model's peers p is. */
static unsigned peer_index(const struct xkv_peer *p)
{
	unsigned i = 0;

	while (i < REASM_FUZZ_PEERS && !xkv_peer_equal(p, reasm_fuzz_peer(i)))
		i++;
	FUZZ_CHECK(i < REASM_FUZZ_PEERS);
	return i;
}

static void release(struct run *run, uint32_t i)
{
	struct xkv_reasm_msg *done = run->held[i].msg;
	uint64_t *released = &run->released_done_ns[peer_index(&done->peer)][done->head.request_id];

	if (run->held[i].done_ns > *released)
		*released = run->held[i].done_ns;
	run->bytes -= done->head.value_len;
	done->status = reasm_fuzz_status(done->head.request_id);
	xkv_reasm_release(run->f.r, done);
	run->held[i] = run->held[--run->nheld];
}

/*
 * The messages a new one's making room dropped: each in flight, of another source
 * (address) than the new one's.
 */
static void evicted(struct run *run, unsigned peer)
{
	for (uint32_t i = 0; i < run->f.ndrops; i++) {
		unsigned victim = peer_index(&run->f.drop_peer[i]);
		struct model *m = &run->msgs[victim][run->f.drop_id[i]];

		FUZZ_CHECK(m->live);
		FUZZ_CHECK(memcmp(reasm_fuzz_peer(victim)->addr, reasm_fuzz_peer(peer)->addr,
				  sizeof(reasm_fuzz_peer(peer)->addr)));
		model_end(run, m, true);
	}
}

static void check_complete(const struct model *m, unsigned peer, unsigned id,
			   const struct xkv_reasm_msg *done)
{
	const uint8_t *value = done->head.frag;

	FUZZ_CHECK(xkv_peer_equal(&done->peer, reasm_fuzz_peer(peer)));
	FUZZ_CHECK(done->head.request_id == id && done->head.op == XKV_OP_PUT);
	FUZZ_CHECK(done->head.key_len == m->key_len && !memcmp(done->head.key, m->key, m->key_len));
	FUZZ_CHECK(done->head.value_len == m->value_len && done->head.frag_len == m->value_len &&
		   done->head.frag_offset == 0);
	FUZZ_CHECK(done->pieces == m->pieces);
	for (uint32_t i = 0; i < m->value_len; i++)
		FUZZ_CHECK(value[i] == value_byte(peer, id, i));
}

/* The piece through the codec, as it would arrive: what the decoder accepts. */
static bool make_piece(unsigned peer, unsigned id, uint32_t value_len, uint32_t off, uint32_t len,
		       bool lie_key, struct xkv_msg *piece)
{
	static uint8_t dgram[sizeof(struct xkv_hdr) + KEY_MAX + VALUE_MAX];
	uint8_t key[KEY_MAX], frag[VALUE_MAX];
	struct xkv_msg m = {.op = XKV_OP_PUT,
			    .request_id = id,
			    .value_len = value_len,
			    .frag_offset = off,
			    .frag_len = len,
			    .key = key,
			    .frag = frag};
	int n;

	m.key_len = make_key(peer, id, key);
	key[0] ^= lie_key;
	for (uint32_t i = 0; i < len; i++)
		frag[i] = value_byte(peer, id, off + i);
	n = xkv_encode(dgram, sizeof(dgram), &m);
	FUZZ_CHECK(n > 0);
	return xkv_decode(dgram, (size_t)n, piece) == XKV_R_OK;
}

static void op_piece(struct run *run, const uint8_t *op)
{
	unsigned peer = (op[0] >> 2) & 3, id = op[1] % IDS, lie = (op[0] >> 5) & 3;
	uint32_t value_len = run->value_len[id] + (lie == 2), off = 0, len = 0, count;
	struct model *m = &run->msgs[peer][id];
	struct xkv_reasm_msg *done = NULL;
	struct xkv_msg piece;
	bool dup = true;
	int ret;

	if (value_len) {
		off = be16(op + 2) % value_len;
		len = 1 + be16(op + 4) % (value_len - off);
	}
	FUZZ_CHECK(make_piece(peer, id, value_len, off, len, lie == 3, &piece));
	ret = xkv_reasm_add(run->f.r, reasm_fuzz_peer(peer), &piece, run->now, &done);

	if (!m->live && ret == XKV_REASM_LATE) {
		/* kept for the timeout at least while few others completed since */
		uint64_t done_ns = run->released_done_ns[peer][id];

		FUZZ_CHECK(done_ns && run->now - done_ns < run->f.cfg.timeout_ns);
		FUZZ_CHECK(xkv_reasm_late_status(run->f.r) == reasm_fuzz_status(id));
		return;
	}
	if (!m->live) {
		bool fits = run->in_flight + run->nheld < run->f.cfg.max_messages &&
			    run->bytes + value_len <= run->f.cfg.memory_limit;

		/* short of room, sources over their fair share may lose messages to it */
		FUZZ_CHECK(fits ? !run->f.ndrops : ret == -ENOMEM || ret >= 0);
		evicted(run, peer);
		if (ret == -ENOMEM)
			return;
		FUZZ_CHECK(run->in_flight + run->nheld < run->f.cfg.max_messages &&
			   run->bytes + value_len <= run->f.cfg.memory_limit);
		*m = (struct model){.live = true, .value_len = value_len, .key_len = piece.key_len};
		memcpy(m->key, piece.key, piece.key_len);
		run->in_flight++;
		run->bytes += value_len;
	} else if (m->value_len != value_len || m->key_len != piece.key_len ||
		   memcmp(m->key, piece.key, piece.key_len)) {
		FUZZ_CHECK(ret == -EINVAL);
		return;
	}

	for (uint32_t i = off; i < off + len; i++) {
		dup &= has(m, i);
		m->have[i / 64] |= 1ull << (i % 64);
	}
	if (runs(m, &count) > XKV_REASM_GAPS) {
		FUZZ_CHECK(ret == -E2BIG);
		model_end(run, m, true);
		return;
	}
	m->pieces++;
	if (len && dup) {
		FUZZ_CHECK(ret == XKV_REASM_PENDING);
		return;
	}
	m->last_ns = run->now;
	if (count < value_len) {
		FUZZ_CHECK(ret == XKV_REASM_PENDING);
		return;
	}
	FUZZ_CHECK(ret == XKV_REASM_COMPLETE);
	check_complete(m, peer, id, done);
	model_end(run, m, false);
	run->held[run->nheld++] = (struct held){done, run->now};
	if (!(op[0] & 0x10))
		release(run, run->nheld - 1);
}

static void op_expire(struct run *run, uint8_t step)
{
	unsigned expected = 0;

	run->now += step;
	for (unsigned peer = 0; peer < REASM_FUZZ_PEERS; peer++) {
		for (unsigned id = 0; id < IDS; id++) {
			struct model *m = &run->msgs[peer][id];

			if (m->live && run->now - m->last_ns >= run->f.cfg.timeout_ns) {
				model_end(run, m, true);
				expected++;
			}
		}
	}
	FUZZ_CHECK(xkv_reasm_expire(run->f.r, run->now) == expected);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run run;
	struct xkv_reasm_stats s;

	if (size < HDR_LEN)
		return 0;
	memset(&run, 0, sizeof(run));
	run.now = 1; /* a completion time is never 0 */
	reasm_fuzz_open(&run.f, 1 + data[0] % 8, (size_t)data[1] * 256, 1 + data[2]);
	for (unsigned id = 0; id < IDS; id++)
		run.value_len[id] = be16(data + 3 + 2 * id) % VALUE_MAX;
	for (const uint8_t *op = data + HDR_LEN; op + OP_LEN <= data + size; op += OP_LEN) {
		run.f.ndrops = 0;
		switch (op[0] & 3) {
		case 2:
			op_expire(&run, op[1]);
			break;
		case 3:
			if (run.nheld)
				release(&run, 0);
			break;
		default:
			op_piece(&run, op);
		}
		s = reasm_fuzz_check(&run.f);
		FUZZ_CHECK(s.in_flight == run.in_flight && s.bytes == run.bytes);
		FUZZ_CHECK(run.in_flight + run.nheld <= run.f.cfg.max_messages);
	}
	while (run.nheld)
		release(&run, 0);
	reasm_fuzz_close(&run.f);
	return 0;
}

int fuzz_replay_done(void)
{
	return reasm_fuzz_reached() |
	       fuzz_reached("too many holes", reasm_fuzz_totals()->too_scattered) |
	       fuzz_reached("an eviction", reasm_fuzz_totals()->evicted);
}
