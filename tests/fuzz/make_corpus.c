// SPDX-License-Identifier: MIT
/*
 * Writes the harnesses' seed corpora into DIR/<harness>/, a few hundred bytes a file
 * at most. Datagrams go through xkv_encode, and the malformed ones are valid ones with
 * one field of struct xkv_hdr changed, so the seeds follow the wire format: run again
 * (make fuzz-corpus) when it changes. Between them the seeds reach every path that
 * each harness's fuzz_replay_done asks for.
 *   make_corpus DIR
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/codec.h"

#define BUF_MAX 1024

struct seed {
	uint8_t bytes[BUF_MAX];
	size_t len;
};

static const char *root;

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->len + n > sizeof(s->bytes)) {
		fprintf(stderr, "make_corpus: seed too long\n");
		exit(1);
	}
	memcpy(s->bytes + s->len, p, n);
	s->len += n;
}

static void put8(struct seed *s, uint8_t v)
{
	put(s, &v, 1);
}

static void put16(struct seed *s, uint16_t v)
{
	put8(s, (uint8_t)(v >> 8));
	put8(s, (uint8_t)v);
}

static void save(const char *harness, const char *name, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, harness);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->bytes, 1, s->len, f) != s->len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static const uint8_t value[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/*
 * A datagram of op for key "k" and request id, with value[off..off+len) of value_len;
 * version 3, with an extension the directory filled, when dir.
 */
static struct seed dgram_of(bool dir, uint8_t op, uint8_t status, uint32_t id,
			    uint32_t value_len, uint32_t off, uint32_t len)
{
	struct xkv_msg m = {.dir = dir,
			    .ext = {.ver = 0x0700000000000000, .target = 1, .dflags = 1},
			    .op = op,
			    .status = status,
			    .request_id = id,
			    .value_len = value_len,
			    .frag_offset = off,
			    .frag_len = len,
			    .timestamp = 42,
			    .key = "k",
			    .frag = value + off};
	struct seed s = {0};
	int n;

	m.key_len = op & XKV_OP_REPLY ? 0 : 1;
	n = xkv_encode(s.bytes, sizeof(s.bytes), &m);
	if (n < 0) {
		fprintf(stderr, "make_corpus: a seed the encoder refuses (%d)\n", n);
		exit(1);
	}
	s.len = (size_t)n;
	return s;
}

static struct seed dgram(uint8_t op, uint8_t status, uint32_t id, uint32_t value_len, uint32_t off,
			 uint32_t len)
{
	return dgram_of(false, op, status, id, value_len, off, len);
}

static struct seed dgram_dir(uint8_t op, uint8_t status, uint32_t id, uint32_t value_len,
			     uint32_t off, uint32_t len)
{
	return dgram_of(true, op, status, id, value_len, off, len);
}

