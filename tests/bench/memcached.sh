#!/usr/bin/env bash
# xkv-bench against a real memcached over UDP, in both dialects (--protocol memcached
# and memcached-binary): memcached on loopback only, a short closed loop with every
# key loaded (all answers right, none lost, no misses), then a run with half the keys
# loaded (about half the GETs must be misses, none an error), then the largest values
# memcached answers in one datagram (and one byte more refused by xkv-bench).
# memcached is stopped on every way out.
#   memcached.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: memcached.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../skip.sh"
need_commands memcached
bench=$build/xkv-bench
out=$(mktemp -d /tmp/xkv-bench-memcached.XXXXXX)
memcached_pid=

cleanup() {
	if [ -n "$memcached_pid" ]; then
		kill "$memcached_pid" 2>/dev/null || true
		wait "$memcached_pid" 2>/dev/null || true
	fi
	rm -rf "$out"
}
trap cleanup EXIT
# a trapped signal would resume the script: leave through the EXIT trap instead
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

memcached=$(command -v memcached)
[ -x "$bench" ] || fail "no $bench"
. "$(dirname "$0")/../../tools/bench/memcached-lib.sh"

# One closed-loop run; its JSON object must pass the python checks in $2.
check_run() {
	local name=$1 checks=$2
	shift 2
	"$bench" --server "127.0.0.1:$port" --duration 0.5 --timeout-ms 1000 --json \
		--label "$name" "$@" >"$out/$name.json" 2>"$out/$name.err" ||
		fail "$name: xkv-bench exited $?: $(cat "$out/$name.err")"
	python3 - "$out/$name.json" "$checks" <<'PY' || fail "$name: $(cat "$out/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
load, get, put = r["load"], r["get"], r["put"]
ok = {op: r[op]["ops"] - r[op]["misses"] for op in ("get", "put")}
assert load["errors"] == 0 and load["lost"] == 0, "loading failed"
for op in ("get", "put"):
    assert r[op]["errors"] == 0, f"{op}: wrong answers"
    assert r[op]["lost"] == 0, f"{op}: lost requests"
assert r["invalid"] == 0, "datagrams that are no reply"
exec(sys.argv[2])
print(f"{r['label']}: {r['all']['ops_per_s']:.0f} ops/s, get ok {ok['get']} "
      f"misses {get['misses']}, put ok {ok['put']}, p99 {r['all']['p99_us']:.1f} us")
PY
}

memcached_start "$out" || fail "memcached did not start"
port=$memcached_port
echo "memcached $("$memcached" -V | cut -d' ' -f2) on 127.0.0.1:$port (UDP), pid $memcached_pid"

for proto in memcached memcached-binary; do
	# every key loaded: each GET is a hit with the right value, each PUT stored
	check_run "$proto" '
assert load["ok"] == 1000, "not every key loaded"
assert ok["get"] > 0 and ok["put"] > 0, "no answers"
assert get["misses"] == 0, "misses of loaded keys"
' --protocol "$proto" --keys 1000 --get-ratio 0.9
	# half the keys loaded (and a key size of their own: none loaded by another run)
	key_size=$([ "$proto" = memcached ] && echo 18 || echo 19)
	check_run "$proto-misses" '
assert put["ops"] == 0
ratio = get["misses"] / get["ops"]
assert ok["get"] > 0 and 0.4 < ratio < 0.6, f"{ratio:.2f} of GETs missed, not about half"
' --protocol "$proto" --keys 2000 --warmup-keys 1000 --get-ratio 1 --key-size "$key_size"
	# the largest value whose reply memcached sends in one datagram (it splits replies
	# over 1400 bytes): answered whole; one byte more is refused before anything is sent
	largest=$([ "$proto" = memcached ] && echo 1354 || echo 1364)
	check_run "$proto-largest" '
assert ok["get"] > 0 and get["misses"] == 0, "no whole answers"
' --protocol "$proto" --keys 200 --value-size "$largest"
	status=0
	"$bench" --server "127.0.0.1:$port" --protocol "$proto" --keys 200 --duration 0.1 \
		--value-size $((largest + 1)) >/dev/null 2>"$out/over.err" || status=$?
	[ "$status" -eq 2 ] && grep -q "more than one datagram" "$out/over.err" ||
		fail "$proto: a $((largest + 1))-byte value: exit $status, $(cat "$out/over.err")"
done
kill -0 "$memcached_pid" 2>/dev/null || fail "memcached died: $(cat "$out/memcached.log")"
