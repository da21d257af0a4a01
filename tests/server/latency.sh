#!/usr/bin/env bash
# Latency inside the server (include/xkv/latency.h, docs/DESIGN.md "Latency"): every
# path a request takes keeps the kernel's arrival stamp, so the server times it and
# counts none unstamped. An XDP server (xkv policy, two workers, compaction) on a server
# host (tools/netns-pair.sh) is driven path by path: xkv requests in one datagram,
# values in pieces, a hot key's PUT storm (compaction windows), bimodal sizes (minos's
# hand-offs), memcached over UDP and over TCP. After each, `xkv-loader stats --since`
# takes that path's own histograms: the requests the client saw answered are counted
# there, and lat_unstamped stays 0. A held PUT's queued time includes its window: the
# PUTs' queued time is at least compact_wait_ns. memcached's `stats` over TCP shows the
# percentiles. Then the io_uring backend: its
# datagrams' SO_TIMESTAMPNS and memcached over TCP, read from the server's final print.
# Last, minos against erew on a bimodal load: the small class's server-side p99 far
# below the large one's under minos only.
#   latency.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: latency.sh BUILD_DIR}" && pwd)
here=$(dirname "$0")
. "$here/../../tools/bench/server-host.sh"
. "$here/../skip.sh"
. "$here/../counters.sh"
need_xdp_hosts
ns_s="xkvlt-$$-s" ns_c="xkvlt-$$-c" if_s="xlt$$" if_c="xltc$$" ip_s=10.205.0.1 ip_c=10.205.0.2
out=$(mktemp -d /tmp/xkv-latency.XXXXXX)