/* d with the header field at offset off, size n, set to v (network order). */
static struct seed with_field(struct seed d, size_t off, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		d.bytes[off + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return d;
}

#define FIELD(d, field, v)                                                                         \
	with_field(d, offsetof(struct xkv_hdr, field), sizeof(((struct xkv_hdr *)0)->field), v)

static void decode_corpus(void)
{
	struct seed put_whole = dgram(XKV_OP_PUT, 0, 7, 10, 0, 10), s;

	s = dgram(XKV_OP_GET, 0, 1, 0, 0, 0);
	save("decode", "get", &s);
	save("decode", "put-whole", &put_whole);
	s = dgram(XKV_OP_PUT, 0, 2, 30, 10, 20);
	save("decode", "put-last-piece", &s);
	s = dgram(XKV_OP_DELETE, 0, 3, 0, 0, 0);
	save("decode", "delete", &s);
	s = dgram(XKV_OP_GET | XKV_OP_REPLY, XKV_S_OK, 4, 36, 0, 36);
	save("decode", "get-reply", &s);
	s = dgram(XKV_OP_GET | XKV_OP_REPLY, XKV_S_NOT_FOUND, 5, 0, 0, 0);
	save("decode", "get-reply-not-found", &s);
	s = dgram(XKV_OP_PUT | XKV_OP_REPLY, XKV_S_BUSY, 6, 0, 0, 0);
	save("decode", "put-reply-busy", &s);

	save("decode", "empty", &(struct seed){0});
	s = put_whole;
	s.len = sizeof(struct xkv_hdr) - 1;
	save("decode", "truncated", &s);
	s = FIELD(put_whole, magic, 0x4b58);
	save("decode", "bad-magic", &s);
	s = FIELD(put_whole, version, XKV_DIR_VERSION + 1);
	save("decode", "bad-version", &s);
	s = FIELD(put_whole, flags, 1);
	save("decode", "bad-flags", &s);
	s = FIELD(put_whole, op, 4);
	save("decode", "bad-op", &s);
	s = FIELD(put_whole, status, 1);
	save("decode", "bad-status", &s);
	s = FIELD(put_whole, key_len, XKV_KEY_MAX + 1);
	save("decode", "bad-key-len", &s);
	s = FIELD(put_whole, value_len, XKV_VALUE_MAX + 1);
	save("decode", "too-large", &s);
	s = FIELD(put_whole, frag_len, 0xffffffff);
	save("decode", "bad-length-frag-len", &s);
	s = put_whole;
	put8(&s, 0);
	save("decode", "bad-length-extra-byte", &s);
	s = FIELD(put_whole, frag_offset, 1);
	save("decode", "bad-fragment-past-the-end", &s);

	/* version 3: the directory's extension between the header and the key */
	s = dgram_dir(XKV_OP_GET, 0, 8, 0, 0, 0);
	save("decode", "dir-get", &s);
	s = dgram_dir(XKV_OP_GET | XKV_OP_REPLY, XKV_S_OK, 9, 36, 0, 36);
	save("decode", "dir-get-reply", &s);
	s = FIELD(dgram_dir(XKV_OP_GET, 0, 8, 0, 0, 0), flags, 0);
	save("decode", "dir-bad-flags", &s);
	s = dgram_dir(XKV_OP_GET, 0, 8, 0, 0, 0);
	s.len = sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN - 1;
	save("decode", "dir-truncated", &s);
	s = FIELD(FIELD(dgram(XKV_OP_GET, 0, 1, 0, 0, 0), value_len, 5), frag_len, 0);
	save("decode", "bad-fragment-empty-piece", &s);
	s = FIELD(FIELD(FIELD(put_whole, op, XKV_OP_GET), value_len, 10), frag_len, 10);
	save("decode", "bad-fragment-get-with-value", &s);

	/* fuzz_decode's other reading: fields in host order, then the key and the piece */
	s = (struct seed){0};
	put(&s, (uint8_t[]){XKV_OP_PUT, 0, 1, 0, 9, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0},
	    20);
	put(&s, (uint8_t[8]){0}, 8);
	put8(&s, 0); /* no extension */
	put(&s, "kv..", 5);
	save("decode", "fields-put", &s);
}

/* fuzz_reasm_raw: a record of peer, time step, expiry and datagram. */
static void raw_record(struct seed *s, unsigned peer, unsigned step, int expire,
		       const struct seed *d)
{
	put8(s, (uint8_t)(peer | (expire ? 4 : 0) | step << 3));
	put16(s, (uint16_t)d->len);
	put(s, d->bytes, d->len);
}

static struct seed raw_start(uint8_t max_messages, uint8_t limit_8k)
{
	struct seed s = {0};

	put8(&s, (uint8_t)(max_messages - 1));
	put8(&s, limit_8k);
	return s;
}

static void raw_piece(struct seed *s, unsigned peer, uint32_t id, uint32_t off, uint32_t len)
{
	struct seed d = dgram(XKV_OP_PUT, 0, id, 30, off, len);

	raw_record(s, peer, 0, 0, &d);
}

static void reasm_raw_corpus(void)
{
	struct seed s, d;

	s = raw_start(4, 1);
	raw_piece(&s, 0, 1, 0, 10);
	raw_piece(&s, 0, 1, 10, 10);
	raw_piece(&s, 0, 1, 20, 10);
	raw_piece(&s, 0, 1, 0, 10); /* resent: late */
	save("reasm_raw", "in-order", &s);

	s = raw_start(4, 1);
	raw_piece(&s, 0, 1, 20, 10);
	raw_piece(&s, 0, 1, 0, 15);
	raw_piece(&s, 0, 1, 5, 5);
	raw_piece(&s, 0, 1, 10, 20);
	save("reasm_raw", "out-of-order-duplicate", &s);

	s = raw_start(4, 1);
	raw_piece(&s, 0, 1, 0, 10);
	raw_piece(&s, 1, 1, 0, 10);
	raw_piece(&s, 1, 1, 10, 20);
	raw_piece(&s, 0, 1, 10, 20);
	save("reasm_raw", "two-peers-one-id", &s);

	s = raw_start(4, 1);
	raw_piece(&s, 0, 1, 0, 10);
	d = dgram(XKV_OP_PUT, 0, 1, 31, 10, 10);
	raw_record(&s, 0, 0, 0, &d);
	save("reasm_raw", "contradiction", &s);

	s = raw_start(1, 1);
	raw_piece(&s, 0, 1, 0, 10);
	raw_piece(&s, 0, 2, 0, 10);
	save("reasm_raw", "no-room-messages", &s);

	s = raw_start(4, 0);
	raw_piece(&s, 0, 1, 0, 10);
	d = dgram(XKV_OP_DELETE, 0, 2, 0, 0, 0);
	raw_record(&s, 0, 0, 0, &d);
	save("reasm_raw", "no-room-budget", &s);

	s = raw_start(4, 1);
	raw_piece(&s, 0, 1, 0, 10);
	raw_piece(&s, 1, 2, 0, 10);
	d = dgram(XKV_OP_PUT, 0, 3, 30, 0, 10);
	raw_record(&s, 2, 31, 1, &d);
	raw_piece(&s, 0, 1, 10, 20);
	save("reasm_raw", "timeout", &s);

	s = raw_start(2, 1);
	d = dgram(XKV_OP_GET | XKV_OP_REPLY, XKV_S_OK, 9, 36, 18, 18);
	raw_record(&s, 3, 0, 0, &d);
	d = dgram(XKV_OP_GET | XKV_OP_REPLY, XKV_S_OK, 9, 36, 0, 18);
	raw_record(&s, 3, 0, 0, &d);
	save("reasm_raw", "get-reply-pieces", &s);

	s = raw_start(2, 1);
	d = FIELD(dgram(XKV_OP_PUT, 0, 1, 30, 0, 10), magic, 0);
	raw_record(&s, 0, 0, 0, &d);
	d = (struct seed){.bytes = "junk", .len = 4};
	raw_record(&s, 0, 0, 0, &d);
	save("reasm_raw", "rejected-datagrams", &s);
}

/* fuzz_reasm_ops: the header, then operations. */
enum { OPS_IDS = 8 };

static struct seed ops_start(uint8_t max_messages, uint8_t limit_256, uint8_t timeout,
			     const uint16_t value_len[OPS_IDS])
{
	struct seed s = {0};

	put8(&s, (uint8_t)(max_messages - 1));
	put8(&s, limit_256);
	put8(&s, (uint8_t)(timeout - 1));
	for (int i = 0; i < OPS_IDS; i++)
		put16(&s, value_len[i]);
	return s;
}

/* flags: 0x10 hold if complete, 0x40 value length lie, 0x60 key lie */
static void ops_piece(struct seed *s, unsigned peer, unsigned id, uint16_t off, uint16_t len,
		      uint8_t flags)
{
	put8(s, (uint8_t)(peer << 2 | flags));
	put8(s, (uint8_t)id);
	put16(s, off);
	put16(s, (uint16_t)(len - 1)); /* the harness takes 1 + len mod what is left */
}

static void ops_other(struct seed *s, uint8_t kind, uint8_t arg)
{
	put8(s, kind);
	put8(s, arg);
	put16(s, 0);
	put16(s, 0);
}

static void reasm_ops_corpus(void)
{
	static const uint16_t lens[OPS_IDS] = {100, 1000, 0, 4095, 1, 300, 64, 2};
	struct seed s;

	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 0, 0, 40, 0);
	ops_piece(&s, 0, 0, 40, 40, 0);
	ops_piece(&s, 0, 0, 80, 20, 0);
	ops_piece(&s, 1, 2, 0, 1, 0);
	ops_piece(&s, 2, 4, 0, 1, 0);
	ops_piece(&s, 0, 0, 0, 40, 0); /* resent: late */
	save("reasm_ops", "in-order-and-empty", &s);

	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 1, 900, 100, 0);
	ops_piece(&s, 0, 1, 0, 300, 0);
	ops_piece(&s, 0, 1, 100, 100, 0);
	ops_piece(&s, 0, 1, 500, 100, 0);
	ops_piece(&s, 0, 1, 250, 700, 0x10);
	ops_other(&s, 3, 0);
	save("reasm_ops", "out-of-order-duplicate-held", &s);

	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 5, 0, 100, 0);
	ops_piece(&s, 1, 5, 100, 100, 0);
	ops_piece(&s, 0, 5, 100, 200, 0);
	ops_piece(&s, 1, 5, 0, 100, 0);
	ops_piece(&s, 1, 5, 200, 100, 0);
	save("reasm_ops", "two-peers-one-id", &s);

	/* 33 one-byte pieces two bytes apart: the 33rd makes a 33rd range */
	s = ops_start(8, 255, 100, lens);
	for (uint16_t i = 0; i <= 32; i++)
		ops_piece(&s, 0, 3, (uint16_t)(2 * i), 1, 0);
	ops_piece(&s, 0, 3, 0, 4095, 0);
	save("reasm_ops", "too-many-holes", &s);

	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 6, 0, 10, 0);
	ops_piece(&s, 0, 6, 10, 10, 0x40);
	ops_piece(&s, 0, 6, 10, 10, 0x60);
	ops_piece(&s, 0, 6, 10, 54, 0);
	save("reasm_ops", "contradictions", &s);

	s = ops_start(2, 255, 100, lens);
	ops_piece(&s, 0, 0, 0, 10, 0);
	ops_piece(&s, 0, 7, 0, 2, 0x10);
	ops_piece(&s, 0, 1, 0, 10, 0);
	ops_other(&s, 3, 0);
	ops_piece(&s, 0, 1, 0, 10, 0);
	save("reasm_ops", "no-room-slots-held", &s);

	/* two slots: peer 2, another address, takes one from peer 0 (its fair share) */
	s = ops_start(2, 255, 100, lens);
	ops_piece(&s, 0, 0, 0, 10, 0);
	ops_piece(&s, 0, 1, 0, 10, 0);
	ops_piece(&s, 2, 5, 0, 10, 0);
	save("reasm_ops", "eviction", &s);

	s = ops_start(8, 5, 100, lens);
	ops_piece(&s, 0, 1, 0, 10, 0);
	ops_piece(&s, 0, 5, 0, 10, 0);
	ops_piece(&s, 0, 0, 0, 10, 0);
	save("reasm_ops", "no-room-budget", &s);

	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 0, 0, 10, 0);
	ops_other(&s, 2, 60);
	ops_piece(&s, 1, 1, 0, 10, 0);
	ops_other(&s, 2, 60);
	ops_piece(&s, 1, 1, 10, 10, 0);
	ops_other(&s, 2, 60);
	ops_piece(&s, 0, 0, 10, 90, 0);
	save("reasm_ops", "timeouts", &s);

	/* idle for the timeout less 1 ns it stays, for the timeout it goes */
	s = ops_start(8, 255, 100, lens);
	ops_piece(&s, 0, 0, 0, 10, 0);
	ops_other(&s, 2, 99);
	ops_other(&s, 2, 1);
	save("reasm_ops", "timeout-boundary", &s);
}

