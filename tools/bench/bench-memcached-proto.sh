#!/usr/bin/env bash
# make bench-memcached: xkv-server speaking memcached's protocol against memcached, one
# worker and one thread each, in one run on one veth pair (a client host and a server
# host, two namespaces); the server pinned to CPU 0, the client to CPU 1:
#   a. UDP GETs (ASCII, 10,000 keys of 16 B, 64 B values) through xkv's XDP path
#      (--backend xdp --memcached-port) and to memcached -U: xkv-bench's AF_XDP client
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
#   BENCH_MC_SHORT=1   short steps: checks the script in ~20 s; its numbers mean nothing
#   BENCH_MC_SERVERS   the servers to run, of "xkv memcached" (default both): memcached
#                      alone checks the script where xkv-server has no memcached yet
set -euo pipefail

usage="usage: bench-memcached-proto.sh BUILD_DIR [SLO_US] [RUNS]"
build=$(cd "${1:?$usage}" && pwd)
slo_us=${2:-1000}
runs=${3:-2}
here=$(dirname "$0")
out=$build/bench-memcached
servers=(${BENCH_MC_SERVERS:-xkv memcached})
port=11211
if [ "${BENCH_MC_SHORT:-0}" = 1 ]; then
	sweep_step_s=0.3 tcp_s=2 runs=1
else
	sweep_step_s=1 tcp_s=10
fi
conns=16

. "$here/server-host.sh"
. "$here/bench-lib.sh"
ns_s="xkvmc-$$-s" ns_c="xkvmc-$$-c" if_s="xms$$" if_c="xmc$$" ip_s=10.212.0.1 ip_c=10.212.0.2
trap server_host_down EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

memcached=$(command -v memcached) || { echo "bench-memcached-proto.sh: no memcached" >&2; exit 1; }
memcaslap=$(command -v memcaslap) ||
	{ echo "bench-memcached-proto.sh: no memcaslap (libmemcached-tools)" >&2; exit 1; }
steps=$((${#servers[@]} * runs * 2 + 1))
bench_start bench-memcached-proto.sh

# The server NAME as a command: on the server host, pinned to CPU 0, memcached's port
# open over UDP and TCP
server_command() {
	case $1 in
	xkv) echo "$build/xkv-server" --backend xdp --iface "$if_s" --workers 1 \
		--allow "$ip_c/32" --memcached-port "$port" --memory 256M ;;
	memcached) echo "$memcached" -u root -U "$port" -p "$port" -t 1 -m 256 -l "$ip_s" ;;
	esac
}

for run in $(seq "$runs"); do
	for name in "${servers[@]}"; do
		server_port=$port
		# shellcheck disable=SC2046 # the command is words
		server_run "$name-$run" memcached taskset -c 0 $(server_command "$name")
		progress "$name, run $run: UDP GETs, AF_XDP client, sweep, SLO p99 <= $slo_us us"
		in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:$port" \
			--protocol memcached --transport xdp --iface "$if_c" --keys 10000 \
			--key-size 16 --value-size 64 --get-ratio 1 --sweep --slo-us "$slo_us" \
			--rate 5000 --duration "$sweep_step_s" --label "$name-udp" \
			--json >"$out/udp-$name-$run.json"
		progress "$name, run $run: TCP, memcaslap, $conns connections, $tcp_s s"
		in_client taskset -c 1 "$memcaslap" --servers="$ip_s:$port" --threads=1 \
			--concurrency="$conns" --time="${tcp_s}s" --fixed_size=64 \
			>"$out/tcp-$name-$run.txt" 2>&1 ||
			{ echo "memcaslap against $name: $(tail -n 5 "$out/tcp-$name-$run.txt")" >&2; exit 1; }
		server_stop
	done
done

progress "xkv-sim's ceiling, the table"
/usr/bin/python3 - "$out" "$build/xkv-sim" "$slo_us" "$runs" "${servers[@]}" <<'PY'
import json, re, subprocess, sys
out, sim, slo, runs, servers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]

def udp(name):
    return [json.load(open(f"{out}/udp-{name}-{r}.json")) for r in range(1, runs + 1)]

def tcp(name):
    """memcaslap's TPS of each run (its last line: Run time: ... TPS: N Net_rate: ...)"""
    rates = []
    for r in range(1, runs + 1):
        m = re.findall(r"TPS: (\d+)", open(f"{out}/tcp-{name}-{r}.txt").read())
        rates.append(int(m[-1]) if m else 0)
    return rates

found, tps = {}, {}
print(f"\nbest of {runs} runs (min..max); UDP: the highest GET rate whose p99 <= {slo} us "
      f"(AF_XDP client; errors: wrong answers in every step of the sweeps); TCP: memcaslap's "
      f"ops/s")
print(f"{'server':<11}{'UDP ops/s':>11}{'min..max':>18}{'errors':>7}"
      f"{'TCP ops/s':>11}{'min..max':>18}")
for name in servers:
    u = udp(name)
    s = [r["rate_found"] for r in u]
    t = tcp(name)
    found[name], tps[name] = max(s), max(t)
    print(f"{name:<11}{max(s):>11.0f}{min(s):>9.0f}..{max(s):<7.0f}"
          f"{sum(step['errors'] for r in u for step in r['steps']):>7}"
          f"{max(t):>11}{min(t):>9}..{max(t):<7}")

def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"

if "xkv" in found and "memcached" in found:
    print(f"\nxkv/memcached: UDP {ratio(found['xkv'], found['memcached'])} (target >= 2), "
          f"TCP {ratio(tps['xkv'], tps['memcached'])} (target >= 1)")
r = json.loads(subprocess.run([sim, "--cores", "1", "--policy", "crew", "--sweep", "--json"],
                              check=True, capture_output=True, text=True).stdout)["sweep"]
print(f"xkv-sim, 1 core, its C-4 model (service U[400, 800] ns + 100 ns, SLO 10x the mean): "
      f"{r['max_mrps'] * 1e6:.0f} ops/s: the server's queue alone, no client, veth or "
      f"protocol costs; a ceiling, not a prediction of this client's figure")
print("Client and server share 2 cores and, on veth, each side's receive runs on the other's "
      "CPU: read ratios, not absolutes (docs/DESIGN.md).")
PY
echo "JSON and logs in $out; $((SECONDS - start)) s"
