#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# xkv-loader on a veth pair between two network namespaces this test creates:
# errors, attach, status, bpftool's view of the pinned maps, traffic counted by
# reason, config changes at run time, foreign and stale XDP state, detach.
# Everything it made is removed on every exit path.
#
# usage: netns.sh XKV_LOADER XDP_PASS_BPF_O    (as root)
set -uo pipefail

LOADER=$1
PASS_OBJ=$2
SRV_NS=xkvt-$$-s
CLI_NS=xkvt-$$-c
SRV_IF=xkvs$$
CLI_IF=xkvc$$
SRV_IP=10.199.0.1
CLI_IP=10.199.0.2
PINS=/sys/fs/bpf/xkv/$SRV_IF
PORT=7411
passed=0
failed=0

. "$(dirname "$0")/../skip.sh"
need_xdp_hosts

srv() { nsenter --net="/run/netns/$SRV_NS" "$@"; }
loader() { srv "$LOADER" "$@"; }

cleanup() {
	srv "$LOADER" detach --iface "$SRV_IF" --force >/dev/null 2>&1
	ip netns del "$SRV_NS" 2>/dev/null
	ip netns del "$CLI_NS" 2>/dev/null
	# pins outlive namespaces; these are only ever this test's
	rm -rf "$PINS"
	rmdir /sys/fs/bpf/xkv 2>/dev/null
	true
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# check NAME COMMAND...: runs the command, counts and reports the result
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		passed=$((passed + 1))
		echo "ok   $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		printf '%s\n' "$out" | sed 's/^/     /'
	fi
}

# expect ok|fail PATTERN COMMAND...: the command succeeds or fails, as said, and prints PATTERN
expect() {
	local want=$1 pattern=$2 out got=ok
	shift 2
	out=$("$@" 2>&1) || got=fail
	if [ "$got" != "$want" ]; then
		echo "expected $want, got $got: $out"
		return 1
	fi
	grep -q -- "$pattern" <<<"$out" || {
		echo "no '$pattern' in: $out"
		return 1
	}
}
expect_out() { expect ok "$@"; }
expect_fail() { expect fail "$@"; }

# send N PORT: N xkv GET datagrams of key "key" from the client
send() {
	# a GET of "key", protocol version 2: the 40-byte header, no token (docs/PROTOCOL.md)
	local hdr='\x58\x4b\x02\x01\x00\x00\x00\x03\x00\x00\x00\x01'
	hdr+='\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
	hdr+='\x00\x00\x00\x00\x00\x00\x00\x00'
	ip netns exec "$CLI_NS" bash -c "for i in \$(seq $1); do
		printf '${hdr}key' >/dev/udp/$SRV_IP/$2 || exit 1
	done"
}

# send_mc N PORT: N memcached ASCII GETs of "key", each in its UDP frame (id, sequence 0 of 1)
send_mc() {
	ip netns exec "$CLI_NS" bash -c "for i in \$(seq $1); do
		printf '\x12\x34\x00\x00\x00\x01\x00\x00get key\r\n' >/dev/udp/$SRV_IP/$2 || exit 1
	done"
}

stat_of() {
	loader stats --iface "$SRV_IF" --json | grep -o "\"$1\":[0-9]*" | cut -d: -f2
}

# grows_by NAME BEFORE N: the counter reaches BEFORE+N (XDP on veth runs in NAPI: poll)
grows_by() {
	local now
	for _ in $(seq 50); do
		now=$(stat_of "$1")
		[ "$now" -ge $(($2 + $3)) ] && return 0
		sleep 0.1
	done
	echo "$1 is $now, expected at least $(($2 + $3))"
	return 1
}

# prefix lengths in the pinned allowlist, as bpftool prints them
allow_prefixes() {
	bpftool map dump pinned "$PINS/xkv_allow" | grep -o '"prefixlen": [0-9]*' | cut -d' ' -f2 |
		tr '\n' ' ' | sed 's/ $//'
}

