#!/usr/bin/env bash
# Runs a test binary against a client and a server host: two network namespaces
# joined by a veth pair, made here and removed on every way out (processes left
# in them are killed, pins of the server interface removed).
#   run-in-netns.sh TEST_BINARY [ARGS...]
set -euo pipefail

id=$$
export XKV_NS_SERVER="xkvt-$id-s" XKV_NS_CLIENT="xkvt-$id-c"
export XKV_IFACE="xs$id" XKV_CLIENT_IFACE="xc$id"
export XKV_SERVER_IP=10.201.0.1 XKV_CLIENT_IP=10.201.0.2 XKV_STRANGER_IP=10.201.0.3

cleanup() {
	for ns in "$XKV_NS_SERVER" "$XKV_NS_CLIENT"; do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "/sys/fs/bpf/xkv/$XKV_IFACE"
	rmdir /sys/fs/bpf/xkv 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$XKV_NS_SERVER"
ip netns add "$XKV_NS_CLIENT"
ip link add "$XKV_IFACE" type veth peer name "$XKV_CLIENT_IFACE"
ip link set "$XKV_IFACE" netns "$XKV_NS_SERVER"
ip link set "$XKV_CLIENT_IFACE" netns "$XKV_NS_CLIENT"
ip -n "$XKV_NS_SERVER" addr add "$XKV_SERVER_IP/24" dev "$XKV_IFACE"
ip -n "$XKV_NS_CLIENT" addr add "$XKV_CLIENT_IP/24" dev "$XKV_CLIENT_IFACE"
# a second client address that the server's allowlist leaves out
ip -n "$XKV_NS_CLIENT" addr add "$XKV_STRANGER_IP/24" dev "$XKV_CLIENT_IFACE"
for ns in "$XKV_NS_SERVER" "$XKV_NS_CLIENT"; do ip -n "$ns" link set lo up; done
ip -n "$XKV_NS_SERVER" link set "$XKV_IFACE" up
ip -n "$XKV_NS_CLIENT" link set "$XKV_CLIENT_IFACE" up

# one server at a time on the one interface; not exec: the trap must run after
export CRITERION_JOBS=1
"$@"
