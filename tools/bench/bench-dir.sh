#!/usr/bin/env bash
# make bench-dir: the coherence directory's load balance (docs/DIRECTORY.md), ~2 minutes.
# The lab of tools/netns-dir.sh with four xkv-servers (io_uring backend, one worker
# each), xkv-dir attached to the directory host, and xkv-bench over the pool by ketama
# (100,000 keys, 95 % GET, values of 64 B), zipf 0.99 and 1.2, once with the directory
# holding no key (ketama alone) and once with the 32 hottest keys replicated. Each run's
# servers start afresh and say at exit how many requests each served; the table gives
# the busiest one's share over the mean beside a placement model's for this pool and
# for 64 servers with 384 keys replicated (tools/bench/dir_report.py), then the
# directory program's cost per packet (bench-xdp's rows). Results and a plot in
# BUILD_DIR/bench-dir. Run it on an idle machine.
#   bench-dir.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: bench-dir.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
. "$here/../netns-dir.sh"

keys=100000 replicated=32 replicated64=384 duration=10
zipfs=(0.99 1.2)
if bench_smoke; then
	keys=2000 duration=$SMOKE_S
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
start=$SECONDS step=0 steps=$((${#zipfs[@]} * 2 + 2))

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

# One run: fresh servers, the directory attached (and its hot keys added when asked),
# xkv-bench over the pool; each server's requests, from what it says at exit.
run() {
	local zipf=$1 mode=$2 i pid
	servers=()
	for i in $(seq 0 3); do
		ip netns exec "$(dir_lab_ns_s "$i")" taskset -c 0 "$build/xkv-server" -b uring \
			-w 1 -M 0 -m 256M -a 10.0.0.0/16 >"$out/$zipf-$mode-s$i.log" 2>&1 &
		servers+=($!)
	done
	sleep 0.5
	dir --servers "$pool" attach "${ifaces[@]}" >/dev/null
	if [ "$mode" = directory ]; then
		mapfile -t hot < <(seq -f 'k%015g' 0 $((replicated - 1)))
		dir add "${hot[@]}" >/dev/null
	fi
	ip netns exec "$c" taskset -c 1 "$build/xkv-bench" -s "$pool" --protocol xkv-dir \
		--keys "$keys" --zipf "$zipf" --get-ratio 0.95 --duration "$duration" \
		--threads 1 --depth 32 --json >"$out/$zipf-$mode.json" 2>"$out/$zipf-$mode.log"
	dir stats >"$out/$zipf-$mode-dir.txt"
	dir --force detach "${ifaces[@]}" >/dev/null
	rm -f "$out/state"
	for pid in "${servers[@]}"; do
		kill -INT "$pid"
		wait "$pid" || true
	done
	servers=()
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

for zipf in "${zipfs[@]}"; do
	for mode in ketama directory; do
		progress "zipf $zipf, $mode: $duration s"
		run "$zipf" "$mode"
	done
done

progress "the table, the plot ($out/balance.png)"
echo "the busiest server's requests over the mean: measured, and the placement model's"
/usr/bin/python3 "$here/dir_report.py" --runs "$out/runs.jsonl" --keys "$keys" \
	--replicated "$replicated" --homes "$out/homes4.txt" --homes64 "$out/homes64.txt" \
	--replicated64 "$replicated64" --json "$out/balance.json" --png "$out/balance.png"
echo "the directory program's cost per packet (bench-xdp, BPF_PROG_RUN, ns):"
rounds=7
bench_smoke && rounds=1
taskset -c 1 "$build/bench-xdp" --rounds "$rounds" $(bench_smoke && echo --repeat 1000) |
	grep -e '^dir:' -e 'bare program' -e '^directory:' | tee "$out/xdp.txt"
echo "bench-dir: done in $((SECONDS - start)) s; results in $out"
