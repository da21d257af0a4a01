#!/usr/bin/env bash
# memcached over UDP through the XDP backend (docs/MEMCACHED.md, "Over UDP"): a server
# host and a client host (tools/netns-pair.sh), xkv-server --backend xdp with its
# memcached port on one, xkv-bench --protocol memcached and memcached-binary on the
# other, with the kernel's UDP stack and with the AF_XDP client. Each run loads every
# key, then reads and writes them: every reply checked byte for byte (no error, no
# miss, none invalid). A 100,000-byte value set over TCP comes back over UDP, ASCII and
# binary, byte-exact in datagrams of 1400 bytes numbered by the frame. Then two workers under each policy, hot keys half written: the
# same checks, and no write applied beside its owner or without its EWT slot, and
# under xkv memcached SETs held in compaction windows. Then without --trust: a GET
# whose reply is over 3x its request is refused, counted, never answered with the value.
# Everything made here goes on every way out.
#   xdp_memcached.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: xdp_memcached.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../../tools/bench/server-host.sh"
. "$(dirname "$0")/../skip.sh"
. "$(dirname "$0")/../counters.sh"
need_xdp_hosts
ns_s="xkvm-$$-s" ns_c="xkvm-$$-c" if_s="xms$$" if_c="xmc$$" ip_s=10.204.0.1 ip_c=10.204.0.2
out=$(mktemp -d /tmp/xkv-xdp-memcached.XXXXXX)
server_port=11211

