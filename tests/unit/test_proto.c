// SPDX-License-Identifier: MIT
/* The wire codec: round trips, and every malformed class rejected for its reason. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xkv/hash.h>
#include "proto/codec.h"

#define DGRAM_MAX (64 * 1024 + 64) /* room for a key_len of 0xffff */

static uint8_t buf[DGRAM_MAX];
static const char key[] = "user:42";
static const char value[] = "a value of some bytes";

static struct xkv_msg put_msg(void)
{
	return (struct xkv_msg){
		.op = XKV_OP_PUT,
		.key_len = sizeof(key) - 1,
		.request_id = 0xdeadbeef,
		.value_len = sizeof(value) - 1,
		.frag_len = sizeof(value) - 1,
		.timestamp = 0x0102030405060708ULL,
		.token = 0x1112131415161718ULL,
		.key = key,
		.frag = value,
	};
}

static int encode_put(void)
{
	struct xkv_msg m = put_msg();
	int len = xkv_encode(buf, sizeof(buf), &m);

	cr_assert_gt(len, 0, "a valid PUT encodes");
	return len;
}

static struct xkv_hdr *hdr(void)
{
	return (struct xkv_hdr *)buf;
}

static enum xkv_reason decode(size_t len)
{
	struct xkv_msg m;

	return xkv_decode(buf, len, &m);
}

Test(proto, header_is_network_order_on_the_wire)
{
	encode_put();
	cr_assert_eq(buf[0], 'X');
	cr_assert_eq(buf[1], 'K');
	cr_assert_eq(buf[2], XKV_VERSION);
	cr_assert_eq(buf[3], XKV_OP_PUT);
	cr_assert_eq(buf[7], sizeof(key) - 1, "key_len low byte at offset 7");
	cr_assert_eq(buf[8], 0xde, "request_id big-endian at offset 8");
	cr_assert_eq(buf[24], 0x01, "timestamp big-endian at offset 24");
	cr_assert_eq(buf[31], 0x08);
	cr_assert_eq(buf[32], 0x11, "token big-endian at offset 32");
	cr_assert_eq(buf[39], 0x18);
	cr_assert_eq(memcmp(buf + 40, key, sizeof(key) - 1), 0, "key follows the header");
}

Test(proto, round_trip_every_op_and_reply)
{
	static const uint8_t ops[] = {XKV_OP_GET, XKV_OP_PUT, XKV_OP_DELETE};
	uint8_t frag[60];

	for (size_t i = 0; i < sizeof(frag); i++)
		frag[i] = (uint8_t)(i * 37);

	for (size_t i = 0; i < sizeof(ops); i++) {
		for (int reply = 0; reply < 2; reply++) {
			bool has_value = reply ? ops[i] == XKV_OP_GET : ops[i] == XKV_OP_PUT;
			struct xkv_msg in = {
				.op = ops[i] | (reply ? XKV_OP_REPLY : 0),
				.status = reply ? XKV_S_NOT_FOUND : 0,
				.key_len = reply ? 0 : sizeof(key) - 1,
				.request_id = 7 + i,
				.value_len = has_value ? 100 : 0,
				.frag_offset = has_value ? 40 : 0,
				.frag_len = has_value ? 60 : 0,
				.timestamp = 123456789 + i,
				.token = ~0ULL - i,
				.key = key,
				.frag = frag,
			};
			struct xkv_msg out;
			int len = xkv_encode(buf, sizeof(buf), &in);

			cr_assert_gt(len, 0, "op %u reply %d encodes", ops[i], reply);
			cr_assert_eq(xkv_decode(buf, len, &out), XKV_R_OK);
			cr_assert_eq(out.op, in.op);
			cr_assert_eq(out.status, in.status);
			cr_assert_eq(out.key_len, in.key_len);
			cr_assert_eq(out.request_id, in.request_id);
			cr_assert_eq(out.value_len, in.value_len);
			cr_assert_eq(out.frag_offset, in.frag_offset);
			cr_assert_eq(out.frag_len, in.frag_len);
			cr_assert_eq(out.timestamp, in.timestamp);
			cr_assert_eq(out.token, in.token);
			cr_assert_eq(memcmp(out.key, key, out.key_len), 0);
			cr_assert_eq(memcmp(out.frag, frag, out.frag_len), 0);
		}
	}
}

