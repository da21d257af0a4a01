#!/usr/bin/env bash
# memcached over TCP end to end (docs/MEMCACHED.md): xkv-server with 2 workers, driven
# by tests/memcached/tcp_client.py (pymemcache and raw sockets). BACKEND uring: over
# loopback under crew and erew; xdp: in a server and a client namespace joined by veth
# (tools/netns-pair.sh) under xkv, dcrew and minos, and a source outside --allow. Two
# runs, so that a machine without the XDP hosts skips the XDP half, not passes it.
# Each server must stop cleanly (exit 0: an ASan build reports leaks there). Under a
# static owner (crew, erew, minos) the clients' writes must have reached a worker
# that is not their partition's writer and been handed over: handoffs_sent > 0 and
# none refused; under dcrew and xkv every write joined its EWT slot. On uring, the
# connection limit holds against idle connections and a slowloris, and one worker
# alone counts its TCP commands as busy time. Servers are stopped by PID on every way
# out.
#   tests/memcached/tcp.sh BUILD_DIR uring|xdp
set -euo pipefail

usage="usage: tcp.sh BUILD_DIR uring|xdp"
build=$(cd "${1:?$usage}" && pwd)
backend=${2:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
. "$here/../counters.sh"
. "$here/../../tools/netns-pair.sh"
case $backend in
uring) need_bpf "$build" sk_reuseport ;; # its steering program, as test_server_uring
xdp) need_xdp_hosts ;;
*)
	echo "$usage" >&2
	exit 2
	;;
esac
python=/usr/bin/python3 # Debian's, which has python3-pymemcache
"$python" -c 'import pymemcache' 2>/dev/null ||
	skip "python3-pymemcache is not installed (make deps installs it)"

id=$$
# two ports below the ephemeral ones that nothing listens on (other tests' memcacheds)
port=$((20000 + id % 6000 * 2))
while ss -Htuln | grep -qE ":($port|$((port + 1)))\b"; do port=$((port + 2)); done
mc_port=$((port + 1))
ns_s="xkvt-$id-ms" ns_c="xkvt-$id-mc" if_s="xms$id" if_c="xmc$id"
ip_s=10.204.0.1 ip_c=10.204.0.2
out=$(mktemp -d /tmp/xkv-memcached.XXXXXX)
server_pid= netns= passed=

cleanup() {
	[ -n "$server_pid" ] && stop_pid "$server_pid" 5
	if [ -n "$netns" ]; then netns_pair_down; fi
	if [ "$passed" = 1 ]; then
		rm -rf "$out"
	else
		echo "memcached tcp ($backend): FAILED; logs kept in $out" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "memcached tcp: $*" >&2
	exit 1
}

# serve NAME HOST RUN... -- SERVER_ARGS...: a server of its own (RUN: how to start a
# program on the server's host), the client suite from $client_run against HOST, the
# server stopped and its counters checked
serve() {
	local name=$1 host=$2 log="$out/$1.server.log" run=() sent refused writes busy
	shift 2
	while [ "$1" != -- ]; do run+=("$1"); shift; done
	shift
	echo "== $name: xkv-server $*"
	: >"$log"
	"${run[@]}" "$build/xkv-server" --workers 2 --port "$port" --memcached-port "$mc_port" \
		"$@" >"$log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q "memcached on TCP port $mc_port" "$log" && break
		kill -0 "$server_pid" 2>/dev/null || fail "$name: xkv-server exited: $(cat "$log")"
		sleep 0.1
	done
	grep -q "memcached on TCP port" "$log" || fail "$name: xkv-server did not start: $(cat "$log")"
	"${client_run[@]}" "$python" "$here/tcp_client.py" "$host" "$mc_port" 8 ||
		fail "$name: the client suite failed (server log: $log)"
	stop_pid "$server_pid" 5
	server_pid=
	[ -z "$stopped" ] || fail "$name: xkv-server: $stopped: $(tail -20 "$log")"
	sent=$(server_counter "$log" handoffs_sent)
	refused=$(server_counter "$log" handoffs_refused)
	writes=$(server_counter "$log" store_writes)
	busy=$(server_counter "$log" busy_ns)
	echo "$name: handoffs_sent $sent, handoffs_refused $refused, store_writes $writes," \
		"busy_ns $busy"
	[ "$refused" -eq 0 ] || fail "$name: hand-offs refused"
	[ "$writes" -ge 3200 ] || fail "$name: TCP writes not counted"
	# the suite is all TCP: its commands are the workers' work (and hand-offs, if any)
	[ "$busy" -gt 0 ] || fail "$name: busy_ns 0: TCP commands not counted as work"
}

# serve_owned NAME ...: as serve, under a policy with one writer per partition: some
# writes must have been handed to it
serve_owned() {
	local sent
	serve "$@"
	sent=$(server_counter "$out/$1.server.log" handoffs_sent)
	[ "$sent" -gt 0 ] || fail "$1: no write was handed to its partition's writer"
}