prog_id() {
	loader status --iface "$SRV_IF" --json | grep -o '"prog_id":[0-9]*' | cut -d: -f2
}

no_xdp_left() {
	! ip -n "$SRV_NS" link show dev "$SRV_IF" | grep -q xdp && [ ! -e "$PINS" ]
}

setup() {
	ip netns add "$SRV_NS" && ip netns add "$CLI_NS" &&
		ip link add "$SRV_IF" netns "$SRV_NS" type veth \
			peer name "$CLI_IF" netns "$CLI_NS" &&
		ip -n "$SRV_NS" addr add "$SRV_IP/24" dev "$SRV_IF" &&
		ip -n "$CLI_NS" addr add "$CLI_IP/24" dev "$CLI_IF" &&
		ip -n "$SRV_NS" link set dev "$SRV_IF" up &&
		ip -n "$CLI_NS" link set dev "$CLI_IF" up &&
		ip -n "$SRV_NS" link set dev lo up
}
check "create namespaces $SRV_NS, $CLI_NS and a veth pair" setup
[ "$failed" -eq 0 ] || exit 1

echo "-- errors"
check "not root" expect_fail "must run as root" setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$LOADER" status
check "no such interface" expect_fail "no such interface: nosuch0" \
	loader attach --iface nosuch0 --allow "$CLI_IP"
ip -n "$SRV_NS" link set dev "$SRV_IF" down
check "interface down" expect_fail "is down" loader attach --iface "$SRV_IF" --allow "$CLI_IP"
ip -n "$SRV_NS" link set dev "$SRV_IF" up
check "native mode unsupported (lo)" expect_fail "does not support native mode" \
	loader attach --iface lo --allow "$CLI_IP"
check "bad option value" expect_fail "--policy x: expected erew, crew, minos, dcrew or xkv" \
	loader attach --iface "$SRV_IF" --policy x
check "help" expect_out "Usage: xkv-loader attach" "$LOADER" attach --help

echo "-- attach"
check "attach" loader attach --iface "$SRV_IF" --workers 2 --allow "$CLI_IP/32"
id1=$(prog_id)
check "status names program, mode, policy, pins" expect_out \
	"xkv program 'xkv_xdp' id $id1, native mode" loader status --iface "$SRV_IF"
check "status --json" expect_out '"policy":"xkv","workers":2,"port":7411' \
	loader status --json
check "status: memcached's port by default" expect_out "port 7411, memcached port 11211," \
	loader status --iface "$SRV_IF"
check "attach again is idempotent" loader attach --iface "$SRV_IF" --workers 2 \
	--allow "$CLI_IP/32"
check "same program after the second attach" test "$(prog_id)" = "$id1"
for map in xkv_config xkv_stats xkv_steered xkv_qdepth xkv_allow xkv_xsks; do
	check "pinned $map" test -e "$PINS/$map"
done
check "bpftool: config fields by name" expect_out '"workers": 2' \
	bpftool map dump pinned "$PINS/xkv_config"
check "bpftool: the memcached port by name" expect_out '"memcached_port": 11211' \
	bpftool map dump pinned "$PINS/xkv_config"
check "bpftool: queue depth fields by name" expect_out '"depth": 0' \
	bpftool map dump pinned "$PINS/xkv_qdepth"
check "bpftool: allowlist key fields by name" expect_out '"prefixlen": 128' \
	bpftool map dump pinned "$PINS/xkv_allow"

echo "-- traffic"
before=$(stat_of bad_config)
check "send GETs from an allowed client" send 5 $PORT
# the default policy, xkv, steers by the roles, which only a running server writes
check "... xkv, dropped as bad_config (no server, no roles yet)" grows_by bad_config \
	"$before" 5
