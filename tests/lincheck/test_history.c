// SPDX-License-Identifier: MIT
/*
 * tools/common/history.c, the writer of xkv-lincheck's format: each op and result
 * as the format spells it, what it refuses, the token function, and a file it wrote
 * read back by xkv-lincheck itself.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/history.h"

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/xkv-test-history-%d", getpid());
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(history, .init = setup, .fini = teardown);

static char *slurp(void)
{
	static char text[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

Test(history, token_is_xxh3_64bits)
{
	/* XXH3_64bits of no bytes, from xxHash's own test vectors */
	cr_assert_eq(history_token("", 0), 0x2d06800538d394c2ull);
	cr_assert_neq(history_token("a", 1), history_token("b", 1));
}

Test(history, writes_each_op_and_result_as_the_format_spells_it)
{
	const unsigned char bin[] = {0x00, 0xff, 0x6b};
	const struct history_rec recs[] = {
		{3, HISTORY_PUT, HISTORY_OK, "k1", 2, 0xa1, 100, 200},
		{4, HISTORY_PUT, HISTORY_UNKNOWN, "k1", 2, 0xb2, 150, 0},
		{5, HISTORY_GET, HISTORY_VALUE, "k1", 2, 0xa1, 300, 400},
		{5, HISTORY_GET, HISTORY_NONE, bin, sizeof(bin), 0, 300, 300},
		{5, HISTORY_GET, HISTORY_UNKNOWN, "k1", 2, 0, 500, 0}, /* left out */
		{6, HISTORY_DEL, HISTORY_OK, "k1", 2, 0, 600, 700},
		{6, HISTORY_DEL, HISTORY_NONE, "k1", 2, 0, 800, 900},
		{7, HISTORY_DEL, HISTORY_UNKNOWN, "k1", 2, 0, 1000, 0},
		{8, HISTORY_DEL, HISTORY_DONE, "k1", 2, 0, 1100, 1200},
	};
	struct history *h = history_open(path);

	cr_assert_not_null(h, "%s: %s", path, strerror(errno));
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		cr_assert_eq(history_write(h, &recs[i]), 0, "record %zu", i);
	cr_assert_eq(history_close(h), 0);
	cr_assert_str_eq(slurp(), "# xkv-history 1\n"
				  "3 put 6b31 00000000000000a1 100 200 ok\n"
				  "4 put 6b31 00000000000000b2 150 - ?\n"
				  "5 get 6b31 - 300 400 00000000000000a1\n"
				  "5 get 00ff6b - 300 300 none\n"
				  "6 del 6b31 - 600 700 ok\n"
				  "6 del 6b31 - 800 900 none\n"
				  "7 del 6b31 - 1000 - ?\n"
				  "8 del 6b31 - 1100 1200 done\n");
}

Test(history, refuses_what_the_format_cannot_say)
{
	const struct history_rec bad[] = {
		{0, HISTORY_PUT, HISTORY_NONE, "k", 1, 1, 1, 2},
		{0, HISTORY_PUT, HISTORY_VALUE, "k", 1, 1, 1, 2},
		{0, HISTORY_GET, HISTORY_OK, "k", 1, 0, 1, 2},
		{0, HISTORY_DEL, HISTORY_VALUE, "k", 1, 0, 1, 2},
		{0, HISTORY_PUT, HISTORY_DONE, "k", 1, 1, 1, 2},
		{0, HISTORY_GET, HISTORY_DONE, "k", 1, 0, 1, 2},
		{0, 3, HISTORY_OK, "k", 1, 0, 1, 2},		/* no such op */
		{0, HISTORY_GET, HISTORY_NONE, "k", 1, 0, 5, 4}, /* returned before invoked */
		{0, HISTORY_GET, HISTORY_NONE, "", 0, 0, 1, 2},	/* no key */
	};
	struct history *h = history_open(path);

	cr_assert_not_null(h);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(history_write(h, &bad[i]), -EINVAL, "record %zu", i);
	cr_assert_eq(history_close(h), 0);
	cr_assert_str_eq(slurp(), "# xkv-history 1\n");
	cr_assert_null(history_open("/nonexistent/dir/history"));
	cr_assert_eq(errno, ENOENT);
}

static int lincheck(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execl(XKV_LINCHECK_BIN, XKV_LINCHECK_BIN, path, (char *)NULL);
		_exit(127);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What it writes, the checker reads, and judges: a stale read is found. */
Test(history, xkv_lincheck_reads_what_it_writes)
{
	const char *v1 = "first", *v2 = "second";
	const uint64_t t1 = history_token(v1, 5), t2 = history_token(v2, 6);
	const struct history_rec put1 = {0, HISTORY_PUT, HISTORY_OK, "k", 1, t1, 10, 20};
	const struct history_rec put2 = {1, HISTORY_PUT, HISTORY_OK, "k", 1, t2, 30, 40};
	struct history_rec get = {2, HISTORY_GET, HISTORY_VALUE, "k", 1, t2, 50, 60};
	struct history *h;

	for (int stale = 0; stale < 2; stale++) {
		h = history_open(path);
		cr_assert_not_null(h);
		get.token = stale ? t1 : t2;
		cr_assert_eq(history_write(h, &put1), 0);
		cr_assert_eq(history_write(h, &put2), 0);
		cr_assert_eq(history_write(h, &get), 0);
		cr_assert_eq(history_close(h), 0);
		cr_assert_eq(lincheck(), stale, "a %s read", stale ? "stale" : "fresh");
	}
}
