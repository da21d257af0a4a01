#!/usr/bin/env bash
# The replay test (docs/TRACE.md): a server host and a client host joined by veth
# (tools/netns-pair.sh); xkv-server with the XDP backend on the server side; a
# generated request trace sent from the client side with tcpreplay; the replies
# captured there with xkv-trace record and judged with xkv-trace check. Then check
# must also fail on two spoilt copies of the replies (some cut off, one byte
# flipped), so a check that passes everything is caught. Everything it makes goes
# on every way out; its files stay in /tmp when it fails.
#   tests/replay/replay.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: replay.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../../tools/netns-pair.sh"
. "$(dirname "$0")/../skip.sh"
need_xdp_hosts
need_commands tcpreplay tcpdump

id=$$
ns_s="xkvt-$id-rs" ns_c="xkvt-$id-rc" if_s="xrs$id" if_c="xrc$id"
ip_s=10.203.0.1 ip_c=10.203.0.2
port=7411 client_port=40000
# PUTs up to 4000 bytes: values in pieces both ways; DELETEs of absent keys: NOT_FOUND
spec=keys=200,key=16,get=0.6,put=0.3,del=0.1,value=16-4000,zipf=0.99
requests=5000 pps=5000
server_pid= record_pid=
out=$(mktemp -d /tmp/xkv-replay.XXXXXX)
passed=

# SIGTERM, and SIGKILL if that has not ended it within 3 s; then reap it
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 30); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	local pid
	for pid in $record_pid $server_pid; do stop_pid "$pid"; done
	netns_pair_down
	if [ -n "$passed" ]; then
		rm -rf "$out"
	else
		echo "replay: FAILED; traces and logs kept in $out" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "replay: $*" >&2
	exit 1
}

mac_of() { # NS IF
	ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}

# waits up to $1 tenths of a second for the command after it to succeed
wait_for() {
	local tries=$1
	shift
	for _ in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

server_answers() {
	kill -0 "$server_pid" 2>/dev/null || fail "xkv-server exited: $(cat "$out/server.log")"
	local rc=0
	ip netns exec "$ns_c" "$build/xkv-cli" -s "$ip_s" -t 50 -r 0 get replay:ping \
		>/dev/null 2>&1 || rc=$?
	[ "$rc" -le 1 ] # found or not found: it answers
}

netns_pair_up

# nsenter, not ip netns exec: the server pins its maps in /sys/fs/bpf. A trace is sent
# as generated and cannot echo tokens: the replay link is trusted (docs/PROTOCOL.md)
nsenter --net="/run/netns/$ns_s" "$build/xkv-server" --backend xdp --iface "$if_s" \
	--workers 1 --allow "$ip_c/32" --trust "$ip_c/32" --port "$port" >"$out/server.log" 2>&1 &
server_pid=$!
wait_for 100 server_answers || fail "xkv-server does not answer: $(cat "$out/server.log")"

"$build/xkv-trace" gen --workload "$spec" --count "$requests" --seed "$id" \
	--src "$ip_c:$client_port" --dst "$ip_s:$port" \
	--src-mac "$(mac_of "$ns_c" "$if_c")" --dst-mac "$(mac_of "$ns_s" "$if_s")" \
	--out "$out/requests.pcap"

# the client's kernel answers each reply with ICMP port unreachable: record takes UDP only
ip netns exec "$ns_c" "$build/xkv-trace" record --iface "$if_c" --port "$port" \
	--out "$out/replies.pcap" 2>"$out/record.log" &
record_pid=$!
wait_for 50 grep -q recording "$out/record.log" || fail "record: $(cat "$out/record.log")"

# paced: the point is that every request is answered, not how fast
ip netns exec "$ns_c" tcpreplay --intf1="$if_c" --pps="$pps" "$out/requests.pcap" \
	>"$out/tcpreplay.log" 2>&1 || fail "tcpreplay: $(cat "$out/tcpreplay.log")"

# record flushes what it captures: the last replies are in once the file stops growing
size() { stat -c %s "$out/replies.pcap"; }
settled() {
	local before
	before=$(size)
	sleep 0.3
	[ "$(size)" = "$before" ]
}
wait_for 20 settled || fail "replies still coming 8 s after the last request"
kill -INT "$record_pid"
wait "$record_pid" || fail "record: $(cat "$out/record.log")"
record_pid=
cat "$out/record.log"

echo "== xkv-trace check: the replies as captured"
"$build/xkv-trace" check --port "$port" "$out/requests.pcap" "$out/replies.pcap" ||
	fail "the replies are not what the store must answer"

# check must be able to fail: every spoilt copy must exit 1 (2 would be an error)
must_fail() { # NAME WHAT: checks $out/NAME.pcap, its report in $out/NAME.txt
	local rc=0
	echo "== xkv-trace check: $2 (must fail)"
	"$build/xkv-trace" check --port "$port" "$out/requests.pcap" "$out/$1.pcap" \
		>"$out/$1.txt" || rc=$?
	cat "$out/$1.txt"
	[ "$rc" -eq 1 ] || fail "check of $2 exited $rc, not 1"
}

frames=$(tcpdump -r "$out/replies.pcap" 2>/dev/null | wc -l)
tcpdump -r "$out/replies.pcap" -c $((frames - 3)) -w "$out/cut.pcap" 2>/dev/null
must_fail cut "the replies without their last 3 frames"
grep -q '^missing: ' "$out/cut.txt" || fail "the replies cut off are not reported missing"

cp "$out/replies.pcap" "$out/flipped.pcap"
last=$(($(size) - 1))
byte=$(od -An -tu1 -j "$last" -N1 "$out/flipped.pcap")
printf "\\$(printf %03o $((byte ^ 0xff)))" |
	dd of="$out/flipped.pcap" bs=1 seek="$last" conv=notrunc status=none
must_fail flipped "the replies with their last byte flipped"

passed=1
echo "replay: PASS ($requests requests replayed and checked; spoilt replies caught)"
