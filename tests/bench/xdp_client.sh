#!/usr/bin/env bash
# xkv-bench's AF_XDP transport against a real server: a server host and a client
# host (tools/netns-pair.sh), xkv-server --backend xdp on one, xkv-bench --transport
# xdp on the other for a short closed loop, a short open loop and a closed loop with
# large values sent and answered in pieces. Each must get answers and no error, and leave
# no XDP program on the client interface, also when stopped by SIGINT; the server must
# exit 0 when stopped. Everything made here goes on every way out.
#   xdp_client.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: xdp_client.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../../tools/bench/server-host.sh"
. "$(dirname "$0")/../skip.sh"
need_xdp_hosts
ns_s="xkvb-$$-s" ns_c="xkvb-$$-c" if_s="xbs$$" if_c="xbc$$" ip_s=10.203.0.1 ip_c=10.203.0.2
out=$(mktemp -d /tmp/xkv-bench-xdp.XXXXXX)

cleanup() {
	server_host_down
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

netns_pair_up
server_start server || fail "no server"

# the server pins its worker to CPU 0: two busy pollers on one CPU starve each other
client_cpu=$(($(nproc) - 1))
xdp_attached() { in_client ip link show dev "$if_c" | grep -q 'prog/xdp'; }

# One run; its JSON object must show answers, no errors, and the program gone after.
check_run() {
	local name=$1
	shift
	in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" --transport xdp \
		--iface "$if_c" --keys 1000 --duration 0.5 --json --label "$name" "$@" \
		>"$out/$name.json" ||
		fail "$name: xkv-bench exited $?"
	/usr/bin/python3 - "$out/$name.json" <<'PY' || fail "$name: $(cat "$out/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
a = r["all"]
assert r["transport"] == "xdp" and r["xdp"]["mode"] in ("copy", "zero-copy"), r
assert a["ops"] > 0, "no answers"
assert a["errors"] == 0 and r["load"]["errors"] == 0, "wrong answers"
assert r["xdp"]["redirected"] >= a["ops"], "answers the client XDP program did not see"
if r["value_profile"] != "fixed":
    assert r["large"]["ops"] > 0 and r["large"]["errors"] == 0, r["large"]
    assert r["small"]["ops"] > 0, r
    # a 100000-byte GET is over 3x its request: answered VALIDATE until the token came
    assert r["validations"] > 0, "no large GET was asked again with the server's token"
print(f"{r['label']}: {a['ops_per_s']:.0f} ops/s, p99 {a['p99_us']:.1f} us, "
      f"lost {a['lost']}, {r['xdp']['mode']} mode, validations {r['validations']}")
PY
	! xdp_attached || fail "$name: the XDP program is still attached to $if_c"
}

check_run closed --depth 32
check_run open --rate 20000
check_run large --depth 8 --get-ratio 0.5 --value-profile bimodal --large-pct 5 \
	--large-size 100000 --large-keys 10

# SIGINT while measuring: the run reports, then detaches. (nsenter execs: $! is xkv-bench)
nsenter --net="/run/netns/$ns_c" taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" \
	--transport xdp --iface "$if_c" --keys 1000 --duration 30 >"$out/sigint.txt" 2>&1 &
bench_pid=$!
for _ in $(seq 50); do xdp_attached && break; sleep 0.1; done
xdp_attached || fail "sigint: the XDP program never showed on $if_c"
sleep 0.5
kill -INT "$bench_pid"
wait "$bench_pid" || fail "sigint: xkv-bench exited $?: $(cat "$out/sigint.txt")"
grep -q '^xkv-bench .* all ' "$out/sigint.txt" || fail "sigint: no report: $(cat "$out/sigint.txt")"
! xdp_attached || fail "sigint: the XDP program is still attached to $if_c"
echo "sigint: detached"
server_stop || fail "the server did not stop cleanly"
