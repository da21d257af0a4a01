// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

static enum bpfctl_log_level log_level = BPFCTL_LOG_INFO;

static void log_print(enum bpfctl_log_level level, const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	vfprintf(stderr, fmt, ap);
}

void bpfctl_log(enum bpfctl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_print(level, fmt, ap);
	va_end(ap);
}

/* libbpf warns about failures we report ourselves, with a reason: show its words only at debug */
static int libbpf_print(enum libbpf_print_level level __attribute__((unused)), const char *fmt,
			va_list ap)
{
	log_print(BPFCTL_LOG_DEBUG, fmt, ap);
	return 0;
}

void bpfctl_log_set_level(enum bpfctl_log_level level)
{
	log_level = level;
	libbpf_set_print(libbpf_print);
}
