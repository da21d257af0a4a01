// SPDX-License-Identifier: MIT
/* Criterion's own main(), after asking the suite whether it can run here at all. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "skip.h"

int main(int argc, char *argv[])
{
	const char *why = suite_skip_reason();
	struct criterion_test_set *tests;
	int result = 0;

	if (why) {
		printf("SKIP: %s\n", why);
		return SKIP_EXIT;
	}
	tests = criterion_initialize();
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
