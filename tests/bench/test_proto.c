// SPDX-License-Identifier: MIT
/* The memcached encoders and reply parsers, ASCII and binary over UDP (tools/bench/proto.h). */
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

static const struct bench_proto *mcb = &bench_proto_memcached_binary;

/* The fields of a binary reply; body is extras, key and value, body_len bytes. */
struct bin_reply {
	uint16_t frame_id;
	uint8_t magic, opcode, extras_len, data_type;
	uint16_t key_len, status;
	uint32_t opaque;
	const char *body;
	uint32_t body_len;
};

/* A reply datagram as memcached writes it; the body_len field can lie by lie bytes. */
static size_t bin_reply(uint8_t *buf, const struct bin_reply *r, int lie)
{
	uint32_t total = r->body_len + (uint32_t)lie;
	uint8_t hdr[] = {
		r->frame_id >> 8, r->frame_id & 0xff, 0, 0, 0, 1, 0, 0, /* frame: seq 0 of 1 */
		r->magic, r->opcode, r->key_len >> 8, r->key_len & 0xff,
		r->extras_len, r->data_type, r->status >> 8, r->status & 0xff,
		total >> 24, (total >> 16) & 0xff, (total >> 8) & 0xff, total & 0xff,
		r->opaque >> 24, (r->opaque >> 16) & 0xff, (r->opaque >> 8) & 0xff,
		r->opaque & 0xff,
		0, 0, 0, 0, 0, 0, 0, 0x2a, /* memcached returns the item's cas */
	};

	cr_assert_eq(sizeof(hdr), MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN);
	memcpy(buf, hdr, sizeof(hdr));
	if (r->body_len)
		memcpy(buf + sizeof(hdr), r->body, r->body_len);
	return sizeof(hdr) + r->body_len;
}

/* Replies as memcached 1.6.18 sent them to this encoder's requests (cas aside) */
static const struct bin_reply hit = {
	.frame_id = 0x5678, .magic = 0x81, .opcode = 0x00, .extras_len = 4,
	.opaque = 0x12345678, .body = "\0\0\0\0hello", .body_len = 9,
};
static const struct bin_reply miss = {
	.frame_id = 0x0003, .magic = 0x81, .opcode = 0x00, .status = 1,
	.opaque = 0x00010003, .body = "Not found", .body_len = 9,
};
static const struct bin_reply stored = {
	.frame_id = 0x0004, .magic = 0x81, .opcode = 0x01, .opaque = 0xfffe0004,
};

Test(memcached_binary, encodes_a_get_with_the_whole_id_in_the_opaque)
{
	struct bench_request req = {.op = XKV_OP_GET, .request_id = 0x12345678,
				    .key = (const uint8_t *)"k0007", .key_len = 5};
	const uint8_t want[] = "\x56\x78\0\0\0\x01\0\0"	/* frame: low 16 bits, 0 of 1 */
			       "\x80\x00\0\x05\0\0\0\0"	/* GET, key 5, no extras */
			       "\0\0\0\x05\x12\x34\x56\x78" /* body 5, opaque */
			       "\0\0\0\0\0\0\0\0"		/* cas */
			       "k0007";
	uint8_t buf[64];

	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), sizeof(want) - 1);
	cr_assert_arr_eq(buf, want, sizeof(want) - 1);
	cr_assert_eq(mcb->encode(buf, sizeof(want) - 2, &req), -ENOSPC);
	req.key_len = 0;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), -EINVAL);
	req.key_len = XKV_KEY_MAX + 1;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), -EINVAL, "longer than memcached takes");
	req.key_len = 5;
	req.op = XKV_OP_DELETE;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), -EINVAL);
}

Test(memcached_binary, encodes_a_set_with_flags_and_expiration_0)
{
	struct bench_request req = {.op = XKV_OP_PUT, .request_id = 0x00020007,
				    .key = (const uint8_t *)"k 1", .key_len = 3,
				    .value_len = 3, .frag_len = 3, .frag = (const uint8_t *)"abc"};
	const uint8_t want[] = "\0\x07\0\0\0\x01\0\0"
			       "\x80\x01\0\x03\x08\0\0\0"	/* SET, key 3, extras 8 */
			       "\0\0\0\x0e\0\x02\0\x07"	/* body 8 + 3 + 3, opaque */
			       "\0\0\0\0\0\0\0\0"
			       "\0\0\0\0\0\0\0\0"		/* flags, expiration */
			       "k 1abc";
	uint8_t buf[64];

	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), sizeof(want) - 1,
		     "binary keys take a space");
	cr_assert_arr_eq(buf, want, sizeof(want) - 1);
	cr_assert_eq(mcb->encode(buf, sizeof(want) - 2, &req), -ENOSPC);
}

