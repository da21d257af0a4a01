#!/usr/bin/env bash
# xkv-loader metrics (docs/LOADER.md, "Prometheus"): an XDP server (xkv policy, two
# workers) on a server host (tools/netns-pair.sh) serves a known load, then on that host
# `xkv-loader metrics` serves its counters. promtool check metrics passes on what it
# serves; the values are `xkv-loader stats --json`'s; Debian's prometheus, started on
# the server host with a scrape every 0.2 s, gives the requests steered and memcached's
# gets back through its query API, and the latency histogram's count; /other is 404,
# POST 405, a bad --listen a usage error. Every process is stopped by its pid, the hosts
# removed, on every way out.
#   metrics.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: metrics.sh BUILD_DIR}" && pwd)
here=$(dirname "$0")
. "$here/../../tools/bench/server-host.sh"
. "$here/../skip.sh"
need_xdp_hosts
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip "Debian's prometheus is not installed (make deps installs it)"
ns_s="xkvpm-$$-s" ns_c="xkvpm-$$-c" if_s="xpm$$" if_c="xpmc$$" ip_s=10.206.0.1 ip_c=10.206.0.2
out=$(mktemp -d /tmp/xkv-metrics.XXXXXX)
metrics_pid= prom_pid=

cleanup() {
	[ -z "$prom_pid" ] || stop_pid "$prom_pid" 10
	[ -z "$metrics_pid" ] || stop_pid "$metrics_pid" 10
	server_host_down
	[ -n "${KEEP:-}" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

metrics_port=9411 prom_port=9090 # the server host's own loopback: nothing else is there
url=http://127.0.0.1:$metrics_port

# http METHOD PATH FILE: the endpoint's status code, its body in FILE, from the server host
http() {
	in_server /usr/bin/python3 - "$1" "$url$2" "$3" <<'PY'
import sys, urllib.error, urllib.request
method, url, path = sys.argv[1:]
try:
    r = urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=5)
    code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
open(path, "wb").write(body)
print(code)
PY
}

netns_pair_up
server_start xdp --workers 2 --policy xkv
in_client "$build/xkv-bench" --server "$ip_s" --keys 100 --get-ratio 0.9 --duration 0.5 \
	--json >"$out/bench.json" 2>"$out/bench.err" || fail "xkv-bench: $(cat "$out/bench.err")"
# memcached over TCP: 7 gets, for a counter that is known exactly
in_client /usr/bin/python3 - "$ip_s" <<'PY' || fail "memcached over TCP"
import socket, sys
s = socket.create_connection((sys.argv[1], 11211), timeout=5)
f = s.makefile("rb")
for i in range(7):
    s.sendall(b"get metrics%d\r\n" % i)
    assert f.readline() == b"END\r\n"
PY
sleep 0.3 # the workers publish every 0.1 s: the counters settle

! in_server "$build/xkv-loader" metrics --iface "$if_s" --listen nonsense 2>"$out/usage.err" ||
	fail "--listen nonsense accepted"
grep -q "not ADDR:PORT" "$out/usage.err" || fail "--listen nonsense: $(cat "$out/usage.err")"

nsenter --net="/run/netns/$ns_s" "$build/xkv-loader" metrics --iface "$if_s" \
	--listen "127.0.0.1:$metrics_port" >"$out/metrics.log" 2>&1 &
metrics_pid=$!
for _ in $(seq 50); do
	[ "$(http GET /metrics "$out/metrics.txt" 2>/dev/null)" = 200 ] && break
	kill -0 "$metrics_pid" 2>/dev/null || fail "xkv-loader metrics died: $(cat "$out/metrics.log")"
	sleep 0.1
done
[ -s "$out/metrics.txt" ] || fail "no /metrics: $(cat "$out/metrics.log")"
promtool check metrics <"$out/metrics.txt" >"$out/promtool.txt" 2>&1 ||
	fail "promtool check metrics: $(head -n 20 "$out/promtool.txt")"
echo "ok   promtool check metrics: $(wc -l <"$out/metrics.txt") lines, no problem"

[ "$(http GET /other /dev/null)" = 404 ] || fail "/other is not 404"
[ "$(http POST /metrics /dev/null)" = 405 ] || fail "POST is not 405"
echo "ok   /other 404, POST 405"

in_server "$build/xkv-loader" stats --iface "$if_s" --json >"$out/stats.json" ||
	fail "xkv-loader stats"
/usr/bin/python3 - "$out" <<'PY' || fail "/metrics is not stats: $(head -c 2000 "$out/metrics.txt")"
import json, re, sys
out = sys.argv[1]
stats = json.load(open(f"{out}/stats.json"))
samples = {}
for line in open(f"{out}/metrics.txt"):
    if line.startswith("#"):
        continue
    name, value = line.rsplit(" ", 1)
    samples[name] = float(value)

def metric(name, **labels):
    key = name + ("{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else "")
    return samples[key]

steered = sum(stats["steered"])
assert steered > 0, "nothing steered"
# the server is idle: nothing moved between the two reads
assert sum(metric("xkv_xdp_steered_total", worker=w) for w in range(2)) == steered
for reason, n in stats["drops"].items():
    assert metric("xkv_xdp_dropped_total", reason=reason) == n, reason
for w, counters in enumerate(stats["workers"]):
    assert metric("xkv_worker_get_total", worker=w) == counters["get"]
    assert metric("xkv_worker_memcached_cmd_get_total", worker=w) == counters["memcached"]["cmd_get"]
    assert metric("xkv_worker_sockets", worker=w) == counters["sockets"]
assert sum(metric("xkv_worker_memcached_cmd_get_total", worker=w) for w in range(2)) == 7
assert metric("xkv_server_store_items") == stats["server"]["store"]["items"]
gets = sum(h["count"] for h in stats["latency"]
           if "worker" not in h and h["op"] == "get" and h["interval"] == "total")
counts = [v for k, v in samples.items()
          if k.startswith('xkv_request_duration_seconds_count{op="get"') and 'interval="total"' in k]
assert sum(counts) == gets > 0, (sum(counts), gets)
print(f"ok   /metrics is stats: {steered:.0f} steered, 7 memcached gets, {gets} GETs timed")
PY

cat >"$out/prometheus.yml" <<EOF
global:
  scrape_interval: 200ms
  scrape_timeout: 150ms
scrape_configs:
  - job_name: xkv
    static_configs:
      - targets: ['127.0.0.1:$metrics_port']
EOF
nsenter --net="/run/netns/$ns_s" prometheus --config.file="$out/prometheus.yml" \
	--storage.tsdb.path="$out/tsdb" --web.listen-address="127.0.0.1:$prom_port" \
	>"$out/prometheus.log" 2>&1 &
prom_pid=$!
# query EXPR: its one value through the query API, once prometheus has it
query() {
	in_server /usr/bin/python3 - "$prom_port" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
port, expr = sys.argv[1:]
q = urllib.parse.urlencode({"query": expr})
r = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?{q}", timeout=2))
result = r["data"]["result"]
print(result[0]["value"][1] if result else "")
PY
}
steered=$(/usr/bin/python3 -c "import json; print(sum(json.load(open('$out/stats.json'))['steered']))")
got=
for _ in $(seq 100); do
	got=$(query 'sum(xkv_xdp_steered_total)' 2>/dev/null || true)
	[ -n "$got" ] && break
	kill -0 "$prom_pid" 2>/dev/null || fail "prometheus died: $(tail -n 20 "$out/prometheus.log")"
	sleep 0.2
done
[ "$got" = "$steered" ] || fail "prometheus: sum(xkv_xdp_steered_total) '$got', not $steered"
[ "$(query 'sum(xkv_worker_memcached_cmd_get_total)')" = 7 ] ||
	fail "prometheus: memcached gets $(query 'sum(xkv_worker_memcached_cmd_get_total)'), not 7"
[ "$(query 'up{job="xkv"}')" = 1 ] || fail "prometheus: the target is not up"
echo "ok   prometheus scraped it: sum(xkv_xdp_steered_total) $got, 7 memcached gets"

stop_pid "$prom_pid" 10
prom_pid=
stop_pid "$metrics_pid" 10
metrics_pid=
[ -z "$stopped" ] || fail "xkv-loader metrics: $stopped: $(cat "$out/metrics.log")"
server_stop || fail "the server did not stop cleanly"
echo "metrics: passed"
