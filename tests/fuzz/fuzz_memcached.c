// SPDX-License-Identifier: MIT
/*
 * xkv-bench's memcached reply parsers, ASCII and binary, each on every input.
 * Besides not crashing, a parsed reply is one the workload's checks can judge:
 * - op XKV_OP_REPLY with GET or PUT and status OK or NOT_FOUND, or (an answer that
 *   makes no sense) with neither and BAD_REQUEST;
 * - a request id within the dialect's id bits whose low 16 bits are the frame's id;
 * - a value that is the whole value, inside the datagram after the key, ending where
 *   the dialect ends it: 7 bytes before the end ("\r\nEND\r\n") in ASCII, at the end
 *   in binary.
 */
#include <errno.h>

#include "fuzz.h"
#include "proto.h"

enum outcome { NO_REPLY, WRONG, STORED, MISS, HIT, OUTCOMES };

struct dialect {
	const struct bench_proto *proto;
	size_t value_tail; /* bytes after a hit's value */
	uint64_t seen[OUTCOMES];
};

static struct dialect dialects[] = {
    {.proto = &bench_proto_memcached, .value_tail = 7},
    {.proto = &bench_proto_memcached_binary, .value_tail = 0},
};

static enum outcome check_reply(const struct dialect *d, const uint8_t *data, size_t size)
{
	struct xkv_msg r;
	const uint8_t *end = data + size;
	uint8_t op;
	int ret = d->proto->parse(data, size, &r);

	if (ret == -EBADMSG)
		return NO_REPLY;
	FUZZ_CHECK(ret == 0 && size >= MC_FRAME_HDR_LEN);
	FUZZ_CHECK((r.request_id & ~d->proto->id_mask) == 0);
	FUZZ_CHECK((uint16_t)r.request_id == (uint16_t)(data[0] << 8 | data[1]));
	FUZZ_CHECK(r.op & XKV_OP_REPLY);
	op = r.op & ~XKV_OP_REPLY;
	if (!op) {
		FUZZ_CHECK(r.status == XKV_S_BAD_REQUEST && !r.value_len && !r.frag_len);
		return WRONG;
	}
	FUZZ_CHECK(op == XKV_OP_GET || op == XKV_OP_PUT);
	/* binary status 1 is a miss whatever the opcode: for a SET, the workload's error */
	FUZZ_CHECK(r.status == XKV_S_OK || r.status == XKV_S_NOT_FOUND);
	if (op == XKV_OP_PUT || r.status == XKV_S_NOT_FOUND) {
		FUZZ_CHECK(!r.value_len && !r.frag_len);
		return r.status == XKV_S_NOT_FOUND ? MISS : STORED;
	}
	FUZZ_CHECK(r.value_len <= XKV_VALUE_MAX && r.frag_offset == 0 && r.frag_len == r.value_len);
	FUZZ_CHECK((const uint8_t *)r.key > data && (const uint8_t *)r.key + r.key_len <= end);
	FUZZ_CHECK((const uint8_t *)r.frag >= (const uint8_t *)r.key + r.key_len);
	FUZZ_CHECK((const uint8_t *)r.frag + r.frag_len + d->value_tail == end);
	return HIT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++)
		dialects[i].seen[check_reply(&dialects[i], data, size)]++;
	return 0;
}

int fuzz_replay_done(void)
{
	static const char *const names[OUTCOMES] = {"no reply", "a wrong answer", "stored",
						    "a miss", "a hit"};
	int missed = 0;

	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
		for (int o = 0; o < OUTCOMES; o++) {
			char what[64];

			snprintf(what, sizeof(what), "%s: %s", dialects[i].proto->name, names[o]);
			missed |= fuzz_reached(what, dialects[i].seen[o]);
		}
	}
	return missed;
}
