#!/usr/bin/env bash
# make bench: one generator (xkv-bench), one veth pair between a client host and a
# server host (two namespaces), one workload (10,000 keys of 16 B, 64 B values, 95:5
# GET:PUT), over each client transport (kernel UDP, AF_XDP) against each server:
# xkv-server --backend xdp --echo (the ceiling), xkv-server --backend xdp, xkv-server
# --backend uring, and memcached (UDP, ASCII). For each pair: the highest rate whose
# p99 meets one SLO (an open-loop sweep, a rate failing after two misses in a row) and
# the p99 at one equal offered load, each the best of RUNS runs: this VM stalls a vCPU
# for milliseconds several times a second (docs/BENCH.md), which only ever adds
# latency; the table shows the spread too.
# Beside them, xkv-server --backend xdp over two rx queues: a second veth pair of two
# queues a side between the same hosts, the AF_XDP client on --queues 2 --threads 2,
# and for comparison the same two threads on the one-queue pair (docs/BENCH.md).
# One table with the ratios; every run's CSV and JSON, and plots of the first run's
# sweeps, in BUILD_DIR/bench.
# Steps of 1 s from 5000/s and a 1 ms SLO keep a stall's few late requests under 1 %.
# Everything it makes (namespaces, links, pins, processes) goes on every way out.
#   [XKV_BENCH_SMOKE=1] tools/bench/bench-all.sh BUILD_DIR [SLO_US] [RATE] [STEP_SECONDS] [RUNS]
# The smoke mode (bench-lib.sh): steps and open loops of 0.2 s, one run, unless given.
set -euo pipefail

usage="usage: bench-all.sh BUILD_DIR [SLO_US] [RATE] [STEP_SECONDS] [RUNS]"
build=$(cd "${1:?$usage}" && pwd)
here=$(dirname "$0")
. "$here/server-host.sh"
. "$here/bench-lib.sh"
out=$(bench_out "$build" bench)
slo_us=${2:-1000}
rate=${3:-50000}
if bench_smoke; then
	step_s=${4:-$SMOKE_S} runs=${5:-1} rate_s=$SMOKE_S
else
	step_s=${4:-1} runs=${5:-3} rate_s=2
fi
ns_s="xkvall-$$-s" ns_c="xkvall-$$-c" if_s="xas$$" if_c="xac$$" ip_s=10.206.0.1 ip_c=10.206.0.2
if_sq="xaqs$$" if_cq="xaqc$$" ip_sq=10.207.0.1 ip_cq=10.207.0.2 # the two-queue pair
down() {
	server_host_down # the two-queue pair goes with the namespaces; its server's pins and lock:
	rm -rf "/sys/fs/bpf/xkv/$if_sq" "/run/xkv/$if_sq.lock"
	rmdir /sys/fs/bpf/xkv /run/xkv 2>/dev/null || true
}
trap down EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

memcached=$(command -v memcached || true)
if [ -z "$memcached" ]; then
	echo "bench-all.sh: no memcached (apt-get install memcached)" >&2
	exit 1
fi
steps=$((20 * runs))
bench_start bench-all.sh
netns_pair_veth "$if_sq" "$if_cq" "$ip_sq" "$ip_cq" 2

workload=(--keys 10000 --key-size 16 --value-size 64 --get-ratio 0.95)
# the server is pinned to CPU 0 (xkv-server pins its worker there too), the client to 1
bench() { in_client taskset -c 1 "$build/xkv-bench" "${workload[@]}" "$@"; }
# udp, xdp: one thread; xdp-2t: two threads, one queue; xdp-2q: two threads, two queues
client_args() {
	case $1 in
	xdp) echo --transport xdp --iface "$if_c" ;;
	xdp-2t) echo --transport xdp --iface "$if_c" --threads 2 ;;
	xdp-2q) echo --transport xdp --iface "$if_cq" --queues 2 --threads 2 ;;
	esac
}

# run_server RUN NAME PROTOCOL PORT CLIENTS COMMAND...: one server, each of CLIENTS, then
# stop it. The server is on $ip_s (server_run probes there).
run_server() {
	local run=$1 name=$2 protocol=$3 port=$4 clients=$5 client
	shift 5
	server_port=$port
	server_run "$name" "$protocol" taskset -c 0 "$@"
	for client in $clients; do
		progress "$name, $client client, run $run: sweep, SLO p99 <= $slo_us us"
		# shellcheck disable=SC2046 # the transport options are words
		bench --server "$ip_s:$port" --protocol "$protocol" $(client_args "$client") \
			--sweep --slo-us "$slo_us" --rate 5000 $(sweep_max 5000) \
			--duration "$step_s" --label "$name-$client" \
			--csv "$out/sweep-$name-$client-$run.csv" \
			--json >"$out/sweep-$name-$client-$run.json"
		progress "$name, $client client, run $run: open loop at $rate/s"
		# shellcheck disable=SC2046
		bench --server "$ip_s:$port" --protocol "$protocol" $(client_args "$client") \
			--rate "$rate" --duration "$rate_s" --label "$name-$client" --json \
			>"$out/rate-$name-$client-$run.json"
	done
	server_stop
}

xdp_server=("$build/xkv-server" --backend xdp --iface "$if_s" --workers 1 --allow "$ip_c/32")
# One worker on two queues: the server keeps CPU 0 and the client CPU 1, as in every
# other row, so only the queues change (docs/BENCH.md says why not --workers 2).
xdp_server_2q=("$build/xkv-server" --backend xdp --iface "$if_sq" --workers 1
	--allow "$ip_cq/32")
