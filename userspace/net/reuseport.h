/* SPDX-License-Identifier: MIT */
/*
 * Kernel steering for the io_uring backend: the SK_REUSEPORT program of
 * bpf/reuseport.bpf.c over the workers' UDP sockets, its config, and the queue
 * depths it shares with the workers.
 */
#ifndef XKV_REUSEPORT_H
#define XKV_REUSEPORT_H

#include <stdint.h>
#include <xkv/maps.h>

struct reuseport_bpf;

struct xkv_reuseport {
	struct reuseport_bpf *skel;
	struct xkv_qdepth *qdepth; /* mmapped: the program adds, workers subtract */
	size_t qdepth_len;
};

/* Loads the program with its config. Returns 0 or -errno. */
int xkv_reuseport_load(struct xkv_reuseport *r, uint16_t port, uint32_t workers,
		       enum xkv_policy policy);

/* The program, for the group's first socket to attach before it binds. */
int xkv_reuseport_prog_fd(const struct xkv_reuseport *r);

/* Makes fd (bound in the program's group) worker's socket. Until then the program
 * drops that worker's requests and counts them under no_socket. */
int xkv_reuseport_add(struct xkv_reuseport *r, uint32_t worker, int fd);

/* A new fd for the program's map of that name (bpf/maps.bpf.h), or -errno. */
int xkv_reuseport_map_fd(const struct xkv_reuseport *r, const char *name);

/* Requests the program counted as dropped, by reason (sums over CPUs). */
uint64_t xkv_reuseport_dropped(const struct xkv_reuseport *r, uint32_t reason);

void xkv_reuseport_close(struct xkv_reuseport *r);

#endif /* XKV_REUSEPORT_H */