cleanup() {
	server_host_down
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

# the server pins its worker to CPU 0: two busy pollers on one CPU starve each other
client_cpu=$(($(nproc) - 1))

# One run against the server; its JSON object must pass the python checks in $2.
check_run() {
	local name=$1 checks=$2
	shift 2
	in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s:$server_port" \
		--keys 1000 --duration 0.5 --timeout-ms 1000 --json --label "$name" "$@" \
		>"$out/$name.json" 2>"$out/$name.err" ||
		fail "$name: xkv-bench exited $?: $(cat "$out/$name.err")"
	/usr/bin/python3 - "$out/$name.json" "$checks" <<'PY' || fail "$name: $(cat "$out/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
load, get, put = r["load"], r["get"], r["put"]
ok = {op: r[op]["ops"] - r[op]["misses"] for op in ("get", "put")}
exec(sys.argv[2])
print(f"{r['label']}: {r['all']['ops_per_s']:.0f} ops/s, get ok {ok['get']} "
      f"misses {get['misses']} errors {get['errors']}, put ok {ok['put']}, "
      f"p99 {r['all']['p99_us']:.1f} us")
PY
}

# Every key loaded, every GET a hit with the value written, every SET stored.
served='
assert load["ok"] == r["keys"] and load["errors"] == 0, "not every key loaded"
for op in ("get", "put"):
    assert r[op]["errors"] == 0, f"{op}: wrong answers"
assert r["invalid"] == 0, "datagrams that are no reply"
assert ok["get"] > 0 and ok["put"] > 0, "no answers"
assert get["misses"] == 0, "misses of loaded keys"
'

# the hot keys' run under each policy on two workers: writes handed over, EWT, windows
hot='--keys 200 --zipf 0.99 --get-ratio 0.5 --value-size 300'

netns_pair_up
# trusted: the client's link cannot be spoofed, so values may be over 3x a GET
server_run server memcached "$build/xkv-server" --backend xdp --iface "$if_s" --workers 1 \
	--allow "$ip_c/32" --trust "$ip_c/32" --memcached-port "$server_port" ||
	fail "no server"
for proto in memcached memcached-binary; do
	check_run "$proto-udp" "$served" --protocol "$proto" --get-ratio 0.9 --value-size 512
	check_run "$proto-xdp" "$served" --protocol "$proto" --get-ratio 0.9 --value-size 512 \
		--transport xdp --iface "$if_c"
done
# a value over one datagram, set over TCP and read over UDP through XDP in both dialects
# (xkv-bench reads one-datagram replies only): every datagram at most 1400 bytes, its
# frame numbered i of n, and the reassembled reply the exact value
in_client /usr/bin/python3 - "$ip_s" "$server_port" <<'PY' || fail "a reply in several datagrams"
import socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
big = bytes((i * 7 + i // 251) % 256 for i in range(100000))
tcp = socket.create_connection((host, port), timeout=2)
tcp.sendall(b"set big 42 0 %d\r\n" % len(big) + big + b"\r\nset small 7 0 2\r\nhi\r\n")
got = b""
while got.count(b"STORED\r\n") < 2:
    got += tcp.recv(100)
assert got == b"STORED\r\nSTORED\r\n", got
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.settimeout(2)

def ask(rid, body):
    udp.sendto(struct.pack("!HHHH", rid, 0, 1, 0) + body, (host, port))
    parts, total = {}, None
    while total is None or len(parts) < total:
        d = udp.recv(2000)
        assert len(d) <= 1400, f"a datagram of {len(d)} bytes"
        r, seq, n, zero = struct.unpack("!HHHH", d[:8])
        assert r == rid and zero == 0 and total in (None, n) and seq < n, (r, seq, n)
        total = n
        parts[seq] = d[8:]
    return total, b"".join(parts[i] for i in range(total))

n, reply = ask(1, b"get big small\r\n")
want = b"VALUE big 42 %d\r\n" % len(big) + big + b"\r\nVALUE small 7 2\r\nhi\r\nEND\r\n"
assert reply == want, "ASCII reply differs"
print(f"ascii: {n} datagrams, {len(reply)} bytes, exact")
hdr = struct.pack("!BBHBBHIIQ", 0x80, 0x00, 3, 0, 0, 0, 3, 0xfeed, 0)
n, reply = ask(2, hdr + b"big")
magic, op, klen, elen, _, status, blen, opaque = struct.unpack("!BBHBBHII", reply[:16])
assert (magic, op, status, opaque, elen, klen) == (0x81, 0, 0, 0xfeed, 4, 0), reply[:24]
assert blen == 4 + len(big) and reply[24:28] == struct.pack("!I", 42), "flags"
assert reply[28:] == big, "binary value differs"
print(f"binary: {n} datagrams, {len(reply)} bytes, exact")
PY
server_stop || fail "the server did not stop cleanly"
for policy in erew crew minos dcrew xkv; do
	server_run "server" memcached "$build/xkv-server" --backend xdp --iface "$if_s" \
		--workers 2 --allow "$ip_c/32" --trust "$ip_c/32" --policy "$policy" ||
		fail "no server under $policy"
	for proto in memcached memcached-binary; do
		# shellcheck disable=SC2086 # $hot is a list of options
		check_run "$proto-$policy" "$served" --protocol "$proto" $hot
	done
	server_stop || fail "$policy: the server did not stop cleanly"
	for c in foreign_writes ewt_not_owner mc_dropped mc_errors; do
		n=$(server_counter "$out/server.log" "$c")
		[ "$n" -eq 0 ] || fail "$policy: $c $n"
	done
	if [ "$policy" = xkv ]; then
		n=$(server_counter "$out/server.log" compact_windows)
		[ "$n" -gt 0 ] || fail "xkv: no compaction window opened for the hot keys' SETs"
	fi
done

# untrusted: a 512-byte value is over 3x a GET, which gets an error, never the value
server_run server memcached "$build/xkv-server" --backend xdp --iface "$if_s" --workers 1 \
	--allow "$ip_c/32" --memcached-port "$server_port" || fail "no server"
for proto in memcached memcached-binary; do
	check_run "$proto-untrusted" '
assert load["ok"] == 1000, "SETs are answered: their replies are small"
assert get["ops"] == 0, "a value went to an untrusted source"
assert get["errors"] > 0, "no GET answered the error"
' --protocol "$proto" --get-ratio 1 --value-size 512 --key-size 17
done
server_stop || fail "the server did not stop cleanly"
refused=$(server_counter "$out/server.log" mc_amplify_refused)
[ "$refused" -gt 0 ] || fail "no GET counted as refused: $(cat "$out/server.log")"
for c in mc_dropped mc_errors; do
	n=$(server_counter "$out/server.log" "$c")
	[ "$n" -eq 0 ] || fail "$c: $n"
done
echo "untrusted: $refused GETs refused"