/* memcached's UDP frame: id, sequence, datagrams, reserved; then the body. */
static struct seed mc_frame(uint16_t id, uint16_t seq, uint16_t count)
{
	struct seed s = {0};

	put16(&s, id);
	put16(&s, seq);
	put16(&s, count);
	put16(&s, 0);
	return s;
}

static void mc_ascii(const char *name, const char *body)
{
	struct seed s = mc_frame(0x1234, 0, 1);

	put(&s, body, strlen(body));
	save("memcached", name, &s);
}

/* A binary message of magic: header fields, then extras (zeros), key and value. */
static struct seed mc_binary_msg(uint8_t magic, uint8_t opcode, uint16_t status,
				 uint32_t opaque, uint8_t extras_len, const char *key,
				 const char *val)
{
	struct seed s = mc_frame(0x5678, 0, 1);
	uint32_t key_len = (uint32_t)strlen(key),
		 body = extras_len + key_len + (uint32_t)strlen(val);

	put8(&s, magic);
	put8(&s, opcode);
	put16(&s, (uint16_t)key_len);
	put8(&s, extras_len);
	put8(&s, 0); /* data type */
	put16(&s, status);
	put16(&s, (uint16_t)(body >> 16));
	put16(&s, (uint16_t)body);
	put16(&s, (uint16_t)(opaque >> 16));
	put16(&s, (uint16_t)opaque);
	put(&s, (uint8_t[8]){0}, 8); /* cas */
	put(&s, (uint8_t[4]){0}, extras_len);
	put(&s, key, key_len);
	put(&s, val, strlen(val));
	return s;
}

