/* SPDX-License-Identifier: MIT */
/*
 * xkv-sim's cluster model (docs/SIMULATION.md, "The cluster model"): clients -> a
 * coherence directory -> N servers of c cores each, the keys placed by ketama. Without
 * the directory (CLUSTER_KETAMA) every request goes to its key's home; with it, the
 * hottest keys are replicated and a strategy of the directory's (bpf/dir_select/)
 * chooses a server of each one's replica set, fed by what the replies report.
 */
#ifndef XKV_SIM_CLUSTER_H
#define XKV_SIM_CLUSTER_H

#include "sim.h"

#define CLUSTER_SERVERS_MAX 32 /* the directory's (XKV_DIR_SERVERS): a set is a 32-bit mask */
#define CLUSTER_KETAMA_POINTS 160 /* per server, as twemproxy and xkv-cli place keys */

/* The directory's replica selection strategies, as in include/xkv/dir.h; ketama: none. */
#define CLUSTER_SELECTS(X)                                                                         \
	X(KETAMA, "ketama")                                                                        \
	X(ROUND_ROBIN, "round-robin")                                                              \
	X(LEAST_LOADED, "least-loaded")                                                            \
	X(PREDICT, "predict")                                                                      \
	X(C3, "c3")                                                                                \
	X(POPULARITY, "popularity")

enum cluster_select {
#define CLUSTER_SELECT_ENUM(name, str) CLUSTER_##name,
	CLUSTER_SELECTS(CLUSTER_SELECT_ENUM)
#undef CLUSTER_SELECT_ENUM
	CLUSTER_SELECT_END
};

int cluster_select_parse(const char *name, enum cluster_select *out);
const char *cluster_select_name(enum cluster_select s);

/* Pegasus's O(n log n): the keys the directory holds for n servers, ceil(n ln n). */
unsigned cluster_default_replicated(unsigned servers);

/* The ketama home of each of items keys (rank order) on servers servers, into home. */
void cluster_ketama_homes(unsigned servers, uint32_t items, uint8_t *home);

/* One run of the cluster model: cfg->servers >= 2. Returns 0, -EINVAL or -ENOMEM. */
int cluster_run(const struct sim_config *cfg, struct sim_results *res);

#endif
