// SPDX-License-Identifier: MIT
/* The memcached ASCII-over-UDP encoder and reply parser (tools/bench/proto.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "proto.h"

static const struct bench_proto *mc = &bench_proto_memcached;

/* A reply datagram: the frame header for id (sequence 0 of 1), then body. */
static size_t reply(uint8_t *buf, uint16_t id, const char *body)
{
	size_t len = strlen(body);

	memcpy(buf, (uint8_t[]){id >> 8, id & 0xff, 0, 0, 0, 1, 0, 0}, MC_FRAME_HDR_LEN);
	memcpy(buf + MC_FRAME_HDR_LEN, body, len);
	return MC_FRAME_HDR_LEN + len;
}

Test(memcached, encodes_a_get_with_the_low_16_bits_of_the_id)
{
	struct bench_request req = {.op = XKV_OP_GET, .request_id = 0x12345678,
				    .key = (const uint8_t *)"k0007", .key_len = 5};
	const uint8_t want[] = "\x56\x78\0\0\0\x01\0\0get k0007\r\n";
	uint8_t buf[64];

	cr_assert_eq(mc->encode(buf, sizeof(buf), &req), sizeof(want) - 1);
	cr_assert_arr_eq(buf, want, sizeof(want) - 1);
}

Test(memcached, encodes_a_set)
{
	struct bench_request req = {.op = XKV_OP_PUT, .request_id = 7,
				    .key = (const uint8_t *)"k1", .key_len = 2,
				    .value_len = 3, .frag_len = 3, .frag = (const uint8_t *)"abc"};
	const uint8_t want[] = "\0\x07\0\0\0\x01\0\0set k1 0 0 3\r\nabc\r\n";
	uint8_t buf[64];

	cr_assert_eq(mc->encode(buf, sizeof(buf), &req), sizeof(want) - 1);
	cr_assert_arr_eq(buf, want, sizeof(want) - 1);
	cr_assert_eq(mc->encode(buf, sizeof(want) - 2, &req), -ENOSPC);
	req.key = (const uint8_t *)"k ";
	cr_assert_eq(mc->encode(buf, sizeof(buf), &req), -EINVAL, "a space ends a key");
	req.key_len = 0;
	cr_assert_eq(mc->encode(buf, sizeof(buf), &req), -EINVAL);
}

Test(memcached, parses_a_hit)
{
	uint8_t buf[128];
	size_t len = reply(buf, 0xbeef, "VALUE k1 0 5\r\nhello\r\nEND\r\n");
	struct xkv_msg m;

	cr_assert_eq(mc->parse(buf, len, &m), 0);
	cr_assert_eq(m.request_id, 0xbeef);
	cr_assert_eq(m.op, XKV_OP_GET | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_OK);
	cr_assert_eq(m.value_len, 5);
	cr_assert_eq(m.frag_len, 5);
	cr_assert_arr_eq(m.frag, "hello", 5);
	cr_assert_eq(m.key_len, 2);
	cr_assert_arr_eq(m.key, "k1", 2);
}

Test(memcached, parses_a_miss_and_a_stored)
{
	uint8_t buf[64];
	struct xkv_msg m;

	cr_assert_eq(mc->parse(buf, reply(buf, 3, "END\r\n"), &m), 0);
	cr_assert_eq(m.request_id, 3);
	cr_assert_eq(m.op, XKV_OP_GET | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_NOT_FOUND);
	cr_assert_eq(mc->parse(buf, reply(buf, 4, "STORED\r\n"), &m), 0);
	cr_assert_eq(m.request_id, 4);
	cr_assert_eq(m.op, XKV_OP_PUT | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_OK);
	cr_assert_eq(m.value_len, 0);
}

Test(memcached, a_short_or_multi_datagram_frame_is_no_reply)
{
	uint8_t buf[64];
	size_t len = reply(buf, 1, "END\r\n");
	struct xkv_msg m;

	cr_assert_eq(mc->parse(buf, 7, &m), -EBADMSG);
	buf[3] = 1; /* sequence 1 */
	cr_assert_eq(mc->parse(buf, len, &m), -EBADMSG);
	buf[3] = 0;
	buf[5] = 2; /* one of 2 datagrams */
	cr_assert_eq(mc->parse(buf, len, &m), -EBADMSG);
}

Test(memcached, a_truncated_or_garbled_body_is_a_wrong_answer)
{
	static const char *const bad[] = {
		"",
		"END\r",
		"STORED",
		"NOT_STORED\r\n",
		"ERROR\r\n",
		"SERVER_ERROR out of memory\r\n",
		"VALUE k1 0 5\r\nhello\r\nEND\r",	  /* truncated */
		"VALUE k1 0 5\r\nhell\r\nEND\r\n",	  /* shorter than it says */
		"VALUE k1 0 5\r\nhello!\r\nEND\r\n",	  /* longer */
		"VALUE k1 0 5\r\nhello\r\n",		  /* no END */
		"VALUE k1 0 5\r\nhello\r\nEND\r\nxx",	  /* trailing bytes */
		"VALUE k1 0 x\r\nhello\r\nEND\r\n",	  /* no length */
		"VALUE k1 0\r\nhello\r\nEND\r\n",	  /* a field short */
		"VALUE k1  0 5\r\nhello\r\nEND\r\n",	  /* two spaces */
		"VALUE k1 0 5 9\r\nhello\r\nEND\r\n",	  /* a field too many */
		"VALUE k1 0 99999999999\r\nhello\r\nEND\r\n", /* overflows */
		"VALUE k1 0 5\nhello\r\nEND\r\n",	  /* \n without \r */
	};
	uint8_t buf[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xkv_msg m;

		cr_assert_eq(mc->parse(buf, reply(buf, 9, bad[i]), &m), 0, "%s", bad[i]);
		cr_assert_eq(m.request_id, 9, "the header still names the request");
		cr_assert_eq(m.op, XKV_OP_REPLY, "%s", bad[i]);
		cr_assert_eq(m.status, XKV_S_BAD_REQUEST, "%s", bad[i]);
	}
}

Test(memcached, only_ids_of_outstanding_requests_match)
{
	/* the loop's ids for slot 5 at depth 4096 in successive generations: low 16 bits */
	cr_assert_eq(mc->id_mask, 0xffff);
	cr_assert_neq((5 + 4096u) & mc->id_mask, (6 + 4096u) & mc->id_mask);
	cr_assert_eq((5 + 4096u * 16) & mc->id_mask, 5u, "16 generations wrap");
	cr_assert(!mc->echoes_timestamp);
}

Test(protocols, are_found_by_name)
{
	cr_assert_eq(bench_proto_find("xkv"), &bench_proto_xkv);
	cr_assert_eq(bench_proto_find("memcached"), mc);
	cr_assert_null(bench_proto_find("redis"));
}