Test(proto, truncated_at_every_byte)
{
	int len = encode_put();

	for (int n = 0; n < len; n++) {
		enum xkv_reason want = n < (int)sizeof(struct xkv_hdr) ? XKV_R_TRUNCATED
								      : XKV_R_BAD_LENGTH;
		cr_assert_eq(decode(n), want, "cut at %d of %d: %s", n, len,
			     xkv_reason_name(decode(n)));
	}
	cr_assert_eq(decode(len), XKV_R_OK);
	cr_assert_eq(decode(len + 1), XKV_R_BAD_LENGTH, "trailing garbage is a lie too");
}

Test(proto, lengths_that_lie)
{
	int len = encode_put();

	hdr()->frag_len = xkv_be32(sizeof(value));
	cr_assert_eq(decode(len), XKV_R_BAD_LENGTH, "frag_len one too long");
	hdr()->frag_len = xkv_be32(sizeof(value) - 2);
	cr_assert_eq(decode(len), XKV_R_BAD_LENGTH, "frag_len one too short");
	hdr()->frag_len = xkv_be32(0xffffffffu - 10);
	cr_assert_eq(decode(len), XKV_R_BAD_LENGTH, "frag_len near 2^32 does not wrap");

	encode_put();
	hdr()->key_len = xkv_be16(sizeof(key));
	cr_assert_eq(decode(len), XKV_R_BAD_LENGTH, "key_len one too long");

	encode_put();
	hdr()->value_len = xkv_be32(sizeof(value) - 2);
	cr_assert_eq(decode(len), XKV_R_BAD_FRAGMENT, "fragment longer than the value");
}

/* A header with a key of key_len bytes and lengths otherwise consistent. */
static size_t request_with_key_len(uint16_t key_len)
{
	struct xkv_hdr h = {
		.magic = xkv_be16(XKV_MAGIC),
		.version = XKV_VERSION,
		.op = XKV_OP_GET,
		.key_len = xkv_be16(key_len),
	};

	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 'k', key_len);
	return sizeof(h) + key_len;
}

Test(proto, key_length_limits)
{
	cr_assert_eq(decode(request_with_key_len(0)), XKV_R_BAD_KEY_LEN);
	cr_assert_eq(decode(request_with_key_len(1)), XKV_R_OK);
	cr_assert_eq(decode(request_with_key_len(250)), XKV_R_OK);
	cr_assert_eq(decode(request_with_key_len(251)), XKV_R_BAD_KEY_LEN);
	cr_assert_eq(decode(request_with_key_len(0xffff)), XKV_R_BAD_KEY_LEN);
}

Test(proto, value_over_one_mib)
{
	int len = encode_put();

	hdr()->value_len = xkv_be32(XKV_VALUE_MAX);
	cr_assert_eq(decode(len), XKV_R_OK, "exactly 1 MiB is allowed");
	hdr()->value_len = xkv_be32(XKV_VALUE_MAX + 1);
	cr_assert_eq(decode(len), XKV_R_TOO_LARGE);
	hdr()->value_len = xkv_be32(0xffffffffu);
	cr_assert_eq(decode(len), XKV_R_TOO_LARGE);
}

Test(proto, fragment_offsets_past_the_end)
{
	int len = encode_put();
	uint32_t frag_len = sizeof(value) - 1;

	hdr()->value_len = xkv_be32(1000);
	hdr()->frag_offset = xkv_be32(1000 - frag_len);
	cr_assert_eq(decode(len), XKV_R_OK, "the last fragment ends at the value's end");
	hdr()->frag_offset = xkv_be32(1000 - frag_len + 1);
	cr_assert_eq(decode(len), XKV_R_BAD_FRAGMENT, "one byte past the end");
	hdr()->frag_offset = xkv_be32(1001);
	cr_assert_eq(decode(len), XKV_R_BAD_FRAGMENT, "offset past the end");
	hdr()->frag_offset = xkv_be32(0xfffffff0u);
	cr_assert_eq(decode(len), XKV_R_BAD_FRAGMENT, "offset + length wraps");
}

Test(proto, empty_fragment_of_a_value)
{
	struct xkv_msg m = put_msg();

	m.value_len = 10;
	m.frag_len = 0;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL);
	m.value_len = 0;
	cr_assert_gt(xkv_encode(buf, sizeof(buf), &m), 0, "an empty value is one empty fragment");
}

