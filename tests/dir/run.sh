#!/usr/bin/env bash
# xkv-dir run (docs/DIRECTORY.md, "Hot keys"): the controller's loop in the lab of
# tools/netns-dir.sh with two xkv-servers that count their hot keys in epochs of 300 ms,
# the loop asking them every 300 ms and replicating one key at most. Reads of one key
# make it replicated; once another key takes the reads, the first is removed (its
# migration home: a value written while replicated is read after) and the other added. The
# loop's process, namespaces, pins and servers go on every way out.
#   run.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
need_xdp_hosts
need_commands /usr/bin/python3
dir_prefix="xr$$"
pin="/sys/fs/bpf/xkv-dir-run-$$"
lab_server_opts=(--hot-epoch-ms 300)
. "$here/lab_env.sh"

pool=$dir_pool
epoch_ms=300
first=k000000000000000 second=k0000000000000000 # xkv-bench's first key, 16 and 17 bytes
dir() { in_d "$build/xkv-dir" --pin "$pin" --state "$out/keys" "$@"; }
cli() { ip netns exec "$c" "$build/xkv-cli" -s "$pool" --dir "$@"; }
json() { /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Reads of one key through the directory until stopped: xkv-bench, key size $1.
reads_start() {
	ip netns exec "$c" "$build/xkv-bench" -s "$pool" --protocol xkv-dir --keys 1 \
		--key-size "$1" --get-ratio 1 --duration 30 --threads 1 --depth 4 \
		>"$out/bench$1.log" 2>&1 &
	reader=$!
	pids=($reader "${pids[@]}")
}
reads_stop() {
	kill -INT "$reader" 2>/dev/null || true
	wait "$reader" 2>/dev/null || true
	pids=("${pids[@]:1}")
}

# Waits, up to 10 epochs, for the loop's log to say $1; prints the milliseconds it took.
wait_for() {
	local from=$(now_ms)
	for _ in $(seq 100); do
		grep -q "$1" "$out/run.log" && { echo $(($(now_ms) - from)); return 0; }
		sleep 0.03
	done
	fail "the loop never said \"$1\": $(cat "$out/run.log")"
}

lab_servers
dir --servers "$pool" attach "${dir_ifaces[@]}" >/dev/null || fail "attach"
dir --epoch $epoch_ms --keys 1 run >"$out/run.log" 2>&1 &
pids=($! "${pids[@]}") # the loop stops first, so that it acts on no server stopping
wait_for "replicating the 1 hottest keys" >/dev/null

reads_start 16
took=$(wait_for "added $first")
echo "run: $first replicated $took ms after its reads began (epochs of $epoch_ms ms)"
# two epochs at most: one for the servers' count of it to close, one for the loop to ask;
# 150 ms more for the add itself and this poll
[ "$took" -le $((2 * epoch_ms + 150)) ] || fail "$first took $took ms to be replicated"
[ "$(dir --json status | json 'len(d["keys"])')" = 1 ] || fail "status: $(dir status)"
reads_stop
cli put "$first" one >/dev/null || fail "a write of $first, replicated"
got=$(cli get "$first" 2>&1) && [ "$got" = one ] || fail "$first through the directory: $got"

reads_start 17
took=$(wait_for "added $second")
grep -q "removed $first" "$out/run.log" || fail "$first not removed: $(cat "$out/run.log")"
echo "run: $second took over $took ms after its reads began, $first went home"
reads_stop
[ "$(dir --json status | json 'len(d["keys"])')" = 1 ] || fail "status: $(dir status)"
cli put "$second" two >/dev/null || fail "a write of $second, replicated"
[ "$(cli get "$first")" = one ] && [ "$(cli get "$second")" = two ] || fail "values after"
grep -q "epoch [0-9]*: [0-9]* requests counted" "$out/run.log" || fail "no epoch said"
