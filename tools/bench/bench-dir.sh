#!/usr/bin/env bash
# make bench-dir: the coherence directory's load balance (docs/DIRECTORY.md), ~2 minutes.
# The lab of tools/netns-dir.sh with four xkv-servers (io_uring backend, one worker
# each), xkv-dir attached to the directory host, and xkv-bench over the pool by ketama
# (100,000 keys, 95 % GET, values of 64 B), zipf 0.99 and 1.2, once with the directory
# holding no key (ketama alone) and once with the 32 hottest keys replicated. Each run's
# servers start afresh and say at exit how many requests each served; the table gives
# the busiest one's share over the mean beside a placement model's for this pool and
# for 64 servers with 384 keys replicated (tools/bench/dir_report.py). Then popularity
# that moves (Pegasus Sec. 8.6): the zipf ranks shuffled every 10 s and, at 25 s, the
# coldest key made the hottest at once, 30 s a run, with ketama alone and with
# `xkv-dir run` keeping the hottest keys replicated under each replica selection
# strategy; every server's requests polled from its live counters
# (tools/bench/server_load.py) give the busiest one's share over the mean each second
# (tools/bench/dir_dynamic.py, a table and a plot over time). Beside them, xkv-sim's
# cluster model at 4 and 32 servers (tools/sim/cluster_figures.py: throughput under the
# SLO against skew, ketama alone and each strategy; p99 at equal load; the strategies
# ranked). Last, the directory program's cost per packet (bench-xdp's rows). Results and
# plots in BUILD_DIR/bench-dir. About 10 minutes; run it on an idle machine.
#   bench-dir.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: bench-dir.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
. "$here/../netns-dir.sh"

keys=100000 replicated=32 replicated64=384 duration=10
zipfs=(0.99 1.2)
strategies=(round-robin least-loaded predict c3 popularity)
epoch_ms=1000 shuffle_s=10 hot_in_s=25 moving_s=30 # popularity that moves
if bench_smoke; then
	keys=2000 duration=$SMOKE_S
	strategies=(round-robin) epoch_ms=200 shuffle_s=1 hot_in_s=1.5 moving_s=2