Test(memcached_binary, a_set_in_pieces_is_refused)
{
	struct bench_request req = {.op = XKV_OP_PUT, .request_id = 1,
				    .key = (const uint8_t *)"k1", .key_len = 2,
				    .value_len = 6, .frag_len = 3, .frag = (const uint8_t *)"abc"};
	uint8_t buf[64];

	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), -EINVAL, "the first half");
	req.frag_offset = 3;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), -EINVAL, "the second half");
	req.frag_offset = 0;
	req.value_len = 3;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &req), MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN + 13);
}

Test(memcached_binary, parses_a_hit)
{
	uint8_t buf[128];
	struct xkv_msg m;

	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &hit, 0), &m), 0);
	cr_assert_eq(m.request_id, 0x12345678, "the opaque's 32 bits");
	cr_assert_eq(m.op, XKV_OP_GET | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_OK);
	cr_assert_eq(m.value_len, 5);
	cr_assert_eq(m.frag_offset, 0);
	cr_assert_eq(m.frag_len, 5);
	cr_assert_arr_eq(m.frag, "hello", 5, "the value follows the 4 bytes of flags");
}

Test(memcached_binary, parses_a_getk_hit_with_its_key)
{
	struct bin_reply r = hit;
	uint8_t buf[128];
	struct xkv_msg m;

	r.opcode = 0x0c;
	r.key_len = 2;
	r.body = "\0\0\0\0k1hello";
	r.body_len = 11;
	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &r, 0), &m), 0);
	cr_assert_eq(m.op, XKV_OP_GET | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_OK);
	cr_assert_eq(m.key_len, 2);
	cr_assert_arr_eq(m.key, "k1", 2);
	cr_assert_eq(m.value_len, 5);
	cr_assert_arr_eq(m.frag, "hello", 5);
}

Test(memcached_binary, parses_a_miss_and_a_stored)
{
	uint8_t buf[128];
	struct xkv_msg m;

	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &miss, 0), &m), 0);
	cr_assert_eq(m.request_id, 0x00010003);
	cr_assert_eq(m.op, XKV_OP_GET | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_NOT_FOUND);
	cr_assert_eq(m.value_len, 0, "\"Not found\" is no value");
	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &stored, 0), &m), 0);
	cr_assert_eq(m.request_id, 0xfffe0004);
	cr_assert_eq(m.op, XKV_OP_PUT | XKV_OP_REPLY);
	cr_assert_eq(m.status, XKV_S_OK);
	cr_assert_eq(m.value_len, 0);
}

/* Parses r (with its body length lying by lie): a wrong answer that names the request. */
static void assert_wrong_answer(const struct bin_reply *r, int lie, const char *what)
{
	uint8_t buf[128];
	struct xkv_msg m;

	cr_assert_eq(mcb->parse(buf, bin_reply(buf, r, lie), &m), 0, "%s", what);
	cr_assert_eq(m.request_id, r->opaque, "%s: the headers still name the request", what);
	cr_assert_eq(m.op, XKV_OP_REPLY, "%s", what);
	cr_assert_eq(m.status, XKV_S_BAD_REQUEST, "%s", what);
	cr_assert_eq(m.value_len, 0, "%s", what);
}

Test(memcached_binary, an_error_status_is_a_wrong_answer)
{
	/* what memcached says: invalid arguments, item not stored, unknown command, no memory */
	static const uint16_t statuses[] = {0x0002, 0x0004, 0x0005, 0x0081, 0x0082, 0xffff};
	struct bin_reply r = stored;

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		r.status = statuses[i];
		r.body = "Invalid arguments";
		r.body_len = 17;
		assert_wrong_answer(&r, 0, "a SET's error status");
		r = hit;
		r.status = statuses[i];
		assert_wrong_answer(&r, 0, "a GET's error status");
		r = stored;
	}
}

Test(memcached_binary, a_body_that_makes_no_sense_is_a_wrong_answer)
{
	struct bin_reply r;

	assert_wrong_answer(&hit, 1, "a body length longer than the datagram");
	assert_wrong_answer(&hit, -1, "shorter");
	assert_wrong_answer(&miss, 1, "a miss's, longer");
	assert_wrong_answer(&stored, 1, "a SET's, longer");
	r = hit;
	r.extras_len = 10;
	assert_wrong_answer(&r, 0, "extras longer than the body");
	r = hit;
	r.extras_len = 3;
	r.key_len = 7;
	assert_wrong_answer(&r, 0, "extras and key longer than the body");
	r = hit;
	r.key_len = 0xffff;
	assert_wrong_answer(&r, 0, "a key longer than the body");
	r = hit;
	r.extras_len = 0;
	assert_wrong_answer(&r, 0, "a hit without flags");
	r = stored;
	r.body = "\0\0\0\0";
	r.body_len = 4;
	r.extras_len = 4;
	assert_wrong_answer(&r, 0, "a SET answered with a body");
	r = hit;
	r.data_type = 1;
	assert_wrong_answer(&r, 0, "a data type");
	r = stored;
	r.opcode = 0x04; /* DELETE: as a stored SET looks, but not asked */
	assert_wrong_answer(&r, 0, "an opcode not sent");
	r = miss;
	r.opcode = 0x0d; /* GETKQ */
	assert_wrong_answer(&r, 0, "a quiet GET's miss");
}

