/* SPDX-License-Identifier: MIT */
/* Request patterns both server suites drive, whichever backend serves them. */
#ifndef XKV_TEST_WORKLOADS_H
#define XKV_TEST_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

/* Deterministic content from seed, so a value can be checked without keeping it. */
void workload_fill(uint8_t *v, uint32_t len, uint32_t seed);

/*
 * PUT keys keys ("key:N", mostly small values and every size that crosses a
 * datagram boundary, up to 1 MiB), GET each back byte for byte, DELETE the even
 * ones and check which are left. Asserts as it goes.
 */
void workload_keys_roundtrip(struct xkv_client *c, int keys);

/* nclients threads, each its own client, PUT then GET ops times; returns wrong answers. */
int workload_concurrent_clients(const char *server, int nclients, int ops);

/* A PUT datagram for key (value bytes zero) into buf[2048]; returns its length. */
size_t workload_put_datagram(uint8_t *buf, const char *key, uint32_t id, uint32_t value_len,
			     uint32_t frag_len);

/*
 * Amplification (docs/PROTOCOL.md): PUTs a 1 MiB value through c, then sends one GET
 * for it from a socket of its own that never echoes a token, as a spoofed source
 * would, and counts what comes back to that socket for a second. Returns the UDP
 * payload bytes received, *sent the request's. Then checks that c, which does echo
 * tokens, still gets the whole value.
 */
uint64_t workload_unvalidated_get(struct xkv_client *c, const char *host, uint16_t port,
				  uint64_t *sent);

/*
 * The worst ratio of reply bytes to request bytes (UDP payloads) that a source
 * without a token draws: GETs with 1- and 250-byte keys for values at each bound
 * (exactly 3x the request, a byte over, one datagram, pieces, 1 MiB), a PUT and a
 * DELETE, each from a socket that never echoes tokens. Each must be answered. Prints
 * each and the worst.
 */
double workload_worst_ratio(struct xkv_client *c, const char *host, uint16_t port);

#endif /* XKV_TEST_WORKLOADS_H */
