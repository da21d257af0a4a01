/* SPDX-License-Identifier: MIT */
/*
 * The one place bpfctl (and the tools over it) prints through: warnings always,
 * info by default, debug with -v. libbpf's own messages are routed here one level
 * lower, so its chatter only shows at debug.
 */
#ifndef XKV_BPFCTL_LOG_H
#define XKV_BPFCTL_LOG_H

enum bpfctl_log_level {
	BPFCTL_LOG_WARN,
	BPFCTL_LOG_INFO,
	BPFCTL_LOG_DEBUG,
};

/* Prints messages up to level (default BPFCTL_LOG_INFO) and installs the libbpf router. */
void bpfctl_log_set_level(enum bpfctl_log_level level);

void bpfctl_log(enum bpfctl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_warn(...)  bpfctl_log(BPFCTL_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  bpfctl_log(BPFCTL_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) bpfctl_log(BPFCTL_LOG_DEBUG, __VA_ARGS__)

#endif /* XKV_BPFCTL_LOG_H */