before=$(stat_of passed)
xkv_before=$(stat_of no_socket)
check "send GETs to another port" send 3 $((PORT + 1))
check "... passed" grows_by passed "$before" 3
check "... and not taken for xkv" test "$(stat_of no_socket)" = "$xkv_before"
before=$(stat_of bad_config)
check "send memcached GETs to its port" send_mc 3 11211
check "... taken as xkv's: bad_config (no roles yet)" grows_by bad_config "$before" 3

echo "-- config at run time"
check "re-attach: port, policy, workers, allowlist" loader attach --iface "$SRV_IF" \
	--port $((PORT + 1)) --policy crew --workers 3 --allow 10.199.5.0/24
check "same program after the config change" test "$(prog_id)" = "$id1"
check "status shows the new config" expect_out "policy crew, workers 3, port $((PORT + 1))" \
	loader status --iface "$SRV_IF"
before=$(stat_of not_allowed)
check "send GETs to the new port" send 4 $((PORT + 1))
check "... the client is no longer allowed" grows_by not_allowed "$before" 4
check "... the allowlist holds only the new network (/24: 96 + 24)" \
	test "$(allow_prefixes)" = "120"
before=$(stat_of passed)
xkv_before=$(stat_of not_allowed)
check "send GETs to the old port" send 2 $PORT
check "... passed" grows_by passed "$before" 2
check "... and not taken for xkv" test "$(stat_of not_allowed)" = "$xkv_before"
check "memcached's port equal to xkv's is refused" expect_fail "must differ" \
	loader attach --iface "$SRV_IF" --port $PORT --memcached-port $PORT --allow "$CLI_IP/32"
check "re-attach: --memcached-port 0" loader attach --iface "$SRV_IF" --memcached-port 0 \
	--policy crew --allow "$CLI_IP/32"
check "status: memcached port off" expect_out "port $PORT, memcached port off," \
	loader status --iface "$SRV_IF"
check "stats --json: the ports" expect_out '"port":7411,"memcached_port":0' \
	loader stats --iface "$SRV_IF" --json
before=$(stat_of passed)
xkv_before=$(stat_of no_socket)
check "send memcached GETs" send_mc 2 11211
check "... passed" grows_by passed "$before" 2
check "... and not taken for memcached" test "$(stat_of no_socket)" = "$xkv_before"

echo "-- dcrew's Exclusive Writer Table"
# ewt_holds EXPR: EXPR holds of e, the "ewt" object of stats --json
ewt_holds() {
	loader stats --iface "$SRV_IF" --json |
		python3 -c 'import json, sys
e = json.load(sys.stdin)["ewt"]
sys.exit(not eval(sys.argv[1]))' "$1"
}
no_ewt_section() { ! loader stats --iface "$SRV_IF" --json | grep -q '"ewt"'; }
check "attach --policy dcrew" loader attach --iface "$SRV_IF" --policy dcrew --workers 4 \
	--allow "$CLI_IP/32"
check "status shows policy dcrew" expect_out "policy dcrew, workers 4" \
	loader status --iface "$SRV_IF"
check "bpftool: EWT slot fields by name" expect_out '"writes": 0' \
	bpftool map dump pinned "$PINS/xkv_ewt"
check "bpftool: EWT counters by name" expect_out '"cas_retry": 0' \
	bpftool map dump pinned "$PINS/xkv_ewt_stats"
check "hold slot 7 for worker 2 with 3 writes, as XDP would" \
	bpftool map update pinned "$PINS/xkv_ewt" key 7 0 0 0 value 2 0 0 0 3 0 0 0
check "bpftool shows the slot's owner and writes" expect_out '"owner": 2' \
	bpftool map dump pinned "$PINS/xkv_ewt"
check "stats --json: one EWT slot active, no most-seen without a server" \
	ewt_holds 'e["active"] == 1 and "active_max" not in e'
check "stats --json: the EWT's counters" \
	ewt_holds 'all(type(e[k]) is int for k in ("taken", "conflicts", "cas_retries", "dropped"))'
check "stats: the EWT section in text" expect_out "active           1" \
	loader stats --iface "$SRV_IF"