fi
out=$(bench_out "$build" bench-dir)
dir_prefix="xb$$"
dir_nservers=4
pin="/sys/fs/bpf/xkv-dir-bench-$$"
servers=()
cleanup() {
	dir_lab_stop "${servers[@]}"
	rm -rf "$pin"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$(id -u)" -ne 0 ]; then
	echo "bench-dir.sh: needs root (namespaces, XDP)" >&2
	exit 1
fi
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.jsonl "$out"/*.png "$out"/*.log "$out"/*.txt
start=$SECONDS step=0 steps=$((${#zipfs[@]} * (3 + ${#strategies[@]}) + 4))

c=$(dir_lab_ns_c) d=$(dir_lab_ns_d)
dir_lab_start "$build/tests/bpf/xdp_pass.bpf.o"
pool=$dir_pool ifaces=("${dir_ifaces[@]}")
dir() { nsenter --net="/run/netns/$d" "$build/xkv-dir" --pin "$pin" --state "$out/state" "$@"; }
key() { printf 'k%015d' "$1"; }

# Each key's server on this pool and on 64, as clients place them (xkv-cli where).
progress "placing $keys keys on 4 servers and on 64 (ketama)"
pool64=$(for i in $(seq 0 63); do printf '10.1.%d.1:7411 s%d,' $((i / 250)) "$i"; done)
mapfile -t names < <(seq -f 'k%015g' 0 $((keys - 1)))
for p in 4 64; do
	list=$pool
	[ $p = 64 ] && list=${pool64%,}
	for ((i = 0; i < keys; i += 10000)); do
		"$build/xkv-cli" -s "$list" where "${names[@]:i:10000}"
	done >"$out/homes$p.txt"
done

# Fresh servers, one per server host, logs $out/NAME-sI.log, the directory attached
# with the options given, on CPU 0 (the client's is 1).
lab_up() {
	local name=$1 i
	shift
	servers=()
	for i in $(seq 0 3); do
		ip netns exec "$(dir_lab_ns_s "$i")" taskset -c 0 "$build/xkv-server" -b uring \
			-w 1 -M 0 -m 256M -a 10.0.0.0/16 --hot-epoch-ms "$epoch_ms" \
			>"$out/$name-s$i.log" 2>&1 &
		servers+=($!)
	done
	sleep 0.5
	dir --servers "$pool" "$@" attach "${ifaces[@]}" >/dev/null
}

lab_down() {
	local name=$1 pid
	dir stats >"$out/$name-dir.txt"
	dir --force detach "${ifaces[@]}" >/dev/null
	rm -f "$out/state"
	for pid in "${servers[@]}"; do
		kill -INT "$pid"
		wait "$pid" || true
	done
	servers=()
}

# xkv-bench over the pool through the directory, its JSON in $out/NAME.json; options
# besides.
load() {
	local name=$1
	shift
	ip netns exec "$c" taskset -c 1 "$build/xkv-bench" -s "$pool" --protocol xkv-dir \
		--keys "$keys" --get-ratio 0.95 --threads 1 --depth 32 --json "$@" \
		>"$out/$name.json" 2>"$out/$name.log"
}

# One run: fresh servers, the directory attached (and its hot keys added when asked),
# xkv-bench over the pool; each server's requests, from what it says at exit.
run() {
	local zipf=$1 mode=$2
	lab_up "$zipf-$mode"
	if [ "$mode" = directory ]; then
		mapfile -t hot < <(seq -f 'k%015g' 0 $((replicated - 1)))
		dir add "${hot[@]}" >/dev/null
	fi
	load "$zipf-$mode" --zipf "$zipf" --duration "$duration"
	lab_down "$zipf-$mode"
	/usr/bin/python3 - "$zipf" "$mode" "$out/$zipf-$mode" >>"$out/runs.jsonl" <<'PY'
import json, re, sys
zipf, mode, base = sys.argv[1:4]
served = []
for i in range(4):
	text = open(f"{base}-s{i}.log").read()
	served.append(sum(int(n) for n in
			  re.findall(r"^worker \d+ (?:get|put|delete): (\d+)$", text, re.M)))
print(json.dumps({"zipf": float(zipf), "mode": mode, "requests": served}))
PY
}

# Popularity that moves: ketama alone, or `xkv-dir run` choosing reads' servers by
# strategy $2; every server's requests polled as the run goes.
run_moving() {
	local zipf=$1 mode=$2 name="moving-$1-$2" ctl= poll
	if [ "$mode" = ketama ]; then
		lab_up "$name"
	else
		lab_up "$name" --select "$mode"
		nsenter --net="/run/netns/$d" "$build/xkv-dir" --pin "$pin" --state "$out/state" \
			--epoch "$epoch_ms" run >"$out/$name-run.log" 2>&1 &
		ctl=$!
		servers+=("$ctl")
	fi
	/usr/bin/python3 "$here/server_load.py" --out "$out/$name-load.jsonl" \
		--pids "$(IFS=,; echo "${servers[*]:0:4}")" &
	poll=$!
	servers+=("$poll")
	load "$name" --zipf "$zipf" --duration "$moving_s" --shuffle "$shuffle_s" \
		--hot-in "$hot_in_s" --interval-csv "$out/$name-seconds.csv"
	kill -INT "$poll" ${ctl:+"$ctl"} 2>/dev/null || true
	wait "$poll" || { echo "bench-dir: the counters' poll failed" >&2; exit 1; }
	[ -z "$ctl" ] || wait "$ctl" || true
	servers=("${servers[@]:0:4}")
	lab_down "$name"
	printf '{"zipf": %s, "mode": "%s", "seconds": "%s", "load": "%s"}\n' "$zipf" "$mode" \
		"$out/$name-seconds.csv" "$out/$name-load.jsonl" >>"$out/moving.jsonl"
}

for zipf in "${zipfs[@]}"; do
	for mode in ketama directory; do
		progress "zipf $zipf, $mode: $duration s"
		run "$zipf" "$mode"
	done
done
for zipf in "${zipfs[@]}"; do
	for mode in ketama "${strategies[@]}"; do
		progress "popularity moving, zipf $zipf, $mode: $moving_s s"
		run_moving "$zipf" "$mode"
	done
done

progress "the table, the plot ($out/balance.png)"
echo "the busiest server's requests over the mean: measured, and the placement model's"
/usr/bin/python3 "$here/dir_report.py" --runs "$out/runs.jsonl" --keys "$keys" \
	--replicated "$replicated" --homes "$out/homes4.txt" --homes64 "$out/homes64.txt" \
	--replicated64 "$replicated64" --json "$out/balance.json" --png "$out/balance.png"
progress "popularity moving: the table, the plot ($out/moving.png)"
echo "popularity moving: the busiest server's requests over the mean, each second"
/usr/bin/python3 "$here/dir_dynamic.py" --runs "$out/moving.jsonl" --epoch-ms "$epoch_ms" \
	--shuffle "$shuffle_s" --hot-in "$hot_in_s" --json "$out/moving.json" \
	--png "$out/moving.png"
progress "the cluster model (xkv-sim), 4 and 32 servers ($out/cluster.png)"
/usr/bin/python3 "$here/../sim/cluster_figures.py" --sim "$build/xkv-sim" --out "$out" \
	$(bench_smoke && echo --quick)
echo "the directory program's cost per packet (bench-xdp, BPF_PROG_RUN, ns):"
rounds=7
bench_smoke && rounds=1
taskset -c 1 "$build/bench-xdp" --rounds "$rounds" $(bench_smoke && echo --repeat 1000) |
	grep -e '^dir:' -e 'bare program' -e '^directory:' | tee "$out/xdp.txt"
echo "bench-dir: done in $((SECONDS - start)) s; results in $out"
