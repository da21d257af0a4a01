/* SPDX-License-Identifier: MIT */
/* Starts an xkv-server for a test, and always stops it by its PID. */
#ifndef XKV_TEST_SERVER_PROC_H
#define XKV_TEST_SERVER_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct server_proc {
	const char *bin;   /* set before start: the server binary, or NULL for XKV_SERVER_BIN */
	const char *netns; /* set before start: run it in this network namespace, or NULL */
	const char *host;  /* set before start: its address as the client sees it; NULL: 127.0.0.1 */
	uint16_t port;	   /* set before start, or 0 for one of its own */
	pid_t pid;
	int term_signal;   /* after stop: the signal that ended it, 0 if it exited */
	char out_path[64]; /* its stdout: the counters it prints when it stops */
	char addr[64];	   /* "HOST:PORT", set by start: server_addr */
};

/*
 * Starts bin (XKV_SERVER_BIN) with args (NULL-terminated) plus --port; waits until it
 * answers a GET sent from the calling process's network namespace.
 */
int server_start(struct server_proc *s, const char *const *args);

/* A variable tests/server/run-in-netns.sh sets, e.g. XKV_NS_SERVER; the test fails without. */
const char *netns_env(const char *name);

/*
 * The usual start of a test in run-in-netns.sh's namespaces: *s made to run in the server
 * host and be reached at its address, allow set to "CLIENT_IP/32", this thread entered
 * into the client host.
 */
void netns_test_setup(struct server_proc *s, char allow[64]);

/* Enters the network namespace /run/netns/name (this thread). Returns 0 or -errno. */
int netns_enter(const char *name);

/*
 * SIGTERM, wait; returns its exit status, or -1 if a signal ended it (term_signal says
 * which) or it had to be killed. Idempotent.
 */
int server_stop(struct server_proc *s);

/*
 * After server_stop: the sum of every "<what>: N" line of its output, -1 if none.
 * what matches a whole name or its end after a space ("put" is every "worker W put"),
 * but a "worker W queue Q name" line only whole: its figures are already in the
 * "worker W name" and "queue Q name" lines.
 */
long server_counter(const struct server_proc *s, const char *what);

/*
 * While it runs: the same sum over what `LOADER stats --iface IFACE` prints, run in
 * its namespace; -1 if none or the loader failed.
 */
long server_live_counter(const struct server_proc *s, const char *loader, const char *iface,
			 const char *what);

/* "HOST:PORT" of a started server; it stays put, so threads may share it. */
const char *server_addr(const struct server_proc *s);

#endif /* XKV_TEST_SERVER_PROC_H */