# The connection limit (-c, memcached's): 1,000 idle connections and a slowloris (a
# byte every 100 ms, never a command) against a limit of 64 cannot keep an honest
# client out for more than the second an idle one takes to give way; it is served,
# and stats counts the kicks and the connections refused while none was idle yet.
limit_holds() {
	local log="$out/limit.server.log" result
	echo "== limit: xkv-server -c 64 against 1,000 idle connections and a slowloris"
	"$build/xkv-server" --workers 2 --backend uring --port "$port" --memcached-port "$mc_port" \
		-c 64 >"$log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q "memcached on TCP port" "$log" && break
		sleep 0.1
	done
	result=$("$python" - "$mc_port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
slow = socket.create_connection(("127.0.0.1", port), timeout=5) # in before the limit
idle = []
for _ in range(1000):
	try:
		idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
	except OSError:
		pass
for _ in range(12): # a byte every 100 ms: 1.2 s, never a whole command
	try:
		slow.sendall(b"g")
	except OSError:
		pass # given way already
	time.sleep(0.1)
honest = socket.create_connection(("127.0.0.1", port), timeout=5)
honest.sendall(b"version\r\n")
answer = honest.recv(100)
honest.sendall(b"stats\r\n")
stats = b""
while not stats.endswith(b"END\r\n"):
	stats += honest.recv(65536)
honest.sendall(b"stats settings\r\n")
settings = b""
while not settings.endswith(b"END\r\n"):
	settings += honest.recv(65536)
get = lambda text, name: next(l.split()[2] for l in text.decode().splitlines() if l.split()[1:2] == [name])
print("served" if answer.startswith(b"VERSION ") else "refused", get(stats, "idle_kicks"),
      get(stats, "rejected_connections"), get(settings, "maxconns"))
PY
) || fail "limit: the clients failed (server log: $log)"
	stop_pid "$server_pid" 5
	server_pid=
	[ -z "$stopped" ] || fail "limit: xkv-server: $stopped: $(tail -20 "$log")"
	read -r verdict kicks rejected maxconns <<<"$result"
	echo "limit: honest client $verdict; idle_kicks $kicks, rejected_connections $rejected, maxconns $maxconns"
	[ "$verdict" = served ] || fail "limit: an honest client was kept out"
	[ "$kicks" -ge 1 ] && [ "$rejected" -ge 900 ] && [ "$maxconns" = 64 ] ||
		fail "limit: idle_kicks $kicks, rejected_connections $rejected, maxconns $maxconns"
}

if [ "$backend" = uring ]; then
	client_run=(env)
	serve_owned uring-crew 127.0.0.1 env -- --backend uring
	serve_owned uring-erew ::1 env -- --backend uring --policy erew
	# one worker: no hand-off to count as work, only the TCP commands themselves
	serve uring-one 127.0.0.1 env -- --backend uring --workers 1
	limit_holds
else
	netns=1
	netns_pair_up
	client_run=(ip netns exec "$ns_c")
	# nsenter, not ip netns exec: the server pins its maps in /sys/fs/bpf
	server_run=(nsenter --net="/run/netns/$ns_s")
	for policy in xkv dcrew; do
		serve "xdp-$policy" "$ip_s" "${server_run[@]}" -- --iface "$if_s" \
			--policy "$policy" --allow "$ip_c/32"
		# every TCP write joined its partition's EWT slot, and found it held for it
		log="$out/xdp-$policy.server.log"
		joined=$(server_counter "$log" ewt_joined)
		not_owner=$(server_counter "$log" ewt_not_owner)
		[ "$joined" -ge 3200 ] && [ "$not_owner" -eq 0 ] ||
			fail "xdp-$policy: ewt_joined $joined, ewt_not_owner $not_owner"
	done
	serve_owned xdp-minos "$ip_s" "${server_run[@]}" -- --iface "$if_s" --policy minos \
		--allow "$ip_c/32"
	# a source outside --allow is closed at accept
	: >"$out/refused.server.log"
	"${server_run[@]}" "$build/xkv-server" --workers 2 --port "$port" --iface "$if_s" \
		--memcached-port "$mc_port" --allow 10.99.0.0/16 >"$out/refused.server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q "memcached on TCP port" "$out/refused.server.log" && break
		sleep 0.1
	done
	refused=$("${client_run[@]}" "$python" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(b"version\r\n")
try:
    print("closed" if s.recv(100) == b"" else "answered")
except ConnectionResetError:
    print("closed")' "$ip_s" "$mc_port")
	stop_pid "$server_pid" 5
	server_pid=
	[ -z "$stopped" ] || fail "refused: xkv-server: $stopped: $(tail -20 "$out/refused.server.log")"
	[ "$refused" = closed ] || fail "a source outside --allow was $refused"
	rejected=$(server_counter "$out/refused.server.log" "memcached rejected_connections")
	[ "$rejected" -ge 1 ] || fail "the refused connection is not counted"
	echo "xdp: a source outside --allow is closed at accept"
fi
passed=1
echo "memcached tcp ($backend): passed"
