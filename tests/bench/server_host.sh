#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: server_host.sh
#
# What the namespace tests learn of a server when it stops, on planted servers (shells,
# no root): tools/bench/server-host.sh's server_stop passes one that exits 0 on
# SIGTERM, and fails one that exits 23 then (LeakSanitizer's status), one that a
# SIGSEGV ends then, and one that had died before it was stopped, whatever its status.
# tests/counters.sh's server_counter sums a counter over the workers and fails on a
# log without it, never printing 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	rm -rf "$out"
}
trap cleanup EXIT
. "$here/../checks.sh"
. "$here/../../tools/bench/server-host.sh"
. "$here/../counters.sh"

# planted NAME ON_TERM: a server as server_run leaves it (server_pid, server_name, its
# log), a shell that runs ON_TERM when it gets SIGTERM; ready once it says so
planted() {
	bash -c "ulimit -c 0; trap '$2' TERM; echo ready; while :; do sleep 0.05; done" \
		>"$out/$1.log" 2>&1 &
	server_pid=$! server_name=$1
	pids+=("$server_pid")
	for _ in $(seq 100); do
		grep -q ready "$out/$1.log" && return
		sleep 0.05
	done
}

# stops NAME WANT: server_stop returns WANT (0 or 1)
stops() {
	local rc=0
	server_stop 2>"$out/$1.stop" || rc=$?
	if [ $rc -eq "$2" ]; then
		ok "$1: server_stop returns $2$(tail -n 1 "$out/$1.stop" | sed 's/^/ (/; s/$/)/')"
	else
		not_ok "$1: server_stop returned $rc, not $2"
	fi
}

planted clean 'echo stopped; exit 0'
stops clean 0
planted leaks 'echo "==1==ERROR: LeakSanitizer: detected memory leaks"; exit 23'
stops leaks 1
planted segfaults 'kill -SEGV $$'
stops segfaults 1
planted died-clean 'exit 0'
kill -TERM "$server_pid" && sleep 0.3
stops died-clean 1
planted died-crashed 'exit 0'
kill -SEGV "$server_pid" && sleep 0.3
stops died-crashed 1
server_stop 2>/dev/null && ok "no server: nothing to stop" || not_ok "no server: server_stop failed"

cat >"$out/counters.log" <<'LOG'
worker 0 put: 3
worker 1 put: 4
worker 0 queue 0 put: 7
worker 1 memcached rejected_connections: 2
worker 0 output: 9
LOG
# counter NAME WANT: server_counter's output, or "fails" when it returns non-zero
counter() {
	local got
	got=$(server_counter "$out/counters.log" "$1" 2>"$out/counter.err") || got=fails
	if [ "$got" = "$2" ]; then
		ok "counter '$1': $2"
	else
		not_ok "counter '$1': $got, not $2"
	fi
}
counter put 7
counter "memcached rejected_connections" 2
counter rejected_connections fails
counter ut fails
counter handoffs_sent fails
grep -q 'no counter "handoffs_sent"' "$out/counter.err" && ok "a missing counter is named" ||
	not_ok "a missing counter is not named: $(cat "$out/counter.err")"

checks_done server-host
