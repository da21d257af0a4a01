// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "util/pin.h"

int xkv_pin_to_cpu(pthread_t t, uint32_t index)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(index % (cpus > 0 ? cpus : 1), &set);
	return -pthread_setaffinity_np(t, sizeof(set), &set);
}