/* A binary reply, for xkv-bench's parser. */
static void mc_binary(const char *name, uint8_t opcode, uint16_t status, uint32_t opaque,
		      uint8_t extras_len, const char *key, const char *val)
{
	struct seed s = mc_binary_msg(0x81, opcode, status, opaque, extras_len, key, val);

	save("memcached", name, &s);
}

static void memcached_corpus(void)
{
	struct seed s;

	mc_ascii("ascii-stored", "STORED\r\n");
	mc_ascii("ascii-miss", "END\r\n");
	mc_ascii("ascii-hit", "VALUE key 0 5\r\nhello\r\nEND\r\n");
	mc_ascii("ascii-hit-empty", "VALUE k 4294967295 0\r\n\r\nEND\r\n");
	mc_ascii("ascii-error", "ERROR\r\n");
	mc_ascii("ascii-server-error", "SERVER_ERROR out of memory storing object\r\n");
	mc_ascii("ascii-wrong-length", "VALUE key 0 6\r\nhello\r\nEND\r\n");
	mc_ascii("ascii-two-spaces", "VALUE key  0 5\r\nhello\r\nEND\r\n");
	s = mc_frame(1, 1, 2);
	put(&s, "END\r\n", 5);
	save("memcached", "second-datagram", &s);
	s = mc_frame(1, 0, 1);
	s.len = 7;
	save("memcached", "short-frame", &s);

	mc_binary("binary-hit", 0x00, 0, 0xabcd5678, 4, "", "hello");
	mc_binary("binary-getk-hit", 0x0c, 0, 0x5678, 4, "key", "hello");
	mc_binary("binary-miss", 0x00, 1, 0x5678, 0, "", "Not found");
	mc_binary("binary-stored", 0x01, 0, 0x5678, 0, "", "");
	mc_binary("binary-too-large", 0x01, 3, 0x5678, 0, "", "Too large.");
	mc_binary("binary-other-opcode", 0x04, 0, 0x5678, 0, "", "");
	mc_binary("binary-ids-differ", 0x00, 0, 0x5679, 4, "", "hello");
}

