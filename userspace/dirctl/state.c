// SPDX-License-Identifier: MIT
/*
 * The keys the directory replicates, in a file that outlives its maps (Sec. 6.7): one
 * a line, in hex, since a key may hold any byte. Rewritten whole through a temporary
 * file and a rename, so that a crash leaves the old list or the new one.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xkv/proto.h>
#include "dirctl/internal.h"

static void hex_line(FILE *f, const uint8_t *key, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", key[i]);
	fputc('\n', f);
}

/* A line back into its key: its length, or -EINVAL. */
static int unhex(const char *line, uint8_t key[XKV_KEY_MAX])
{
	size_t n = strcspn(line, "\n");
	unsigned byte;

	if (n % 2 || n / 2 < XKV_KEY_MIN || n / 2 > XKV_KEY_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n / 2; i++) {
		if (sscanf(line + 2 * i, "%2x", &byte) != 1)
			return -EINVAL;
		key[i] = (uint8_t)byte;
	}
	return (int)(n / 2);
}

int dirctl_state_each(const char *path, int (*fn)(void *ctx, const uint8_t *key, size_t len),
		      void *ctx)
{
	char line[2 * XKV_KEY_MAX + 2];
	uint8_t key[XKV_KEY_MAX];
	FILE *f = fopen(path, "r");
	int len, err = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		len = unhex(line, key);
		if (len < 0) {
			fprintf(stderr, "xkv-dir: %s: a line that is not a key in hex\n", path);
			err = len;
		} else {
			err = fn(ctx, key, (size_t)len);
		}
	}
	fclose(f);
	return err;
}

struct rewrite {
	FILE *out;
	const uint8_t *drop; /* the key left out, or NULL */
	size_t drop_len;
};

static int copy_key(void *ctx, const uint8_t *key, size_t len)
{
	struct rewrite *r = ctx;

	if (!r->drop || len != r->drop_len || memcmp(key, r->drop, len))
		hex_line(r->out, key, len);
	return 0;
}

/* The list with key added (add) or left out, or emptied (key NULL). */
static int rewrite(const char *path, const uint8_t *key, size_t len, bool add)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct rewrite r = {.drop = key, .drop_len = len};
	char *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			goto fail_errno;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	r.out = fopen(tmp, "w");
	if (!r.out)
		goto fail_errno;
	err = key ? dirctl_state_each(path, copy_key, &r) : 0;
	if (!err && add)
		hex_line(r.out, key, len);
	if (fclose(r.out) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		fprintf(stderr, "xkv-dir: writing %s: %s\n", path, strerror(-err));
	}
	return err;

fail_errno:
	err = -errno;
	fprintf(stderr, "xkv-dir: %s: %s\n", path, strerror(-err));
	return err;
}

static int count_key(void *ctx, const uint8_t *key, size_t len)
{
	(void)key;
	(void)len;
	++*(int *)ctx;
	return 0;
}

int xkv_dirctl_state_count(const char *path)
{
	int n = 0, err = dirctl_state_each(path, count_key, &n);

	return err ? err : n;
}

int dirctl_state_add(const char *path, const void *key, size_t len)
{
	return rewrite(path, key, len, true);
}

int dirctl_state_remove(const char *path, const void *key, size_t len)
{
	return rewrite(path, key, len, false);
}

int dirctl_state_clear(const char *path)
{
	return rewrite(path, NULL, 0, false);
}
