#!/usr/bin/env bash
# make demo: a server host and a client host, two network namespaces joined by a
# veth pair; xkv-server on the server side in turn as an echo (the XDP path without
# the store: the ceiling), with the XDP backend, and with the io_uring backend; each
# driven from the client side by xkv-bench's kernel-UDP client and by its AF_XDP
# client (a kernel-UDP client is the bottleneck, and hides what the server can do)
# with the same closed-loop workload; one table, every row against the echo measured
# with the same client in this run.
# Everything it makes (namespaces, links, pins, processes, the client's XDP program)
# goes on every way out.
#   tools/demo.sh [BUILD_DIR] [SECONDS]
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
seconds=${2:-3}
. "$(dirname "$0")/bench/server-host.sh"
ns_s="xkvdemo-$$-s" ns_c="xkvdemo-$$-c" if_s="xd$$" if_c="xdc$$" ip_s=10.202.0.1 ip_c=10.202.0.2

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, XDP, AF_XDP)" >&2
	exit 1
fi
out=$(mktemp -d /tmp/xkv-demo.XXXXXX)
cleanup() {
	server_host_down
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

say() { printf '\n== %s\n' "$*"; }

say "a server host ($ns_s, $ip_s) and a client host ($ns_c, $ip_c), joined by veth"
netns_pair_up
start=$SECONDS

# the server pins its worker to CPU 0: the client runs on another one
client_cpu=$(($(nproc) - 1))

# drive NAME: the workload from each client in turn, their JSON in $out/NAME-CLIENT.json
drive() {
	local name=$1 client transport
	for client in udp xdp; do
		transport=()
		[ $client = udp ] || transport=(--transport xdp --iface "$if_c")
		in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" \
			"${transport[@]}" --duration "$seconds" --keys 10000 --get-ratio 0.95 \
			--key-size 16 --value-size 64 --depth 32 --label "$name" --json \
			>"$out/$name-$client.json"
	done
}

say "xkv-server --backend xdp --echo: the same path without the store, the ceiling"
server_start echo --echo
drive echo
server_stop
say "xkv-server --backend xdp: the XDP program steers to AF_XDP sockets"
server_start xkv-xdp
in_server "$build/xkv-loader" status --iface "$if_s"
drive xkv-xdp
server_stop
say "xkv-server --backend uring: kernel UDP sockets, io_uring, SK_REUSEPORT steering"
server_run xkv-uring xkv "$build/xkv-server" --backend uring --workers 1 \
	--allow "$ip_c/32"
drive xkv-uring
server_stop

say "results: ${seconds} s closed loop each (depth 32), 95:5 GET:PUT, 16 B keys, 64 B values," \
	"10,000 keys"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
servers = ("echo", "xkv-xdp", "xkv-uring")
runs = {(c, s): json.load(open(f"{out}/{s}-{c}.json")) for c in ("udp", "xdp") for s in servers}
print(f"{'client':<7}{'server':<10}{'ops/s':>9}{'p50 us':>9}{'p99 us':>9}{'p99.9 us':>10}"
      f"{'lost':>6}{'errors':>7}{'/ echo':>8}")
for client in ("udp", "xdp"):
    echo = runs[client, "echo"]["all"]["ops_per_s"]
    for server in servers:
        a = runs[client, server]["all"]
        print(f"{client:<7}{server:<10}{a['ops_per_s']:>9.0f}{a['p50_us']:>9.1f}{a['p99_us']:>9.1f}"
              f"{a['p999_us']:>10.1f}{a['lost']:>6}{a['errors']:>7}{a['ops_per_s'] / echo:>8.2f}")
for client in ("udp", "xdp"):
    x, u = runs[client, "xkv-xdp"]["all"], runs[client, "xkv-uring"]["all"]
    print(f"{client} client, XDP / io_uring: throughput {x['ops_per_s'] / u['ops_per_s']:.2f}x, "
          f"p99 {x['p99_us'] / u['p99_us']:.2f}x")
print(f"AF_XDP client in {runs['xdp', 'echo']['xdp']['mode']} mode. "
      "echo answers GET 'not found': its GETs count as answered misses.")
print("Client and server share this machine's 2 cores and, on veth, each side's receive")
print("runs on the other's CPU: read the ratios, not the absolute figures (docs/DESIGN.md).")
PY
say "server counters that are not zero (xkv-xdp run)"
grep -E ': [1-9]' "$out/xkv-xdp.log" | grep -vE '^(worker 0 status|socket)' | head -20
echo "demo: $((SECONDS - start)) s"
