#!/usr/bin/env bash
# The load generator's own ceiling, side by side in one run: xkv-server --backend xdp
# (with its store, then --echo: the same path without the store) on a server host,
# driven from a client host by xkv-bench over kernel UDP and over AF_XDP, closed
# loop, RUNS runs of SECONDS each; then one open-loop SLO sweep per client. The
# medians go to stdout, every run's JSON and the sweeps' CSV to OUT_DIR.
# Everything it makes (namespaces, links, pins, processes) goes on every way out.
#   [XKV_BENCH_SMOKE=1] tools/bench/compare_clients.sh BUILD_DIR OUT_DIR [RUNS] [SECONDS]
#                                                      [SWEEP_ARGS...]
# The smoke mode (bench-lib.sh): one run of 0.2 s, sweeps of one 0.2 s step, unless given.
set -euo pipefail

build=$(cd "${1:?usage: compare_clients.sh BUILD_DIR OUT_DIR [RUNS] [SECONDS] [SWEEP...]}" && pwd)
out=${2:?usage: compare_clients.sh BUILD_DIR OUT_DIR [RUNS] [SECONDS] [SWEEP...]}
. "$(dirname "$0")/server-host.sh"
. "$(dirname "$0")/bench-lib.sh"
if bench_smoke; then
	runs=${3:-1} seconds=${4:-$SMOKE_S}
else
	runs=${3:-3} seconds=${4:-5}
fi
shift $(($# < 4 ? $# : 4))
sweep_args=("$@")
if [ ${#sweep_args[@]} -eq 0 ]; then
	# shellcheck disable=SC2207 # sweep_max's options are words; xkv-bench starts at 1000/s
	sweep_args=(--slo-us 1000 $(sweep_max 1000))
	if bench_smoke; then sweep_args+=(--duration "$SMOKE_S"); fi
fi
ns_s="xkvcmp-$$-s" ns_c="xkvcmp-$$-c" if_s="xms$$" if_c="xmc$$" ip_s=10.205.0.1 ip_c=10.205.0.2
trap server_host_down EXIT INT TERM

if [ "$(id -u)" -ne 0 ]; then
	echo "compare_clients.sh: needs root (namespaces, XDP, AF_XDP)" >&2
	exit 1
fi
mkdir -p "$out"
netns_pair_up

# the server pins its worker to CPU 0; the client runs on the other CPU
bench() { in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s" "$@"; }
client_args() { if [ "$1" = xdp ]; then echo --transport xdp --iface "$if_c"; fi; }

workload=(--keys 10000 --key-size 16 --value-size 64 --get-ratio 0.95)
for server in store echo; do
	# shellcheck disable=SC2046 # no word at all for the store
	server_start "server-$server" $([ $server = echo ] && echo --echo)
	for client in udp xdp; do
		for run in $(seq "$runs"); do
			# shellcheck disable=SC2046 # the transport options are words
			bench $(client_args $client) "${workload[@]}" --depth 64 \
				--duration "$seconds" --label "$client-$server" --json \
				>"$out/$client-$server-$run.json"
		done
	done
	if [ $server = store ]; then
		for client in udp xdp; do
			# shellcheck disable=SC2046
			bench $(client_args $client) "${workload[@]}" --sweep "${sweep_args[@]}" \
				--label "$client" --csv "$out/sweep-$client.csv" \
				>"$out/sweep-$client.txt"
		done
	fi
	server_stop
done

/usr/bin/python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def runs_of(name):
    return [json.load(open(f"{out}/{name}-{i}.json"))["all"] for i in range(1, runs + 1)]
med = {}
print(f"closed loop, depth 64, medians of {runs} runs (client on CPU 1, server worker on CPU 0)")
print(f"{'client':<7}{'server':<7}{'ops/s':>10}{'min..max':>20}{'p50 us':>9}{'p99 us':>9}"
      f"{'lost':>6}{'errors':>7}")
for client in ("udp", "xdp"):
    for server in ("store", "echo"):
        r = runs_of(f"{client}-{server}")
        ops = [a["ops_per_s"] for a in r]
        med[client, server] = statistics.median(ops)
        print(f"{client:<7}{server:<7}{med[client, server]:>10.0f}"
              f"{min(ops):>10.0f}..{max(ops):<9.0f}"
              f"{statistics.median(a['p50_us'] for a in r):>9.1f}"
              f"{statistics.median(a['p99_us'] for a in r):>9.1f}"
              f"{sum(a['lost'] for a in r):>6}{sum(a['errors'] for a in r):>7}")
for client in ("udp", "xdp"):
    print(f"{client}: xkv / echo ceiling {med[client, 'store'] / med[client, 'echo']:.2f}")
print(f"AF_XDP client / UDP client: store {med['xdp', 'store'] / med['udp', 'store']:.2f}x, "
      f"echo {med['xdp', 'echo'] / med['udp', 'echo']:.2f}x")
PY
for client in udp xdp; do
	echo
	cat "$out/sweep-$client.txt"
done
