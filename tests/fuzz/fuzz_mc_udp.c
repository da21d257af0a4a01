// SPDX-License-Identifier: MIT
/*
 * memcached's UDP requests (proto/mc_udp.h), on any bytes: the datagram as it reaches
 * the worker, frame included. Besides not crashing:
 * - a request is a GET, PUT or DELETE whose id is the frame's and size the datagram's;
 * - its key, and each further key of an ASCII get, lies inside the datagram, 1 to
 *   XKV_KEY_MAX bytes, an ASCII one without a byte that ends a key for XDP
 *   (xkv_mc_key_end), so that XDP hashes the same bytes;
 * - a SET's value lies inside it after the key, at most XKV_VALUE_MAX bytes, whole;
 * - a refused write's key, when it was read, is such a key too.
 */
#include <string.h>

#include "fuzz.h"
#include "proto/mc_udp.h"

static uint64_t verdicts[XKV_MC_UDP_UNSUPPORTED + 1][2]; /* by verdict and dialect */

static bool inside(const uint8_t *data, size_t size, const void *p, size_t len)
{
	return (const uint8_t *)p >= data && (size_t)((const uint8_t *)p - data) <= size &&
	       len <= size - (size_t)((const uint8_t *)p - data);
}

static void check_key(const uint8_t *data, size_t size, const struct xkv_msg *m, const void *key,
		      uint16_t key_len)
{
	FUZZ_CHECK(key_len >= XKV_KEY_MIN && key_len <= XKV_KEY_MAX);
	FUZZ_CHECK(inside(data, size, key, key_len));
	for (uint16_t i = 0; m->mc.dialect == XKV_DIALECT_MC_ASCII && i < key_len; i++)
		FUZZ_CHECK(!xkv_mc_key_end(((const uint8_t *)key)[i]));
}

static void check_accepted(const uint8_t *data, size_t size, const struct xkv_msg *m)
{
	const char *keys = m->mc.keys;
	uint16_t keys_len = m->mc.keys_len, key_len;
	const void *key;

	FUZZ_CHECK(m->op == XKV_OP_GET || m->op == XKV_OP_PUT || m->op == XKV_OP_DELETE);
	FUZZ_CHECK(m->mc.size == size && m->request_id == (uint32_t)(data[0] << 8 | data[1]));
	check_key(data, size, m, m->key, m->key_len);
	if (m->op == XKV_OP_PUT) {
		FUZZ_CHECK(m->value_len == m->frag_len && m->frag_offset == 0);
		FUZZ_CHECK(m->value_len <= XKV_VALUE_MAX);
		FUZZ_CHECK(inside(data, size, m->frag, m->value_len));
		FUZZ_CHECK((const uint8_t *)m->frag >= (const uint8_t *)m->key + m->key_len);
	} else {
		FUZZ_CHECK(m->value_len == 0 && m->frag_len == 0);
	}
	if (!keys_len)
		return;
	FUZZ_CHECK(m->op == XKV_OP_GET && m->mc.dialect == XKV_DIALECT_MC_ASCII);
	FUZZ_CHECK(inside(data, size, keys, keys_len));
	while (xkv_mc_next_key(&keys, &keys_len, &key, &key_len))
		check_key(data, size, m, key, key_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xkv_msg m;
	enum xkv_mc_verdict v = xkv_mc_decode(data, size, &m);

	FUZZ_CHECK(v <= XKV_MC_UDP_UNSUPPORTED);
	verdicts[v][m.mc.dialect == XKV_DIALECT_MC_BINARY]++;
	if (v == XKV_MC_UDP_OK)
		check_accepted(data, size, &m);
	/* an error is answered in the request's dialect, on its frame */
	if (v != XKV_MC_UDP_OK && v != XKV_MC_UDP_DROP)
		FUZZ_CHECK(m.mc.dialect != XKV_DIALECT_XKV && m.mc.size == size);
	/* a refused write's key, whose EWT slot the worker lets go, is one XDP hashed */
	if (v != XKV_MC_UDP_OK && m.key_len)
		check_key(data, size, &m, m.key, m.key_len);
	return 0;
}

int fuzz_replay_done(void)
{
	static const char *const names[] = {
		[XKV_MC_UDP_OK] = "accepted",
		[XKV_MC_UDP_DROP] = "dropped",
		[XKV_MC_UDP_ERROR] = "ERROR",
		[XKV_MC_UDP_BAD_FORMAT] = "bad command line format",
		[XKV_MC_UDP_BAD_CHUNK] = "bad data chunk",
		[XKV_MC_UDP_TOO_LARGE] = "too large",
		[XKV_MC_UDP_DELETE_USAGE] = "delete's usage",
		[XKV_MC_UDP_UNKNOWN] = "unknown opcode",
		[XKV_MC_UDP_UNSUPPORTED] = "a CAS to compare",
	};
	/* the verdicts each dialect has: binary has no line, chunk or size to get wrong */
	static const uint16_t ascii = 0x7f, binary = 0x18b;
	char what[64];
	int missed = 0;

	for (unsigned v = 0; v <= XKV_MC_UDP_UNSUPPORTED; v++) {
		snprintf(what, sizeof(what), "ASCII %s", names[v]);
		if (ascii >> v & 1)
			missed |= fuzz_reached(what, verdicts[v][0]);
		snprintf(what, sizeof(what), "binary %s", names[v]);
		if (binary >> v & 1)
			missed |= fuzz_reached(what, verdicts[v][1]);
	}
	return missed;
}
