// SPDX-License-Identifier: MIT
/*
 * Runs the tests that criterion.h beside it registered, each in a child process,
 * under a timeout: exits 0 when all passed. `runner [SUBSTRING]` runs those whose
 * name contains it. The parent starts no thread, so forking is safe under TSan.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"

#define TESTS_MAX 64

static struct {
	const char *name;
	void (*run)(void);
	struct tsan_test_options options;
} tests[TESTS_MAX];
static int ntests;
struct tsan_criterion_options criterion_options; /* suites may set it; we run one at a time */

void tsan_test_register(const char *name, void (*run)(void), struct tsan_test_options options)
{
	if (ntests == TESTS_MAX) {
		fprintf(stderr, "tsan runner: more than %d tests\n", TESTS_MAX);
		exit(1);
	}
	tests[ntests].name = name;
	tests[ntests].run = run;
	tests[ntests].options = options;
	ntests++;
}

void tsan_assert(bool ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	fprintf(stderr, "%s:%d: assertion failed: %s\n ", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* other threads may be running: leave now, without exit handlers */
	_exit(1);
}

/* 0 if the test passed; prints its outcome. */
static int run_one(int i)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		perror("tsan runner: fork");
		return -1;
	}
	if (pid == 0) {
		alarm(tests[i].options.timeout);
		tests[i].run();
		exit(0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("tsan runner: waitpid");
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("[PASS] %s\n", tests[i].name);
		return 0;
	}
	if (WIFSIGNALED(status))
		printf("[FAIL] %s: signal %d%s\n", tests[i].name, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
	else
		printf("[FAIL] %s: exit %d\n", tests[i].name, WEXITSTATUS(status));
	return -1;
}

int main(int argc, char **argv)
{
	int ran = 0, failed = 0;

	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		fflush(stdout);
		failed += run_one(i) != 0;
		ran++;
	}
	printf("[====] Tested: %d | Passing: %d | Failing: %d\n", ran, ran - failed, failed);
	return failed ? 1 : 0;
}