Test(proto, bad_magic_version_flags_status)
{
	int len = encode_put();

	buf[0] ^= 0xff;
	cr_assert_eq(decode(len), XKV_R_BAD_MAGIC);
	encode_put();
	hdr()->version = XKV_DIR_VERSION + 1;
	cr_assert_eq(decode(len), XKV_R_BAD_VERSION);
	hdr()->version = 0;
	cr_assert_eq(decode(len), XKV_R_BAD_VERSION);
	encode_put();
	hdr()->flags = 1;
	cr_assert_eq(decode(len), XKV_R_BAD_FLAGS);
	encode_put();
	hdr()->status = XKV_S_OK + 1;
	cr_assert_eq(decode(len), XKV_R_BAD_STATUS, "a request carries no status");
}

/* A version 3 PUT, its extension as the directory would fill it. */
static struct xkv_msg dir_put_msg(void)
{
	struct xkv_msg m = put_msg();

	m.dir = true;
	m.ext = (struct xkv_dir_ext){.key_hash = xkv_be64(0x1122334455667788ULL),
				     .ver = xkv_be64(0x99),
				     .load = xkv_be32(7),
				     .write_set = xkv_be32(0x5),
				     .target = 2,
				     .dflags = XKV_DIR_STEERED};
	return m;
}

Test(proto, version_3_carries_the_extension_before_the_key)
{
	struct xkv_msg in = dir_put_msg(), out;
	int len = xkv_encode(buf, sizeof(buf), &in);

	cr_assert_eq(len, (int)(sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN + in.key_len + in.frag_len));
	cr_assert_eq(buf[2], XKV_DIR_VERSION);
	cr_assert_eq(buf[5], XKV_F_DIR);
	cr_assert_eq(buf[40 + 15], 0x99, "ver, big-endian, at the extension's byte 8");
	cr_assert_eq(memcmp(buf + 72, key, sizeof(key) - 1), 0, "the key follows the extension");
	cr_assert_eq(xkv_decode(buf, (size_t)len, &out), XKV_R_OK);
	cr_assert(out.dir);
	cr_assert_eq(memcmp(&out.ext, &in.ext, sizeof(in.ext)), 0);
	cr_assert_eq(out.key, buf + 72);
	cr_assert_eq(memcmp(out.frag, value, sizeof(value) - 1), 0);
	cr_assert_eq(xkv_msg_hdr_len(&out), 72);
}

Test(proto, version_3_rules)
{
	struct xkv_msg m = dir_put_msg();
	int len = xkv_encode(buf, sizeof(buf), &m);

	hdr()->flags = 0;
	cr_assert_eq(decode(len), XKV_R_BAD_FLAGS, "version 3 without its extension's flag");
	xkv_encode(buf, sizeof(buf), &m);
	cr_assert_eq(decode(sizeof(struct xkv_hdr) + XKV_DIR_EXT_LEN - 1), XKV_R_TRUNCATED,
		     "cut inside the extension");
	hdr()->key_len = 0;
	cr_assert_eq(decode(sizeof(struct xkv_hdr) + 8), XKV_R_TRUNCATED);
	/* the lengths count the extension */
	len = xkv_encode(buf, sizeof(buf), &m);
	cr_assert_eq(decode(len - 1), XKV_R_BAD_LENGTH);
	cr_assert_eq(decode(len + 1), XKV_R_BAD_LENGTH);
	/* a version 2 datagram relabelled: 32 bytes short of what its lengths say */
	len = encode_put();
	hdr()->version = XKV_DIR_VERSION;
	hdr()->flags = XKV_F_DIR;
	cr_assert_eq(decode(len + 4), XKV_R_BAD_LENGTH);
	len = encode_put();
	hdr()->flags = XKV_F_DIR;
	cr_assert_eq(decode(len), XKV_R_BAD_FLAGS, "version 2 has no extension");
}

Test(proto, unknown_ops)
{
	static const uint8_t bad[] = {0, 4, 0x7f, XKV_OP_REPLY, XKV_OP_REPLY | 4, 0xff};
	int len = encode_put();

	for (size_t i = 0; i < sizeof(bad); i++) {
		hdr()->op = bad[i];
		cr_assert_eq(decode(len), XKV_R_BAD_OP, "op 0x%x", bad[i]);
	}
}