# run_server_2q RUN NAME ...: run_server against the server on the two-queue pair
run_server_2q() {
	local ip_s=$ip_sq # dynamic scope: server_run and the clients see it
	run_server "$@"
}
# Run r of every server before run r+1 of any: the VM's noisy spells (a vCPU stalled for
# milliseconds, a neighbour's build) come and go over tens of seconds, and running one
# server's runs back to back let one spell sink all of them, and its ratio with them.
for run in $(seq "$runs"); do
	run_server "$run" echo xkv 7411 "udp xdp" "${xdp_server[@]}" --echo
	run_server "$run" xkv-xdp xkv 7411 "udp xdp xdp-2t" "${xdp_server[@]}"
	run_server_2q "$run" xkv-2q xkv 7411 xdp-2q "${xdp_server_2q[@]}"
	run_server "$run" xkv-uring xkv 7411 "udp xdp" "$build/xkv-server" --backend uring \
		--workers 1 --allow "$ip_c/32"
	run_server "$run" memcached memcached 11211 "udp xdp" "$memcached" -u root -U 11211 -p 0 \
		-t 1 -l "$ip_s"
done

for client in udp xdp; do
	/usr/bin/python3 "$here/plot_latency.py" -o "$out/latency-$client.png" \
		"$out"/sweep-*-"$client"-1.csv
done
/usr/bin/python3 "$here/plot_latency.py" -o "$out/latency-queues.png" \
	"$out"/sweep-xkv-xdp-xdp-1.csv "$out"/sweep-xkv-xdp-xdp-2t-1.csv \
	"$out"/sweep-xkv-2q-xdp-2q-1.csv

/usr/bin/python3 - "$out" "$slo_us" "$rate" "$runs" <<'PY'
import json, re, sys
out, slo, rate, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
servers = ("echo", "xkv-xdp", "xkv-uring", "memcached")
def load(kind, server, client):
    return [json.load(open(f"{out}/{kind}-{server}-{client}-{i}.json"))
            for i in range(1, runs + 1)]
print(f"\nbest of {runs} runs (min..max): max: the highest rate whose p99 <= {slo} us; "
      f"p99 at {rate}/s open loop")
print(f"{'client':<7}{'server':<11}{'max ops/s':>11}{'min..max':>18}{'p99 at ' + rate + '/s':>16}"
      f"{'lost':>6}{'errors':>7}")
found, p99 = {}, {}
for client in ("udp", "xdp"):
    for server in servers:
        s = [r["rate_found"] for r in load("sweep", server, client)]
        r = [r["all"] for r in load("rate", server, client)]
        found[client, server] = max(s)
        p99[client, server] = min(a["p99_us"] for a in r)
        print(f"{client:<7}{server:<11}{found[client, server]:>11.0f}"
              f"{min(s):>9.0f}..{max(s):<7.0f}{p99[client, server]:>13.1f} us"
              f"{sum(a['lost'] for a in r):>6}{sum(a['errors'] for a in r):>7}")
def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"
print(f"\n{'client':<7}{'ratio':<16}{'max ops/s':>10}{'p99 at equal load':>19}")
for client in ("udp", "xdp"):
    for name, a, b in (("xkv/echo", "xkv-xdp", "echo"), ("xkv/memcached", "xkv-xdp", "memcached"),
                       ("XDP/io_uring", "xkv-xdp", "xkv-uring")):
        print(f"{client:<7}{name:<16}{ratio(found[client, a], found[client, b]):>10}"
              f"{ratio(p99[client, a], p99[client, b]):>19}")
print("\necho answers GET 'not found' (misses). Client and server share 2 cores and, on veth,")
print("each side's receive runs on the other's CPU: read ratios, not absolutes (docs/DESIGN.md).")

print(f"\nxkv-server --backend xdp --workers 1 (CPU 0), AF_XDP client (CPU 1): one rx queue "
      f"or two")
print(f"{'queues':<7}{'threads':<11}{'max ops/s':>11}{'min..max':>18}"
      f"{'p99 at ' + rate + '/s':>16}{'lost':>6}{'errors':>7}")
for server, client, queues, threads in (("xkv-xdp", "xdp", 1, 1), ("xkv-xdp", "xdp-2t", 1, 2),
                                        ("xkv-2q", "xdp-2q", 2, 2)):
    sweeps, rates = load("sweep", server, client), load("rate", server, client)
    s = [r["rate_found"] for r in sweeps]
    r = [r["all"] for r in rates]
    found[client, server] = max(s)
    p99[client, server] = min(a["p99_us"] for a in r)
    print(f"{queues:<7}{threads:<11}{max(s):>11.0f}{min(s):>9.0f}..{max(s):<7.0f}"
          f"{p99[client, server]:>13.1f} us{sum(a['lost'] for a in r):>6}"
          f"{sum(a['errors'] for a in r):>7}")
    for x in (j["xdp"] for j in sweeps + rates): # the client's replies came on every queue
        busy = [q["queue"] for q in x["queues"] if q["received"]]
        assert len(busy) == queues, f"{client}: replies on queues {busy} of {x['queues']}"
log = open(f"{out}/xkv-2q.log").read() # the last run's server: it received on both
assert all(re.search(rf"^queue {q} rx_packets: [1-9]", log, re.M) for q in (0, 1)), log
print(f"two queues / one, two threads each: max ops/s "
      f"{ratio(found['xdp-2q', 'xkv-2q'], found['xdp-2t', 'xkv-xdp'])}, p99 at equal load "
      f"{ratio(p99['xdp-2q', 'xkv-2q'], p99['xdp-2t', 'xkv-xdp'])}")
PY
echo "CSVs, JSON and plots (latency-udp.png, latency-xdp.png, latency-queues.png) in $out; $((SECONDS - start)) s"