/* An ASCII request to the memcached port, for the worker's decoder. */
static void mc_udp_ascii(const char *name, const char *body)
{
	struct seed s = mc_frame(0x4321, 0, 1);

	put(&s, body, strlen(body));
	save("mc_udp", name, &s);
}

/* A binary request; then byte at (from the frame's end) set to v, unless at is 0. */
static void mc_udp_binary(const char *name, uint8_t opcode, uint8_t extras_len, const char *val,
			  size_t at, uint8_t v)
{
	struct seed s = mc_binary_msg(0x80, opcode, 0, 0x4321, extras_len, "key", val);

	if (at)
		s.bytes[8 + at] = v;
	save("mc_udp", name, &s);
}

static void mc_udp_corpus(void)
{
	struct seed s;

	mc_udp_ascii("get", "get k\r\n");
	mc_udp_ascii("gets-keys", "gets a bb ccc\r\n");
	mc_udp_ascii("set", "set k 1 0 5\r\nhello\r\n");
	mc_udp_ascii("set-noreply", "set k 4294967295 -1 0 noreply\n\r\n");
	mc_udp_ascii("delete", "delete k 0 noreply\r\n");
	mc_udp_ascii("no-line-end", "get k");
	mc_udp_ascii("unknown", "incr k 1\r\n");
	mc_udp_ascii("bad-number", "set k x 0 1\r\nA\r\n");
	mc_udp_ascii("bad-chunk", "set k 0 0 5\r\nabc\r\n");
	mc_udp_ascii("too-large", "set k 0 0 2000000\r\n");
	mc_udp_ascii("delete-usage", "delete k 5\r\n");
	s = mc_frame(0x4321, 1, 1);
	put(&s, "get k\r\n", 7);
	save("mc_udp", "sequence-1", &s);
	s.len = 8;
	save("mc_udp", "frame-alone", &s);

	mc_udp_binary("binary-get", 0x00, 0, "", 0, 0);
	mc_udp_binary("binary-getkq", 0x0d, 0, "", 0, 0);
	mc_udp_binary("binary-set", 0x01, 8, "hello", 0, 0);
	mc_udp_binary("binary-deleteq", 0x14, 0, "", 0, 0);
	mc_udp_binary("binary-body-lies", 0x00, 0, "", 11, 9);	 /* body length 9 */
	mc_udp_binary("binary-get-extras", 0x00, 4, "", 0, 0);
	mc_udp_binary("binary-unknown", 0x30, 0, "", 0, 0);
	mc_udp_binary("binary-set-cas", 0x01, 8, "hello", 23, 1); /* cas 1 */
	s = mc_binary_msg(0x80, 0x00, 0, 1, 0, "key", "");
	s.len = 8 + 10;
	save("mc_udp", "binary-header-cut", &s);
}

