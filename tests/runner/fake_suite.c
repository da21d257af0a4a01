// SPDX-License-Identifier: MIT
/*
 * A Criterion suite for the runner's test (test-runner.sh): one test passes and
 * one skips itself; with FAKE_SUITE_SKIP set, the whole suite skips (skip_main.c)
 * and says FAKE_SUITE_SKIP's value as the reason.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "skip.h"

const char *suite_skip_reason(void)
{
	return getenv("FAKE_SUITE_SKIP");
}

Test(fake, passes)
{
	cr_assert(1);
}

Test(fake, skips)
{
	cr_skip_test("needs nothing: skips for the runner's test");
}
