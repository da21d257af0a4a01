/* SPDX-License-Identifier: MIT */
/*
 * A worker's part in the coherence directory's protocol before it serves a version 3
 * request (docs/DIRECTORY.md, "The servers"): the controller's notices applied to the
 * replicated set (engine/replicas.h) and answered; stray requests, steered for a key
 * this server does not hold replicated, sent to the key's home (Pegasus Sec. 6.6) or
 * served there as the unsteered requests they are.
 */
#ifndef XKV_ENGINE_DIR_SERVE_H
#define XKV_ENGINE_DIR_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/worker.h"

/*
 * Takes *m, a version 3 request from `from` (hash its key's), if it is the directory's
 * business alone: a notice (answered OK, or BAD_REQUEST, NO_MEMORY), a stray sent
 * home, or one refused. Else returns false and leaves in *m what to serve: the request
 * itself, or, for a stray at its home, its twin in plain without the steering.
 */
bool xkv_dir_serve_take(struct xkv_worker *w, const struct xkv_origin *from,
			const struct xkv_msg **m, struct xkv_msg *plain, uint64_t hash);

#endif /* XKV_ENGINE_DIR_SERVE_H */
