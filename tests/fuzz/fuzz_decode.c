// SPDX-License-Identifier: MIT
/*
 * The decoder, on any bytes. Besides not crashing:
 * - an accepted datagram keeps the promises reassembly and the store rely on, and
 *   its key and value lie inside it, right after the header (and the directory's
 *   extension, in version 3), in that order;
 * - the wire form is canonical: every byte of an accepted datagram is determined by
 *   the decoded message (magic, version and flags are fixed, the rest are its
 *   fields), so xkv_encode of it gives back the same bytes, xkv_encode_hdr the same
 *   header, and one byte less room is -ENOSPC;
 * - the other way, a message read from the same bytes field by field that
 *   xkv_encode accepts decodes back to itself.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/codec.h"

/* enough for any datagram the second check makes: header, largest key, a value piece */
#define ENCODE_MAX (sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN + XKV_KEY_MAX + 4096)

static uint64_t reasons[XKV_R_PROTO_END], encoded, extended;

static void check_accepted(const uint8_t *data, size_t size, const struct xkv_msg *m)
{
	size_t hdr_len = size - m->key_len - m->frag_len;
	uint8_t *copy = malloc(size);
	uint8_t hdr[sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN];

	FUZZ_CHECK(hdr_len <= sizeof(hdr));
	FUZZ_CHECK(m->key == data + hdr_len && m->frag == data + hdr_len + m->key_len);
	FUZZ_CHECK(m->status <= XKV_S_MAX && m->key_len <= XKV_KEY_MAX);
	FUZZ_CHECK(m->value_len <= XKV_VALUE_MAX);
	FUZZ_CHECK((uint64_t)m->frag_offset + m->frag_len <= m->value_len);

	FUZZ_CHECK(copy);
	FUZZ_CHECK(xkv_encode(copy, size, m) == (int)size && !memcmp(copy, data, size));
	FUZZ_CHECK(xkv_encode(copy, size - 1, m) == -ENOSPC);
	free(copy);
	FUZZ_CHECK(xkv_encode_hdr(hdr, m) == (int)size && !memcmp(hdr, data, hdr_len));
	extended += m->dir;
}

/* Little-endian: the message is not the wire form, the bytes just pick its fields. */
static uint64_t take(const uint8_t **p, const uint8_t *end, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && *p < end; i++, (*p)++)
		v |= (uint64_t)(*p)[0] << (8 * i);
	return v;
}

static void check_encoded(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	static uint8_t buf[ENCODE_MAX];
	struct xkv_msg m = {0}, d;
	int len;

	/* one statement each: the order of an initializer list's side effects is unspecified */
	m.op = (uint8_t)take(&p, end, 1);
	m.status = (uint8_t)take(&p, end, 1);
	m.key_len = (uint16_t)take(&p, end, 2);
	m.request_id = (uint32_t)take(&p, end, 4);
	m.value_len = (uint32_t)take(&p, end, 4);
	m.frag_offset = (uint32_t)take(&p, end, 4);
	m.frag_len = (uint32_t)take(&p, end, 4);
	m.timestamp = take(&p, end, 8);
	m.dir = take(&p, end, 1) & 1;
	for (size_t i = 0; m.dir && i < sizeof(m.ext); i++)
		((uint8_t *)&m.ext)[i] = (uint8_t)take(&p, end, 1);
	/* the key and the piece are the bytes that follow, if there are enough */
	if ((size_t)(end - p) < (size_t)m.key_len + m.frag_len)
		return;
	m.key = p;
	m.frag = p + m.key_len;
	len = xkv_encode(buf, sizeof(buf), &m);
	if (len == -EINVAL || len == -ENOSPC)
		return;
	FUZZ_CHECK(len > 0 && xkv_decode(buf, (size_t)len, &d) == XKV_R_OK);
	FUZZ_CHECK(d.op == m.op && d.status == m.status && d.key_len == m.key_len &&
		   d.request_id == m.request_id && d.value_len == m.value_len &&
		   d.frag_offset == m.frag_offset && d.frag_len == m.frag_len &&
		   d.timestamp == m.timestamp && d.dir == m.dir &&
		   (!m.dir || !memcmp(&d.ext, &m.ext, sizeof(m.ext))));
	FUZZ_CHECK(!memcmp(d.key, m.key, m.key_len) && !memcmp(d.frag, m.frag, m.frag_len));
	encoded++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xkv_msg m;
	enum xkv_reason reason = xkv_decode(data, size, &m);

	FUZZ_CHECK(reason < XKV_R_PROTO_END);
	reasons[reason]++;
	if (reason == XKV_R_OK)
		check_accepted(data, size, &m);
	check_encoded(data, size);
	return 0;
}

int fuzz_replay_done(void)
{
	int missed = fuzz_reached("an encoded message decoded back", encoded) |
		     fuzz_reached("a version 3 datagram accepted", extended);

	for (int r = 0; r < XKV_R_PROTO_END; r++)
		missed |=
		    fuzz_reached(r ? xkv_reason_name((enum xkv_reason)r) : "accepted", reasons[r]);
	return missed;
}