/* A TCP stream received step bytes at a time (0: whole), as fuzz_mc_tcp reads its input. */
static void mc_tcp(const char *name, uint8_t step, const struct seed *stream)
{
	struct seed s = {0};

	put8(&s, step);
	put(&s, stream->bytes, stream->len);
	save("mc_tcp", name, &s);
}

static void mc_tcp_text(const char *name, uint8_t step, const char *text)
{
	struct seed s = {0};

	put(&s, text, strlen(text));
	mc_tcp(name, step, &s);
}

/* A binary request as TCP carries it: mc_binary_msg without the UDP frame. */
static void put_binary_request(struct seed *s, uint8_t opcode, uint8_t extras_len,
			       const char *key, const char *val)
{
	struct seed m = mc_binary_msg(0x80, opcode, 0, 0x4321, extras_len, key, val);

	put(s, m.bytes + 8, m.len - 8);
}

static void mc_tcp_corpus(void)
{
	struct seed s = {0};

	mc_tcp_text("set-get", 0, "set k 0 0 5\r\nhello\r\nget k\r\ngets k x\r\n");
	mc_tcp_text("set-get-bytewise", 1, "set k 0 0 5\r\nhello\r\nget k\r\n");
	mc_tcp_text("quit-midway", 3, "set a 0 0 1\r\nx\r\nget a\r\nquit\r\nget a\r\n");
	mc_tcp_text("unknown", 2, "bogus k\r\nget\r\n");
	mc_tcp_text("arithmetic", 4,
		    "set n 0 0 1\r\n5\r\nincr n 3\r\ndecr n 10\r\ntouch n 100\r\n"
		    "append n 0 0 1\r\n7\r\ndelete n\r\nflush_all\r\n");
	mc_tcp_text("meta", 5, "ms k 2 T0\r\nhi\r\nmg k v f t c s\r\nma k\r\nmd k q\r\nmn\r\n");
	mc_tcp_text("bad-chunk", 0, "set k 0 0 2\r\nabcd\r\nget k\r\n");
	mc_tcp_text("too-large", 7, "set k 0 0 2000000\r\n");
	mc_tcp_text("value-never-comes", 7, "set k 0 0 2000\r\n"); /* no reply either way */
	put_binary_request(&s, 0x01, 8, "key", "hello"); /* SET */
	put_binary_request(&s, 0x0d, 0, "key", "");	   /* GETKQ */
	put_binary_request(&s, 0x0d, 0, "none", "");	   /* GETKQ, a miss: nothing */
	put_binary_request(&s, 0x0a, 0, "", "");	   /* NOOP */
	mc_tcp("binary", 0, &s);
	mc_tcp("binary-bytewise", 1, &s);
	s.len = 0;
	put_binary_request(&s, 0x10, 0, "", ""); /* STAT with no lines: the harness has none */
	mc_tcp("binary-stat-empty", 0, &s);
	s.len = 0;
	put_binary_request(&s, 0x07, 0, "", ""); /* QUIT */
	put_binary_request(&s, 0x00, 0, "key", "");
	mc_tcp("binary-quit", 0, &s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	if (mkdir(root, 0755) && errno != EEXIST) {
		perror(root);
		return 1;
	}
	decode_corpus();
	reasm_raw_corpus();
	reasm_ops_corpus();
	memcached_corpus();
	mc_udp_corpus();
	mc_tcp_corpus();
	return 0;
}