cleanup() {
	server_host_down
	[ -n "${KEEP:-}" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

client_cpu=$(($(nproc) - 1))
phase_n=0

# bench NAME ARGS...: xkv-bench from the client host, its JSON in $out/NAME.json.
bench() {
	local name=$1
	shift
	in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" --json \
		--label "$name" --timeout-ms 1000 "$@" >"$out/$name.json" 2>"$out/$name.err" ||
		fail "$name: xkv-bench exited $?: $(cat "$out/$name.err")"
}

# mc_tcp N: N memcached sets then N gets over TCP from the client host, all answered.
mc_tcp() {
	in_client /usr/bin/python3 - "$ip_s" "$1" <<'PY' || fail "memcached over TCP"
import socket, sys
s = socket.create_connection((sys.argv[1], 11211), timeout=5)
f = s.makefile("rb")
n = int(sys.argv[2])
for i in range(n):
    s.sendall(b"set lat%d 0 0 5\r\nhello\r\n" % i)
    assert f.readline() == b"STORED\r\n"
for i in range(n):
    s.sendall(b"get lat%d\r\n" % i)
    assert f.readline().startswith(b"VALUE"), "no value"
    f.readline(); assert f.readline() == b"END\r\n"
s.sendall(b"stats\r\n")
stats = {}
while (line := f.readline()) != b"END\r\n":
    _, k, v = line.decode().split()
    stats[k] = v
assert int(stats["latency_memcached_total_p50_ns"]) > 0, stats
PY
}

# phase NAME CHECKS: the histograms since the last phase, checked by CHECKS (python).
phase() {
	local name=$1 checks=$2 since=()
	[ "$phase_n" -eq 0 ] || since=(--since "$out/snap$phase_n")
	phase_n=$((phase_n + 1))
	in_server "$build/xkv-loader" stats --iface "$if_s" --json "${since[@]}" \
		--save "$out/snap$phase_n" >"$out/$name.stats" || fail "$name: xkv-loader stats"
	/usr/bin/python3 - "$out" "$name" "$checks" <<'PY' || fail "$name: $(tail -c 3000 "$out/$name.stats")"
import json, sys
out, name, checks = sys.argv[1:]
st = json.load(open(f"{out}/{name}.stats"))
workers = st["workers"]
lat = [h for h in st["latency"] if "worker" not in h]  # every worker's merged

def count(op, interval="total", cls=None):
    return sum(h["count"] for h in lat
               if h["op"] == op and h["interval"] == interval and cls in (None, h["class"]))

def total(name):  # a counter summed over the workers (since the server started)
    return sum(w[name] for w in workers)

def weighted(op, interval):  # the interval's sum over requests, from the buckets
    return sum(lo * n for h in lat if h["op"] == op and h["interval"] == interval
               for lo, n in h["buckets"])

def client(label):
    return json.load(open(f"{out}/{label}.json"))

assert total("lat_unstamped") == 0, f"unstamped requests: {total('lat_unstamped')}"
assert total("lat_lost") == 0, f"samples lost: {total('lat_lost')}"
exec(checks)
print(f"{name}: " + ", ".join(f"{h['op']} {h['class']}: {h['count']}, p99 {h['p99_ns']} ns"
                             for h in lat if h["interval"] == "total"))
PY
}

netns_pair_up
server_start xdp --workers 2 --policy xkv --compaction on --trust "$ip_c/32" \
	--minos-epoch-ms 100
# the probe's GET is the first request: the phases count from the first snapshot
phase start "assert count('get') >= 1"

bench single --keys 200 --get-ratio 0.5 --duration 0.5
phase single "
r = client('single')
assert count('get') >= r['get']['ops'] and count('put') >= r['put']['ops'] + r['load']['ok'], r
"

bench pieces --keys 4 --get-ratio 0.5 --value-size 100000 --duration 0.5 --depth 2
phase pieces "
r = client('pieces')
assert count('put', cls='lt128k') >= r['put']['ops'] + r['load']['ok'], 'PUTs in pieces uncounted'
assert count('get', cls='lt128k') >= r['get']['ops'] - r['get']['misses'], 'GETs in pieces uncounted'
"

bench storm --keys 1 --get-ratio 0 --threads 2 --depth 32 --duration 0.5
phase storm "
r = client('storm')
assert count('put') >= r['put']['ops'], r
assert total('compact_wait_ns') > 0, 'no PUT waited in a window'
# held PUTs are queued until their window closes: what they waited there is queued time
# (test_execute's latency_of_a_held_put_counts_its_window_as_queued pins it exactly)
assert weighted('put', 'queued') >= 0.98 * total('compact_wait_ns'), \
    (weighted('put', 'queued'), total('compact_wait_ns'))
"

bench bimodal --keys 200 --get-ratio 0.9 --value-profile bimodal --large-pct 20 \
	--large-size 50000 --large-keys 10 --duration 1.5 --depth 4
phase handoffs "
assert total('handoffs_taken') > 0, 'minos handed nothing: the path is not tested'
assert total('handoff_wait_ns') > 0
assert count('get', cls='lt64k') > 0
"

bench mc-udp --protocol memcached --keys 100 --get-ratio 0.5 --duration 0.5 \
	--server "$ip_s:11211"
phase mc-udp "
r = client('mc-udp')
assert count('memcached') >= r['get']['ops'] + r['put']['ops'], r
"

mc_tcp 50
phase mc-tcp "
assert count('memcached') >= 100 + 1, 'the stats command counts too'
assert count('get') == count('put') == 0, 'TCP counted as xkv requests'
"
server_stop

# the io_uring backend: SO_TIMESTAMPNS on its datagrams, and memcached over TCP
server_run uring xkv "$build/xkv-server" --backend uring --workers 1 --allow "$ip_c/32"
bench uring --keys 100 --get-ratio 0.5 --duration 0.5
mc_tcp 20
server_stop
n=$(server_counter "$out/uring.log" lat_unstamped)
[ "$n" -eq 0 ] || fail "uring: $n requests unstamped"
for op in get put memcached; do
	grep -q "^latency $op .* total: count [1-9]" "$out/uring.log" ||
		fail "uring: no $op latency: $(grep latency "$out/uring.log")"
done
echo "uring: $(grep -c '^latency' "$out/uring.log") histograms, none unstamped"

# Minos's point, seen from inside: 0.5 % of GETs for 500 KB values. Under minos (two
# workers) a small GET never queues behind a large one, and its p99 in the server stays
# far below the large class's; under erew with one worker both share its queue, and a
# small GET's p99 is the large one's order. (The client's p99 is about equal in both.)
small_vs_large() {
	local name=$1 checks=$2
	shift 2
	server_start "$name" --memory 256M "$@"
	local load=(--keys 2000 --value-profile bimodal --large-pct 0.5 --large-size 500000
		--large-keys 20 --get-ratio 0.95 --depth 4)
	bench "$name-warm" "${load[@]}" --duration 1 # minos's roles settle
	phase "$name-warm" "pass"
	bench "$name" "${load[@]}" --duration 2 --no-load
	phase "$name" "
small, large = (next(h for h in lat if h['op'] == 'get' and h['interval'] == 'total'
                     and h['class'] == c) for c in ('lt128', 'lt512k'))
print(f\"$name: server-side p99 small {small['p99_ns']} ns, large {large['p99_ns']} ns\")
$checks"
	server_stop
}
small_vs_large minos "assert 10 * small['p99_ns'] < large['p99_ns']" --workers 2 --policy minos \
	--minos-epoch-ms 100
small_vs_large erew "assert 5 * small['p99_ns'] > large['p99_ns']" --workers 1 --policy erew
echo "latency: every path stamped; minos keeps small requests from large ones"
