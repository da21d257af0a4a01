#!/usr/bin/env bash
# make demo (and the backend comparison of make bench): a server host and a client
# host, two network namespaces joined by a veth pair; xkv-server on the server side
# in turn as an echo (the XDP path without the store), with the XDP backend, and with
# the io_uring backend; the same closed-loop workload from the client side; one table.
# Everything it makes (namespaces, links, pins, processes) goes on every way out.
#   tools/demo.sh [BUILD_DIR] [SECONDS]
set -euo pipefail

build=${1:-build}
seconds=${2:-3}
id=$$
ns_s="xkvdemo-$id-s" ns_c="xkvdemo-$id-c" if_s="xd$id" if_c="xdc$id"
ip_s=10.202.0.1 ip_c=10.202.0.2
server_pid=
out=$(mktemp -d /tmp/xkv-demo.XXXXXX)

. "$(dirname "$0")/netns-pair.sh"

cleanup() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	netns_pair_down
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

say() { printf '\n== %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, XDP, AF_XDP)" >&2
	exit 1
fi

say "a server host ($ns_s, $ip_s) and a client host ($ns_c, $ip_c), joined by veth"
netns_pair_up

# One run: start the server (nsenter, not ip netns exec, so /sys/fs/bpf stays
# bpffs), wait until it answers, run the workload, stop it and keep its counters.
run_backend() {
	local label=$1 backend=$2
	shift 2
	nsenter --net="/run/netns/$ns_s" "$build/xkv-server" --backend "$backend" --workers 1 \
		"$@" >"$out/$label.server" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		ip netns exec "$ns_c" "$build/xkv-cli" -s "$ip_s" -t 50 -r 0 get demo:ping \
			>/dev/null 2>&1 && break
		[ $? -eq 1 ] && break # "not found": it answers
		sleep 0.1
	done
	if [ "$label" = xdp ]; then
		nsenter --net="/run/netns/$ns_s" "$build/xkv-loader" status --iface "$if_s"
	fi
	# the client on the other core than the server's worker (pinned to CPU 0)
	ip netns exec "$ns_c" taskset -c 1 "$build/xkv-bench" --server "$ip_s" \
		--duration "$seconds" --keys 10000 --get-ratio 0.95 --key-size 16 \
		--value-size 64 --depth 32 --label "$label" --json >"$out/$label.json"
	kill -TERM "$server_pid"
	wait "$server_pid" || true
	server_pid=
}

say "xkv-server --backend xdp --echo: the same path without the store, the ceiling"
run_backend echo xdp --iface "$if_s" --allow "$ip_c/32" --echo
say "xkv-server --backend xdp: the XDP program steers to AF_XDP sockets"
run_backend xdp xdp --iface "$if_s" --allow "$ip_c/32"
say "xkv-server --backend uring: kernel UDP sockets, io_uring, SK_REUSEPORT steering"
run_backend uring uring

say "results: ${seconds} s closed loop each, 95:5 GET:PUT, 16 B keys, 64 B values, 10,000 keys"
/usr/bin/python3 - "$out/echo.json" "$out/xdp.json" "$out/uring.json" <<'PY'
import json, sys
rows = [json.load(open(p)) for p in sys.argv[1:]]
print(f"{'backend':<8} {'ops/s':>9} {'p50 us':>8} {'p99 us':>8} {'p99.9 us':>9} {'lost':>5} {'errors':>6}")
for r in rows:
    a = r["all"]
    print(f"{r['label']:<8} {a['ops_per_s']:>9.0f} {a['p50_us']:>8.1f} {a['p99_us']:>8.1f} "
          f"{a['p999_us']:>9.1f} {a['lost']:>5} {a['errors']:>6}")
e, x, u = (r["all"] for r in rows)
print(f"\nxkv (XDP) / echo:  throughput {x['ops_per_s'] / e['ops_per_s']:.2f}x")
print(f"XDP / io_uring:    throughput {x['ops_per_s'] / u['ops_per_s']:.2f}x, "
      f"p99 {x['p99_us'] / u['p99_us']:.2f}x")
print("(echo answers GET 'not found': its GETs count as answered misses)")
print("Client and server share this machine's 2 cores and, on veth, each side's receive")
print("runs on the other's CPU: read the ratio, not the absolute figures (docs/DESIGN.md).")
PY
say "server counters that are not zero (xdp run)"
grep -E ': [1-9]' "$out/xdp.server" | grep -vE '^(worker 0 status|socket)' | head -20