check "stats: ewt_busy among the drop reasons" expect_out "ewt_busy         0" \
	loader stats --iface "$SRV_IF"
check "re-attach under xkv" loader attach --iface "$SRV_IF" --policy xkv --workers 4 \
	--allow "$CLI_IP/32"
check "status shows policy xkv" expect_out "policy xkv, workers 4" \
	loader status --iface "$SRV_IF"
check "stats --json under xkv: the EWT section, its slot still held" ewt_holds 'e["active"] == 1'
check "re-attach under crew" loader attach --iface "$SRV_IF" --policy crew --workers 4 \
	--allow "$CLI_IP/32"
check "... stats has no EWT section" no_ewt_section

echo "-- JSON of names that need escaping"
# a quote, a backslash and a control character: all allowed in an interface name
ODD_IF=$'j"\\\x01'
status_names_odd_if() {
	local json
	json=$(loader status --iface "$ODD_IF" --json) &&
		python3 -m json.tool >/dev/null <<<"$json" &&
		python3 -c 'import json, sys
assert json.loads(sys.argv[1])[0]["ifname"] == sys.argv[2]' "$json" "$ODD_IF"
}
check "an interface named j, quote, backslash, 0x01" \
	ip -n "$SRV_NS" link add "$ODD_IF" type veth peer name "${ODD_IF}p"
check "status --json of it parses and names it" status_names_odd_if
ip -n "$SRV_NS" link del "$ODD_IF" 2>/dev/null

echo "-- foreign and stale state"
check "detach" loader detach --iface "$SRV_IF"
check "detach left no program and no pins" no_xdp_left
check "attach a foreign XDP program" ip -n "$SRV_NS" link set dev "$SRV_IF" xdpdrv \
	obj "$PASS_OBJ" sec xdp
check "attach refuses to replace it" expect_fail "already runs XDP program 'xdp_pass'" \
	loader attach --iface "$SRV_IF" --allow "$CLI_IP"
check "detach refuses to remove it" expect_fail "not xkv" loader detach --iface "$SRV_IF"
check "attach --force replaces it" loader attach --iface "$SRV_IF" --force --allow "$CLI_IP"
check "status: xkv now" expect_out "xkv program" loader status --iface "$SRV_IF"
ip -n "$SRV_NS" link set dev "$SRV_IF" xdpdrv off
check "pins without a program show as stale" expect_out "stale pins" \
	loader status --iface "$SRV_IF"
check "attach over stale pins" expect_out "removing stale pins" \
	loader attach --iface "$SRV_IF" --allow "$CLI_IP"
rm -rf "$PINS"
check "attach over a program without pins" loader attach --iface "$SRV_IF" --allow "$CLI_IP"
check "... pins it again" test -e "$PINS/xkv_config"
check "switch to skb mode" loader attach --iface "$SRV_IF" --mode skb --allow "$CLI_IP"
check "status: skb mode" expect_out "skb mode" loader status --iface "$SRV_IF"
check "detach" loader detach --iface "$SRV_IF"
check "detach left no program and no pins" no_xdp_left
check "detach twice is harmless" expect_out "nothing attached" loader detach --iface "$SRV_IF"

echo "-- bpffs not mounted"
nobpffs() {
	unshare --mount --propagation private bash -c "
		umount /sys/fs/bpf 2>/dev/null
		nsenter --net=/run/netns/$SRV_NS $LOADER attach --iface $SRV_IF --allow $CLI_IP &&
		nsenter --net=/run/netns/$SRV_NS $LOADER detach --iface $SRV_IF"
}
check "attach mounts bpffs itself" expect_out "mounted bpffs" nobpffs
check "and its detach left no program" no_xdp_left

echo "-- teardown"
cleanup
check "no namespace left" bash -c "! ip netns list | grep -q xkvt-$$-"
check "no pins left" test ! -e "$PINS"

echo "netns: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