Test(proto, replies_have_no_key_and_a_known_status)
{
	struct xkv_msg m = {.op = XKV_OP_GET | XKV_OP_REPLY, .status = XKV_S_MAX + 1};

	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL);
	m.status = XKV_S_BUSY;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), (int)sizeof(struct xkv_hdr));
	m.key = key;
	m.key_len = 3;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL, "a reply echoes no key");
}

Test(proto, only_put_requests_and_get_replies_carry_values)
{
	struct xkv_msg m = put_msg();

	m.op = XKV_OP_GET;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL, "GET with a value");
	m.op = XKV_OP_DELETE;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL, "DELETE with a value");
	m.op = XKV_OP_PUT | XKV_OP_REPLY;
	m.key_len = 0;
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), -EINVAL, "PUT reply with a value");
}

Test(proto, encoder_checks_room)
{
	struct xkv_msg m = put_msg();
	size_t need = sizeof(struct xkv_hdr) + m.key_len + m.frag_len;

	cr_assert_eq(xkv_encode(buf, need - 1, &m), -ENOSPC);
	cr_assert_eq(xkv_encode(buf, need, &m), (int)need);
}

/* A 1 MiB value split the way a client sends it decodes piece by piece and tiles the value. */
Test(proto, one_mib_value_in_fragments)
{
	const uint32_t total = XKV_VALUE_MAX, piece = 1400 - sizeof(struct xkv_hdr) - 7;
	static uint8_t big[XKV_VALUE_MAX];
	uint32_t covered = 0;

	for (uint32_t off = 0; off < total; off += piece) {
		struct xkv_msg m = put_msg(), out;
		int len;

		m.value_len = total;
		m.frag_offset = off;
		m.frag_len = total - off < piece ? total - off : piece;
		m.frag = big + off;
		len = xkv_encode(buf, sizeof(buf), &m);
		cr_assert_gt(len, 0);
		cr_assert_eq(xkv_decode(buf, len, &out), XKV_R_OK);
		cr_assert_eq(out.frag_offset, covered);
		covered += out.frag_len;
	}
	cr_assert_eq(covered, total);
}

Test(proto, reason_and_status_names)
{
	cr_assert_str_eq(xkv_reason_name(XKV_R_TRUNCATED), "truncated");
	cr_assert_str_eq(xkv_reason_name(XKV_R_BAD_FRAGMENT), "bad_fragment");
	cr_assert_str_eq(xkv_reason_name(XKV_R_END), "unknown");
	cr_assert_str_eq(xkv_status_name(XKV_S_NO_MEMORY), "no_memory");
	cr_assert_eq(xkv_status_from_errno(-ENOENT), XKV_S_NOT_FOUND);
	cr_assert_eq(xkv_status_from_errno(-E2BIG), XKV_S_TOO_LARGE);
	cr_assert_eq(xkv_status_from_errno(-ENOMEM), XKV_S_NO_MEMORY);
	cr_assert_eq(xkv_status_from_errno(-EINVAL), XKV_S_BAD_REQUEST);
}

/* The two examples in docs/PROTOCOL.md, byte for byte. */
Test(proto, protocol_doc_examples)
{
	static const uint8_t get[] = {
		0x58, 0x4b, 0x02, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x11, 0x12, 0x13, 0x14,
		0x15, 0x16, 0x17, 0x18, 'u',  's',  'e',  'r',  ':',  '4',  '2',
	};
	static const uint8_t reply[] = {
		0x58, 0x4b, 0x02, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 'h',  'i',
	};
	struct xkv_msg m = {
		.op = XKV_OP_GET,
		.key_len = 7,
		.request_id = 9,
		.timestamp = 0x0102030405060708ULL,
		.token = 0x1112131415161718ULL,
		.key = "user:42",
	};

	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), (int)sizeof(get));
	cr_assert_eq(memcmp(buf, get, sizeof(get)), 0);
	m = (struct xkv_msg){
		.op = XKV_OP_GET | XKV_OP_REPLY,
		.request_id = 9,
		.value_len = 2,
		.frag_len = 2,
		.timestamp = 0x0102030405060708ULL,
		.frag = "hi",
	};
	cr_assert_eq(xkv_encode(buf, sizeof(buf), &m), (int)sizeof(reply));
	cr_assert_eq(memcmp(buf, reply, sizeof(reply)), 0);
}
