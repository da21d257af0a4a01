#!/usr/bin/env bash
# make bench-memcached: xkv-server speaking memcached's protocol against memcached, one
# worker and one thread each, in one run on one veth pair (a client host and a server
# host, two namespaces); the server pinned to CPU 0, the client to CPU 1:
#   a. UDP GETs (ASCII, 10,000 keys of 16 B, 64 B values) through xkv's XDP path
#      (--backend xdp --memcached-port; --trust the client: memcached's UDP has no token,
#      and a hit's reply is over 3x its request) and to memcached -U: xkv-bench's AF_XDP client
#      (--protocol memcached), the SLO search (the highest rate whose p99 <= SLO_US);
#      target: xkv at least 2x memcached;
#   b. TCP, memcached's own generator memcaslap (libmemcached-tools; its default mix, 90 %
#      get, 64 B values, CONNS connections on one thread) against xkv's TCP listener
#      and memcached -p, for TCP_SECONDS: throughput (TPS); target: xkv at least 1x;
#   c. beside them, xkv-sim's ceiling for one core in its C-4 model (docs/SIMULATION.md):
#      the server's queue alone, no client, veth or protocol costs.
# Run r of each server before run r+1 of either (the VM's noisy spells, docs/BENCH.md);
# the best of RUNS each. Everything (JSON, logs) in BUILD_DIR/bench-memcached; everything
# it makes (namespaces, links, pins, processes) goes on every way out.
#   tools/bench/bench-memcached-proto.sh BUILD_DIR [SLO_US] [RUNS]
# Environment:
#   XKV_BENCH_SMOKE=1  the smoke mode (bench-lib.sh): one run, TCP for 1 s
#   BENCH_MC_SERVERS   the servers to run, of "xkv memcached" (default both): memcached
#                      alone checks the script where xkv-server has no memcached yet
#   BENCH_MC_PARTS     the parts to run, of "udp tcp" (default both)
set -euo pipefail

usage="usage: bench-memcached-proto.sh BUILD_DIR [SLO_US] [RUNS]"
build=$(cd "${1:?$usage}" && pwd)
slo_us=${2:-1000}
runs=${3:-2}
here=$(dirname "$0")
read -r -a servers <<<"${BENCH_MC_SERVERS:-xkv memcached}"
read -r -a parts <<<"${BENCH_MC_PARTS:-udp tcp}"
port=11211
. "$here/server-host.sh"
. "$here/bench-lib.sh"
out=$(bench_out "$build" bench-memcached)
if bench_smoke; then
	sweep_step_s=$SMOKE_S tcp_s=1 runs=1 # memcaslap counts whole seconds
else
	sweep_step_s=1 tcp_s=10
fi
conns=16
ns_s="xkvmc-$$-s" ns_c="xkvmc-$$-c" if_s="xms$$" if_c="xmc$$" ip_s=10.212.0.1 ip_c=10.212.0.2
trap server_host_down EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

memcached=$(command -v memcached) || { echo "bench-memcached-proto.sh: no memcached" >&2; exit 1; }
memcaslap=$(command -v memcaslap) ||
	{ echo "bench-memcached-proto.sh: no memcaslap (libmemcached-tools)" >&2; exit 1; }
