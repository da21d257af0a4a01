/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for Criterion under ThreadSanitizer, which Criterion cannot run under
 * (its sandbox maps an arena where TSan keeps its shadow: Snaipe/Criterion#274).
 * `make test-tsan` puts this directory first on the include path of the suites it
 * builds, so a suite compiles unchanged: Test() registers the test with runner.c,
 * which runs each in a child process of its own, as Criterion does. Only the
 * assertions those suites use are here.
 */
#ifndef XKV_TSAN_CRITERION_H
#define XKV_TSAN_CRITERION_H

#include <stdbool.h>
#include <stdio.h>

struct tsan_test_options {
	unsigned timeout; /* seconds; 0: none */
};

void tsan_test_register(const char *name, void (*run)(void), struct tsan_test_options options);
void tsan_assert(bool ok, const char *expr, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define Test(suite, name, ...)                                                                     \
	static void suite##_##name(void);                                                          \
	__attribute__((constructor)) static void suite##_##name##_register(void)                   \
	{                                                                                          \
		tsan_test_register(#suite "::" #name, suite##_##name,                              \
				   (struct tsan_test_options){__VA_ARGS__});                       \
	}                                                                                          \
	static void suite##_##name(void)

/* The runner runs one test at a time: a hook that would say so is left unused. */
struct criterion_test_set;
struct tsan_criterion_options {
	unsigned jobs;
};
extern struct tsan_criterion_options criterion_options;
#define ReportHook(kind) __attribute__((unused)) static void tsan_report_hook_##kind

/* The message, if any, is a format and its arguments, as Criterion's; " " keeps it non-empty. */
#define cr_assert(cond, ...) tsan_assert((cond), #cond, __FILE__, __LINE__, " " __VA_ARGS__)
#define cr_assert_not(cond, ...) cr_assert(!(cond), __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

#endif /* XKV_TSAN_CRITERION_H */
