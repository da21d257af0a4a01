/* SPDX-License-Identifier: MIT */
/*
 * What every harness shares. A harness is a libFuzzer target; built with
 * replay_main.c instead of libFuzzer, it replays its seed corpus in `make test`, and
 * fuzz_replay_done() then checks that the corpus reached the paths it must reach.
 */
#ifndef XKV_FUZZ_H
#define XKV_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Not assert(): a harness must check with NDEBUG too. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* After a replay: 0, or 1 having said which path no seed reached. */
int fuzz_replay_done(void);

/* For fuzz_replay_done: 0 if a path the corpus must reach was reached, else 1. */
static inline int fuzz_reached(const char *what, uint64_t times)
{
	if (times)
		return 0;
	fprintf(stderr, "the corpus never reached: %s\n", what);
	return 1;
}

#endif /* XKV_FUZZ_H */
