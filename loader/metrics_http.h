/* SPDX-License-Identifier: MIT */
/*
 * `xkv-loader metrics`: an HTTP endpoint (libmicrohttpd) where Prometheus scrapes an
 * interface's snapshot in its text format (prometheus.h) at /metrics.
 */
#ifndef XKV_LOADER_METRICS_HTTP_H
#define XKV_LOADER_METRICS_HTTP_H

#define METRICS_LISTEN_DEFAULT "127.0.0.1:9411"

/*
 * Serves ifname's metrics on listen ("ADDR:PORT", "[ADDR6]:PORT") until SIGINT or
 * SIGTERM: 0 then, or -errno after saying what failed (-EINVAL: listen unreadable).
 */
int metrics_serve(const char *ifname, const char *listen);

#endif /* XKV_LOADER_METRICS_HTTP_H */
