/* SPDX-License-Identifier: MIT */
/* One worker thread per core: pinning, shared by the server and the store benchmark. */
#ifndef XKV_PIN_H
#define XKV_PIN_H

#include <pthread.h>
#include <stdint.h>

/* Pins t to CPU index % CPUs online. Returns 0 or -errno. */
int xkv_pin_to_cpu(pthread_t t, uint32_t index);

#endif /* XKV_PIN_H */
