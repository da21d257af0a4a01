/* SPDX-License-Identifier: MIT */
/*
 * Suites this machine cannot run skip the way the test scripts do (tests/skip.sh):
 * a line "SKIP: <why>" and exit SKIP_EXIT, automake's skip code, which
 * tests/run-tests.sh counts as skipped, neither passed nor failed. A suite that
 * needs it for every test links tests/skip_main.c, a main() that asks
 * suite_skip_reason() before Criterion runs anything; a test that needs it alone
 * calls cr_skip_test() with the reason, and Criterion counts it skipped.
 */
#ifndef XKV_TEST_SKIP_H
#define XKV_TEST_SKIP_H

#include <linux/bpf.h>

#define SKIP_EXIT 77

/* Defined by a suite linked with skip_main.c: why it cannot run here, or NULL. */
const char *suite_skip_reason(void);

/* Why a BPF program of this type will not load here (not root, not in this kernel), or NULL. */
const char *skip_reason_bpf(enum bpf_prog_type type);

#endif /* XKV_TEST_SKIP_H */
