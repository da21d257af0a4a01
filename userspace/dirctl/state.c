// SPDX-License-Identifier: MIT
/*
 * The keys the directory replicates, in a file that outlives its maps (Sec. 6.7): one
 * a line, in hex, since a key may hold any byte. Rewritten whole through a temporary
 * file, synced, and a rename, so that a crash or a power cut leaves the old list or the
 * new one; under a lock (PATH.lock), so that two commands at once lose no key.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* Syncs the directory holding path, so that a rename in it survives a power cut. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/* Writes the new list into tmp: the old one's lines but key's, then key if add. */
static int write_list(const char *path, const char *tmp, const uint8_t *key, size_t len,
		      bool add)
{
	struct rewrite r = {.drop = key, .drop_len = len};
	int err;

	r.out = fopen(tmp, "w");
	if (!r.out)
		return -errno;
	err = key ? dirctl_state_each(path, copy_key, &r) : 0;
	if (!err && add)
		hex_line(r.out, key, len);
	if (!err && (fflush(r.out) || fsync(fileno(r.out))))
		err = -errno;
	if (fclose(r.out) && !err)
		err = -errno;
	return err;
}

/* The list with key added (add) or left out, or emptied (key NULL). */
static int rewrite(const char *path, const uint8_t *key, size_t len, bool add)
{
	char tmp[PATH_MAX], dir[PATH_MAX], lock_path[PATH_MAX];
	char *slash;
	int lock, err;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
	if (mkdir(dir, 0700) && errno != EEXIST)
		goto fail_errno;
	snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
	lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (lock < 0)
		goto fail_errno;
	if (flock(lock, LOCK_EX)) {
		close(lock);
		goto fail_errno;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	err = write_list(path, tmp, key, len, add);
	if (!err && rename(tmp, path))
		err = -errno;
	if (!err)
		err = sync_dir(dir);
	close(lock); /* and the lock with it */
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
