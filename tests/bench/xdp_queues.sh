#!/usr/bin/env bash
# xkv-bench's AF_XDP transport over two queues against a real server: a server host and
# a client host joined by a veth pair of two rx and two tx queues a side,
# xkv-server --backend xdp --workers 2 on one (a socket per queue and worker), and
# xkv-bench --transport xdp --queues 2 on the other, whose thread t sends and receives on
# queue t % 2. Each queue must carry requests and replies on both sides (the client's
# per-queue counts, the server's "queue Q rx_packets"), nothing lost, nothing on the wrong
# queue, and no XDP program left on the client interface. Everything made here goes on
# every way out.
#   xdp_queues.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: xdp_queues.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../../tools/bench/server-host.sh"
. "$(dirname "$0")/../skip.sh"
need_xdp_hosts
ns_s="xkvq-$$-s" ns_c="xkvq-$$-c" if_s="xqs$$" if_c="xqc$$" ip_s=10.208.0.1 ip_c=10.208.0.2
out=$(mktemp -d /tmp/xkv-bench-queues.XXXXXX)

cleanup() {
	server_host_down
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

netns_pair_up 2
server_start server --workers 2 || fail "no server"
grep -q ': 2 rx queue(s)' "$out/server.log" || fail "the server sees no 2 queues: $(cat "$out/server.log")"
xdp_attached() { in_client ip link show dev "$if_c" | grep -q 'prog/xdp'; }

# One run over queues 0 and 1; each queue must have sent and received, nothing lost.
check_run() {
	local name=$1
	shift
	in_client "$build/xkv-bench" --server "$ip_s" --transport xdp --iface "$if_c" \
		--queues 2 --keys 1000 --duration 0.5 --timeout-ms 1000 --json --label "$name" \
		"$@" >"$out/$name.json" || fail "$name: xkv-bench exited $?"
	/usr/bin/python3 - "$out/$name.json" <<'PY' || fail "$name: $(cat "$out/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
a, x = r["all"], r["xdp"]
assert a["ops"] > 0 and a["errors"] == 0 and r["load"]["errors"] == 0, "no or wrong answers"
assert a["lost"] == 0 and r["load"]["lost"] == 0, "lost"
assert x["wrong_queue"] == 0 and x["rx_dropped"] == 0, x
assert [q["queue"] for q in x["queues"]] == [0, 1], x["queues"]
for q in x["queues"]:
    assert q["sent"] > 0 and q["received"] > 0, f"queue {q['queue']} idle: {x['queues']}"
    assert q["received"] <= q["sent"], q
# the program redirected what the sockets received, and the replies still in flight at the end
assert sum(q["received"] for q in x["queues"]) <= x["redirected"], x
print(f"{r['label']}: {a['ops_per_s']:.0f} ops/s, "
      + ", ".join(f"queue {q['queue']} {q['sent']}/{q['received']}" for q in x["queues"]))
PY
	! xdp_attached || fail "$name: the XDP program is still attached to $if_c"
}

check_run two --threads 2 --depth 16
check_run three --threads 3 --rate 20000 # two sockets share queue 0's UMEM
# neither more queues than threads nor --queues without AF_XDP
rc=0
in_client "$build/xkv-bench" --server "$ip_s" --transport xdp --iface "$if_c" --queues 2 \
	--duration 0.1 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--queues 2 with one thread: exit $rc, not 2"

# The server's counters at shutdown: both queues received, at least what the client sent
# on each (the rest: xkv-cli's probe, over the kernel's UDP, on either queue).
server_stop || fail "the server did not stop cleanly"
/usr/bin/python3 - "$out/server.log" "$out"/two.json "$out"/three.json <<'PY' ||
import json, re, sys
log = open(sys.argv[1]).read()
rx = {int(q): int(n) for q, n in re.findall(r"^queue (\d+) rx_packets: (\d+)$", log, re.M)}
sent = {0: 0, 1: 0}
for path in sys.argv[2:]:
    for q in json.load(open(path))["xdp"]["queues"]:
        sent[q["queue"]] += q["sent"]
assert sorted(rx) == [0, 1], f"server queues {rx}"
for q in (0, 1):
    assert rx[q] >= sent[q] > 0, f"queue {q}: server received {rx[q]}, client sent {sent[q]}"
assert sum(rx.values()) - sum(sent.values()) <= 10, f"server {rx}, client {sent}"
print(f"server: queue 0 rx {rx[0]}, queue 1 rx {rx[1]} (client sent {sent[0]}, {sent[1]})")
PY
	fail "server counters: $(grep -E '^queue|rx queue' "$out/server.log")"
