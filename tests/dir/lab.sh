#!/usr/bin/env bash
# The coherence directory's program on a real data path (docs/DIRECTORY.md): the lab of
# tools/netns-dir.sh with two servers, bpf/dir.bpf.o loaded and attached to the
# directory host's three veths with bpftool and ip(8), its maps written with bpftool,
# two xkv-servers (io_uring backend) and a client that speaks version 3 (lab.py).
# Checks what BPF_PROG_RUN cannot: a steered datagram leaves by the FIB and a redirect
# (or the kernel's forwarding before the neighbour is known) and reaches the chosen
# server, which applies a steered write by its version and vouches for it; every read
# after the write's reply returns its value; the reply reaches a client socket
# connected to the address it sent to; ping and TCP cross untouched; the replica set
# and the counters, read back with bpftool, say what happened. Namespaces, pins and
# processes are removed on every way out.
#   lab.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: lab.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
need_xdp_hosts
need_commands /usr/bin/python3 ping
dir_prefix="xl$$"
pin="/sys/fs/bpf/xkv-dir-lab-$$"
. "$here/lab_env.sh"

mkdir -p "$pin"
# its two programs and its maps, each pinned by its name: the XDP one is attached here
bpftool prog loadall "$build/bpf/dir.bpf.o" "$pin" pinmaps "$pin"
for ifname in "${dir_ifaces[@]}"; do
	in_d ip link set dev "$ifname" xdpdrv pinned "$pin/xkv_dir"
done


# port 7411, round-robin, 2 servers, both live, one server a write, no popularity threshold
map_set xkv_dir_config "$(le 0 4)" "$(le 7411 2) 00 02 $(le 3 4) $(le 0 4) 00 00 00 00 $(le 0 4)"
for i in 0 1; do
	addr="0a 00 0$((i + 1)) 01" port="1c f3" # 10.0.(i+1).1:7411, network order
	map_set xkv_dir_servers "$(le $i 4)" "$addr $port 00 00"
	map_set xkv_dir_addrs "$addr $port 00 00" "$(le $i 4)"
done
# "hot" replicated on server 1 at version 5, home server 0 (xkv_hash("hot") below)
hot_hash=0xdb918ac64422c716
map_set xkv_dir_keys "$(le $hot_hash 8)" \
	"$(le 0 4) $(le 2 4) $(le 5 8) $(le 5 8) $(le 0 4) $(le 0 4) $(le 0 8) $(le 0 8)"

# the servers, each holding "hot" and "cold" as written without the directory: s<id>
lab_servers
for i in 0 1; do
	in_s $i put hot "s$i" >/dev/null && in_s $i put cold "s$i" >/dev/null ||
		fail "seeding server $i"
done

ip netns exec "$c" ping -c 1 -W 2 10.0.1.1 >/dev/null || fail "ping does not cross the directory"
ip netns exec "$(dir_lab_ns_s 0)" python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080)); s.listen(1); c, _ = s.accept(); c.sendall(c.recv(100))' &
pids+=($!)
sleep 0.3
ip netns exec "$c" python3 -c '
import socket, sys
s = socket.create_connection(("10.0.1.1", 8080), timeout=2); s.sendall(b"tcp")
sys.exit(s.recv(100) != b"tcp")' || fail "TCP does not cross the directory"

# the datagrams the directory's kernel forwarded, against those XDP redirected
forwarded() { ip netns exec "$d" awk '/^Ip: [0-9]/ {print $7}' /proc/net/snmp; }
forwarded_before=$(forwarded)
result=$(ip netns exec "$c" python3 "$here/lab.py" client 10.0.1.1 hot cold 2>&1) ||
	fail "the client: $result"
echo "$result" | head -1
# 14 xkv datagrams crossed, 7 requests and their replies (an eighth request, version 2,
# was dropped). The kernel forwards those sent before their next hop's neighbour was
# known; XDP redirects the rest
kernel=$(($(forwarded) - forwarded_before))
[ "$kernel" -le 4 ] || fail "the kernel forwarded $kernel of the 14 xkv datagrams: no redirect"
echo "lab: $kernel of 14 datagrams forwarded by the kernel, the others redirected by XDP"

# what the directory holds now, as bpftool shows it (BTF: fields by name)
entry=$(bpftool -j map lookup pinned "$pin/xkv_dir_keys" key hex $(le $hot_hash 8))
# the writer, the replica set's one server: the one that acknowledged the write
writer=$(python3 -c '
import json, sys
e = json.loads(sys.argv[1])["formatted"]["value"]
print(e["rset"] - 1)
sys.exit(not (e["rset"] in (1, 2) and e["ver_curr"] == 6 and e["ver_next"] == 6 and
              e["reads"] == 5 and e["writes"] == 1))' "$entry") ||
	fail "the replica set after the write: $entry"
# the version 2 request was dropped and counted: no_extension's slot, XKV_DIR_STATS's order
slot=$(sed -n '/^#define XKV_DIR_STATS(X)/,/^$/p' "$here/../../include/xkv/dir.h" |
	grep -o 'X([A-Z_]*,' | grep -n 'X(NO_EXTENSION,' | cut -d: -f1)
stats=$(bpftool -j map lookup pinned "$pin/xkv_dir_stats" key hex $(le $((slot - 1)) 4))
python3 - "$stats" <<'PY' || fail "no_extension, per CPU: $stats"
import json, sys
sys.exit(sum(c["value"] for c in json.loads(sys.argv[1])["formatted"]["values"]) != 1)
PY
other=$((1 - writer))
[ "$(in_s "$writer" get hot)" = new ] || fail "server $writer does not hold the write"
[ "$(in_s "$other" get hot)" = "s$other" ] || fail "server $other took a write not sent to it"
echo "lab: the replica set is {s$writer} at version 6, 5 reads and 1 write steered"