steps=$((${#servers[@]} * runs * ${#parts[@]} + 1))
bench_start bench-memcached-proto.sh

# server NAME RUN: the server NAME on the server host, pinned to CPU 0, memcached's port
# open over UDP and TCP; up once it answers (xkv-server: its own protocol on 7411, which
# needs neither of memcached's)
server() {
	case $1 in
	xkv) server_port=7411 server_run "$1-$2" xkv taskset -c 0 "$build/xkv-server" \
		--backend xdp --iface "$if_s" --workers 1 --allow "$ip_c/32" --trust "$ip_c/32" \
		--memcached-port "$port" --memory 256M ;;
	memcached) server_port=$port server_run "$1-$2" memcached taskset -c 0 "$memcached" \
		-u root -U "$port" -p "$port" -t 1 -m 256 -l "$ip_s" ;;
	esac
}

# udp NAME RUN: the SLO search over UDP
udp() {
	progress "$1, run $2: UDP GETs, AF_XDP client, sweep, SLO p99 <= $slo_us us"
	# shellcheck disable=SC2046 # sweep_max's options are words
	in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:$port" --protocol memcached \
		--transport xdp --iface "$if_c" --keys 10000 --key-size 16 --value-size 64 \
		--get-ratio 1 --sweep --slo-us "$slo_us" --rate 5000 $(sweep_max 5000) \
		--duration "$sweep_step_s" --label "$1-udp" --json >"$out/udp-$1-$2.json"
}

# tcp NAME RUN: memcaslap over TCP
tcp() {
	progress "$1, run $2: TCP, memcaslap, $conns connections, $tcp_s s"
	in_client taskset -c 1 "$memcaslap" --servers="$ip_s:$port" --threads=1 \
		--concurrency="$conns" --time="${tcp_s}s" --fixed_size=64 >"$out/tcp-$1-$2.txt" 2>&1 ||
		{ echo "memcaslap against $1: $(tail -n 5 "$out/tcp-$1-$2.txt")" >&2; exit 1; }
}

for run in $(seq "$runs"); do
	for name in "${servers[@]}"; do
		server "$name" "$run"
		for part in "${parts[@]}"; do "$part" "$name" "$run"; done
		server_stop
	done
done

progress "xkv-sim's ceiling, the table"
/usr/bin/python3 - "$out" "$build/xkv-sim" "$slo_us" "$runs" "${parts[*]}" "${servers[@]}" <<'PY'
import json, re, subprocess, sys
out, sim, slo, runs, parts, servers = (sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
                                       sys.argv[5].split(), sys.argv[6:])

def udp(name, r):
    """the highest rate under the SLO, and the wrong answers in every step of the sweep"""
    j = json.load(open(f"{out}/udp-{name}-{r}.json"))
    return j["rate_found"], sum(step["errors"] for step in j["steps"])

def tcp(name, r):
    """memcaslap's throughput (its last line reads Run time: ... TPS: N Net_rate: ...), and
    the error replies it printed"""
    text = open(f"{out}/tcp-{name}-{r}.txt").read()
    m = re.findall(r"TPS: (\d+)", text)
    return (int(m[-1]) if m else 0), len(re.findall(r"ERROR", text))

titles = {"udp": f"UDP GETs: the highest rate whose p99 <= {slo} us (AF_XDP client); errors: "
                 "wrong answers in every step of the sweeps",
          "tcp": "TCP: memcaslap's ops/s (90 % get), one thread, one worker; errors: "
                 "error replies it printed"}
targets = {"udp": 2, "tcp": 1}
print(f"\nbest of {runs} runs (min..max)")
for part in parts:
    print(f"{titles[part]}\n{'server':<11}{'ops/s':>11}{'min..max':>20}{'errors':>8}")
    best = {}
    for name in servers:
        rates, errors = zip(*((udp if part == "udp" else tcp)(name, r)
                              for r in range(1, runs + 1)))
        best[name] = max(rates)
        print(f"{name:<11}{max(rates):>11.0f}{min(rates):>11.0f}..{max(rates):<7.0f}"
              f"{sum(errors):>8}")
    if "xkv" in best and "memcached" in best:
        ratio = f"{best['xkv'] / best['memcached']:.2f}" if best["memcached"] else "n/a"
        print(f"xkv/memcached: {ratio} (target >= {targets[part]})")
r = json.loads(subprocess.run([sim, "--cores", "1", "--policy", "crew", "--sweep", "--json"],
                              check=True, capture_output=True, text=True).stdout)["sweep"]
print(f"\nxkv-sim, 1 core, its C-4 model (service U[400, 800] ns + 100 ns, SLO 10x the "
      f"mean): {r['max_mrps'] * 1e6:.0f} ops/s:\nthe server's queue alone, no client, veth "
      f"or protocol costs; a ceiling, not a prediction of these figures.")
print("Client and server share 2 cores and, on veth, each side's receive runs on the other's "
      "CPU:\nread ratios, not absolutes (docs/DESIGN.md).")
PY
echo "JSON and logs in $out; $((SECONDS - start)) s"