Test(memcached_binary, a_truncated_or_foreign_datagram_is_no_reply)
{
	struct bin_reply r = hit;
	uint8_t buf[128];
	size_t len = bin_reply(buf, &hit, 0);
	struct xkv_msg m;

	for (size_t cut = 0; cut < MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN; cut++)
		cr_assert_eq(mcb->parse(buf, cut, &m), -EBADMSG, "cut to %zu bytes", cut);
	cr_assert_eq(mcb->parse(buf, MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN, &m), 0,
		     "the header whole: a wrong answer, as the body length lies");
	cr_assert_eq(m.status, XKV_S_BAD_REQUEST);
	buf[3] = 1; /* sequence 1 */
	cr_assert_eq(mcb->parse(buf, len, &m), -EBADMSG, "the second datagram of a reply");
	buf[3] = 0;
	buf[5] = 2; /* the first of 2 datagrams */
	cr_assert_eq(mcb->parse(buf, len, &m), -EBADMSG, "a reply in two datagrams");
	r.magic = 0x80;
	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &r, 0), &m), -EBADMSG, "a request");
	cr_assert_eq(mcb->parse(buf, reply(buf, 0x5678, "VALUE k1 0 5\r\nhello\r\nEND\r\n"), &m),
		     -EBADMSG, "an ASCII reply");
	r = hit;
	r.frame_id = 0x5679;
	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &r, 0), &m), -EBADMSG, "ids that disagree");
	r = hit;
	r.opaque = 0x12355678; /* low 16 bits as the frame's */
	cr_assert_eq(mcb->parse(buf, bin_reply(buf, &r, 0), &m), 0);
	cr_assert_eq(m.request_id, 0x12355678);
}

Test(memcached_binary, ids_of_earlier_generations_do_not_match)
{
	/* slot 5 at depth 4096, 16 generations apart: the frame ids agree, the opaques do not */
	uint32_t now = 5 + 4096u * 17, then = 5 + 4096u;

	cr_assert_eq(mcb->id_mask, UINT32_MAX);
	cr_assert_eq((uint16_t)now, (uint16_t)then);
	cr_assert_neq(now & mcb->id_mask, then & mcb->id_mask);
	cr_assert(!mcb->echoes_timestamp);
}

Test(protocols, are_found_by_name)
{
	cr_assert_eq(bench_proto_find("xkv"), &bench_proto_xkv);
	cr_assert_eq(bench_proto_find("memcached"), mc);
	cr_assert_eq(bench_proto_find("memcached-binary"), mcb);
	cr_assert_null(bench_proto_find("memcached-"));
	cr_assert_null(bench_proto_find("redis"));
}

/*
 * The largest one-datagram value: memcached 1.6 answers a GET hit in one datagram up
 * to 1400 bytes (run-memcached checks the numbers against it); a binary SET with a
 * long key is the tighter bound.
 */
Test(memcached, the_largest_value_in_one_datagram)
{
	static uint8_t value[1500], key[250];
	struct bench_request put = {.op = XKV_OP_PUT, .key = key, .frag = value};
	uint8_t buf[1472];

	memset(key, 'k', sizeof(key));
	cr_assert_eq(mc->value_max(16, sizeof(buf)), 1354);
	cr_assert_eq(mcb->value_max(16, sizeof(buf)), 1364);
	cr_assert_eq(mcb->value_max(100, sizeof(buf)), 1472 - 8 - 24 - 8 - 100);
	for (uint32_t key_len = 1; key_len <= 250; key_len++) {
		put.key_len = key_len;
		put.value_len = put.frag_len = mcb->value_max(key_len, sizeof(buf));
		cr_assert_gt(mcb->encode(buf, sizeof(buf), &put), 0, "key %u", key_len);
		put.value_len = put.frag_len = mc->value_max(key_len, sizeof(buf));
		cr_assert_gt(mc->encode(buf, sizeof(buf), &put), 0, "key %u", key_len);
	}
	put.key_len = 100;
	put.value_len = put.frag_len = mcb->value_max(100, sizeof(buf)) + 1;
	cr_assert_eq(mcb->encode(buf, sizeof(buf), &put), -ENOSPC);
}
