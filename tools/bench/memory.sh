#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory beside memcached, in one run: each server started on loopback with the same
# 1 GiB limit, its resident memory read at start, then 1 M items (16 B keys, 64 B
# values) PUT by xkv-bench, and the growth divided by the items stored. Prints one
# table; progress on stderr. Both servers are stopped on every way out.
#   [XKV_BENCH_SMOKE=1] memory.sh BUILD_DIR [ITEMS]
# The smoke mode (bench-lib.sh) loads 10,000 items unless ITEMS says otherwise.
set -euo pipefail

build=$(cd "${1:?usage: memory.sh BUILD_DIR [ITEMS]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
items=1000000
if bench_smoke; then items=10000; fi
items=${2:-$items}
out=$(mktemp -d /tmp/xkv-memory.XXXXXX)
pids=()

cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

. "$here/memcached-lib.sh"

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Loads the items into the server on $1 in dialect $2; prints how many were stored.
load() {
	"$build/xkv-bench" --server "127.0.0.1:$1" --protocol "$2" --keys "$items" \
		--key-size 16 --value-size 64 --get-ratio 1 --duration 0.2 --timeout-ms 1000 \
		--json >"$out/load.json" 2>"$out/load.err" ||
		{ echo "memory.sh: xkv-bench: $(cat "$out/load.err")" >&2; exit 1; }
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["load"]["ok"])' \
		"$out/load.json"
}

# measure NAME PID PORT DIALECT: a table row
measure() {
	local name=$1 pid=$2 port=$3 dialect=$4 start end stored per_item
	start=$(rss_kib "$pid")
	echo "memory.sh: $name: loading $items items" >&2
	stored=$(load "$port" "$dialect")
	end=$(rss_kib "$pid")
	per_item=$(awk -v a="$start" -v b="$end" -v n="$stored" 'BEGIN { print (b - a) * 1024 / n }')
	printf '%-10s %10d %14d %10d %9.1f\n' "$name" "$((start / 1024))" "$((end / 1024))" \
		"$stored" "$per_item"
	echo "$name $per_item $start" >>"$out/rows"
}

memcached_start "$out" -m 1024
pids+=("$memcached_pid")
xkv_port=$((memcached_port + 1))
udp_port_free "$xkv_port" || { echo "memory.sh: UDP port $xkv_port is taken" >&2; exit 1; }
"$build/xkv-server" --backend uring --port "$xkv_port" --workers 1 --memory 1G \
	--mode store >"$out/xkv.log" 2>&1 &
pids+=("$!")
xkv_pid=$!
# serving: it answers a GET (found or not), its workers up
for _ in $(seq 50); do
	rc=0
	"$build/xkv-cli" -s "127.0.0.1:$xkv_port" -t 50 -r 0 get ping >/dev/null 2>&1 || rc=$?
	[ "$rc" -le 1 ] && break
	sleep 0.1
done

printf '%-10s %10s %14s %10s %9s\n' server "start MiB" "loaded MiB" items "B/item"
measure memcached "$memcached_pid" "$memcached_port" memcached
measure xkv "$xkv_pid" "$xkv_port" xkv
python3 - "$out/rows" <<'PY'
import sys
rows = {name: (float(per_item), int(start)) for name, per_item, start in
        (line.split() for line in open(sys.argv[1]))}
# too few items may grow memcached by no page at all
ratio = "%.2fx" % (rows["xkv"][0] / rows["memcached"][0]) if rows["memcached"][0] else "n/a"
print("xkv / memcached: bytes per item %s; xkv starts at %d MiB resident" %
      (ratio, rows["xkv"][1] // 1024))
PY
