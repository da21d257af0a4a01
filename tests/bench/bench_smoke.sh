#!/usr/bin/env bash
# Every benchmark that make bench and make bench-* run, and compare_clients.sh, in its
# smoke mode (docs/BENCH.md, "Smoke runs"): the programs with options that make them
# short, the scripts with XKV_BENCH_SMOKE=1 (tools/bench/bench-lib.sh). Each must exit 0
# and print the last line of its table, and leave none of its namespaces, pins or locks
# (named after its pid); a failure names the benchmark and shows the end of its output.
# Nothing about time is asserted. A signal here reaches the one running.
#   bench_smoke.sh BUILD_DIR
set -uo pipefail

build=$(cd "${1:?usage: bench_smoke.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tools=$here/../../tools/bench
. "$here/../skip.sh"
. "$here/../checks.sh"
need_xdp_hosts
need_commands memcached memcaslap valgrind python3
work=$(mktemp -d /tmp/xkv-bench-smoke.XXXXXX)
child=

cleanup() {
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

# left_by PID: the namespaces (NAME-PID-s), pins and locks (of interfaces xyzPID) that
# a script of that pid left
left_by() {
	ip netns list | grep -e "-$1-"
	ls -d /sys/fs/bpf/xkv/*[a-z]"$1" /run/xkv/*[a-z]"$1".lock 2>/dev/null
}

# smoke NAME LAST_LINE COMMAND...: COMMAND exits 0, prints a line matching LAST_LINE
# (an extended regex), its table's last, and leaves nothing behind
smoke() {
	local name=$1 pattern=$2 rc=0 start=$SECONDS pid left
	shift 2
	XKV_BENCH_SMOKE=1 "$@" >"$work/$name.out" 2>&1 &
	child=$! pid=$!
	wait "$child" || rc=$?
	child=
	left=$(left_by "$pid")
	if [ $rc -ne 0 ]; then
		not_ok "$name exited $rc; the end of its output:"
	elif ! grep -qE -- "$pattern" "$work/$name.out"; then
		not_ok "$name printed no table: no line matches /$pattern/; the end of its output:"
	elif [ -n "$left" ]; then
		not_ok "$name left behind: ${left//$'\n'/ }; the end of its output:"
	else
		ok "$name ($((SECONDS - start)) s)"
		return
	fi
	if [ -s "$work/$name.out" ]; then
		tail -n 20 "$work/$name.out" | sed 's/^/    /'
	else
		echo "    (nothing)"
	fi
}

smoke xkv-storebench '^  PUT overwrite, hash \+ store : +[0-9.]+$' \
	"$build/xkv-storebench" --keys 1000 --seconds 0.05
smoke bench-xdp '^minos: GET, recorded large key +[0-9]+ +[0-9.]+x$' \
	"$build/bench-xdp" --rounds 1 --repeat 1000
smoke memory.sh '^xkv / memcached: bytes per item ' "$tools/memory.sh" "$build"
smoke bench-all.sh '^two queues / one, two threads each: max ops/s ' \
	"$tools/bench-all.sh" "$build"
smoke bench-minos.sh '^minos/crew highest rate: ' "$tools/bench-minos.sh" "$build"
smoke bench-dcrew.sh '^dcrew/crew highest rate: ' "$tools/bench-dcrew.sh" "$build"
smoke bench-compaction.sh "^  xkv-sim's gain from compaction at 64 cores " \
	"$tools/bench-compaction.sh" "$build"
smoke bench-order.sh '^median p99 over [0-9]+ rounds' "$tools/bench-order.sh" "$build"
smoke bench-dir.sh '^bench-dir: done in [0-9]+ s' "$tools/bench-dir.sh" "$build"
smoke bench-memcached-proto.sh '^xkv/memcached: .*\(target >= 1\)$' \
	"$tools/bench-memcached-proto.sh" "$build"
smoke compare_clients.sh '^AF_XDP client / UDP client: store ' \
	"$tools/compare_clients.sh" "$build" "$work/compare"
checks_done bench-smoke
