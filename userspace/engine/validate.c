// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sodium.h>
#include <string.h>
#include <sys/random.h>

#include "engine/validate.h"

_Static_assert(sizeof(((struct xkv_validate *)0)->key) == crypto_shorthash_KEYBYTES,
	       "the token's key is SipHash-2-4's");
_Static_assert(crypto_shorthash_BYTES == sizeof(uint64_t), "a token is 64 bits");

int xkv_validate_init(struct xkv_validate *v)
{
	*v = (struct xkv_validate){.window_ns = XKV_TOKEN_WINDOW_S * 1000000000ULL};
	if (getrandom(v->key, sizeof(v->key), 0) != sizeof(v->key))
		return -errno;
	return 0;
}

bool xkv_validate_trusted(const struct xkv_validate *v, const struct xkv_peer *peer)
{
	return xkv_peer_in(peer, v->trusted, v->ntrusted);
}

/* SipHash-2-4 of the address, port and window; 0 means "no token" on the wire. */
static uint64_t token_of(const struct xkv_validate *v, const struct xkv_peer *peer,
			 uint64_t window)
{
	uint8_t in[sizeof(peer->addr) + sizeof(peer->port) + sizeof(window)];
	uint64_t token;

	memcpy(in, peer->addr, sizeof(peer->addr));
	memcpy(in + sizeof(peer->addr), &peer->port, sizeof(peer->port));
	memcpy(in + sizeof(peer->addr) + sizeof(peer->port), &window, sizeof(window));
	crypto_shorthash((unsigned char *)&token, in, sizeof(in), v->key);
	return token ? token : 1;
}

bool xkv_validate_token(const struct xkv_validate *v, const struct xkv_peer *peer,
			uint64_t token, uint64_t now_ns, uint64_t *current)
{
	uint64_t window = now_ns / v->window_ns;

	*current = token_of(v, peer, window);
	if (token == *current)
		return true;
	return token && window && token == token_of(v, peer, window - 1);
}
