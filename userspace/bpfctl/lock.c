// SPDX-License-Identifier: MIT
/* bpfctl: the lock one server holds on an interface. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "bpfctl/bpfctl.h"
#include "bpfctl/internal.h"

/* BPFCTL_LOCK_DIR/<ifname>.lock opened with flags: an fd, or -errno. */
static int lock_open(const char *ifname, int flags)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), BPFCTL_LOCK_DIR "/%s.lock", ifname), fd;

	if (n < 0 || n >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((flags & O_CREAT) && mkdir(BPFCTL_LOCK_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = open(path, flags | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* Takes op (LOCK_EX or LOCK_SH) without waiting: -EBUSY, *holder read, if a server holds it. */
static int lock_take(int fd, int op, pid_t *holder)
{
	char buf[16] = {0};

	if (!flock(fd, op | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	*holder = pread(fd, buf, sizeof(buf) - 1, 0) > 0 ? (pid_t)atoi(buf) : 0;
	return -EBUSY;
}

int bpfctl_server_lock(const char *ifname, pid_t *holder)
{
	int fd = lock_open(ifname, O_RDWR | O_CREAT), err, n;
	char pid[16];

	if (fd < 0)
		return fd;
	err = lock_take(fd, LOCK_EX, holder);
	if (err)
		goto out_close_fd;
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		err = -errno;
		goto out_close_fd;
	}
	return fd;
out_close_fd:
	close(fd);
	return err;
}

int bpfctl_server_running(const char *ifname, pid_t *holder)
{
	int fd = lock_open(ifname, O_RDONLY), err;

	if (fd == -ENOENT)
		return 0; /* no server ever ran on it since boot */
	if (fd < 0)
		return fd;
	err = lock_take(fd, LOCK_SH, holder);
	close(fd); /* lets go of our own shared lock, if we took it */
	return err;
}
