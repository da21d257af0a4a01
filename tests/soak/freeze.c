// SPDX-License-Identifier: MIT
/*
 * xkv-soak-freeze: stops one thread of a running process for a while, and only that
 * thread (tests/soak/soak.sh stops one xkv-server worker mid-soak). SIGSTOP would stop
 * every thread of the process; ptrace stops one: PTRACE_SEIZE attaches without
 * stopping, PTRACE_INTERRUPT stops the thread, and PTRACE_DETACH lets it go on where
 * it was. Should this program die meanwhile, the kernel detaches and the thread runs
 * again: nothing is left stopped.
 *   xkv-soak-freeze --tid TID --ms MS
 * It stops the thread only in user space, where a busy worker runs its rounds: one
 * caught in a system call (a worker asleep in poll(2) says so first, and nobody
 * waits for it) is let go on and tried again, up to STOP_TRIES times, 1 ms apart.
 * Prints "stopped tid TID from A to B ns (N us), T tries": CLOCK_MONOTONIC from the
 * moment the thread was seen stopped to just before the detach, so it was stopped at
 * least that long (a little longer); exit 0, 1 if ptrace failed or the thread was never
 * caught in user space, 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define STOP_TRIES 1000

/* Whether the stopped thread tid was stopped in user space: its syscall file says -1. */
static bool in_user_space(long tid)
{
	char path[64], line[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return strncmp(line, "-1 ", 3) == 0;
}

/* Interrupts tid and waits until it stops. Returns 0, or 1 having said why. */
static int stop(long tid)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL)) {
		fprintf(stderr, "xkv-soak-freeze: PTRACE_INTERRUPT %ld: %s\n", tid,
			strerror(errno));
		return 1;
	}
	/* __WALL: the tracee is a thread, not a child of ours */
	if (waitpid((pid_t)tid, &status, __WALL) != (pid_t)tid || !WIFSTOPPED(status)) {
		fprintf(stderr, "xkv-soak-freeze: thread %ld did not stop\n", tid);
		return 1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: xkv-soak-freeze --tid TID --ms MS\n"
		     "Stops thread TID (alone, not its process) for MS milliseconds.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"tid", required_argument, NULL, 't'},
		{"ms", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	long tid = 0, ms = -1;
	uint64_t stopped, resumed;
	struct timespec nap;
	int opt, tries = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			tid = strtol(optarg, NULL, 10);
			break;
		case 'm':
			ms = strtol(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || tid <= 0 || ms < 0) {
		usage(stderr);
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL)) {
		fprintf(stderr, "xkv-soak-freeze: PTRACE_SEIZE %ld: %s\n", tid, strerror(errno));
		return 1;
	}
	for (;;) {
		if (stop(tid))
			return 1;
		if (in_user_space(tid))
			break;
		if (++tries == STOP_TRIES) {
			fprintf(stderr, "xkv-soak-freeze: thread %ld was in a system call at each "
					"of %d stops\n", tid, STOP_TRIES);
			return 1;
		}
		/* a system call interrupted by the stop is restarted */
		if (ptrace(PTRACE_CONT, (pid_t)tid, NULL, NULL)) {
			fprintf(stderr, "xkv-soak-freeze: PTRACE_CONT %ld: %s\n", tid,
				strerror(errno));
			return 1;
		}
		usleep(1000);
	}
	stopped = now_ns();
	nap = (struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
	/* before the detach: the thread is stopped from stopped to resumed at least */
	resumed = now_ns();
	if (ptrace(PTRACE_DETACH, (pid_t)tid, NULL, NULL)) {
		fprintf(stderr, "xkv-soak-freeze: PTRACE_DETACH %ld: %s\n", tid, strerror(errno));
		return 1;
	}
	printf("stopped tid %ld from %" PRIu64 " to %" PRIu64 " ns (%" PRIu64 " us), %d tries\n",
	       tid, stopped, resumed, (resumed - stopped) / 1000, tries + 1);
	return 0;
}
