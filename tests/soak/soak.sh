#!/usr/bin/env bash
# The soak of issue R2, "Nothing stays stuck": one xkv-server (XDP backend, 2 workers,
# policy xkv, compaction on, memcached on) in a server namespace, and at once from a
# client namespace joined by veth (tools/netns-pair.sh), for SOAK_SECONDS (60 by
# default; make soak: 300):
#   - xkv-bench: GET and PUT, values 1 B to 500 KB (Minos's ETC profile), zipf 0.99, so
#     the hot keys are written; the share of large requests steps between 0.2 % and
#     2 % every 5 s, and minos's epoch is 2.5 s (--minos-epoch-ms), so the roles change
#     every few seconds;
#   - xkv-linload on 4 hot keys of its own (GET, PUT, DELETE) for 4 s every 30 s;
#   - tests/soak/mc_load.py: pymemcache over TCP, the meta commands, memcached's UDP
#     (values 0 B to 300 KB), and malformed memcached datagrams, 5 a second;
#   - midway, one worker thread (SOAK_STOP_WORKER, 0) stopped for 2 s, alone, by
#     ptrace (xkv-soak-freeze), 1 s after new roles: the next epoch comes during it
#     (new roles that keep every owner need not wait for it, engine/roles_adopt.c);
#   - xkv-stall measuring, the whole time, what the machine kept from the
#     workers: their waits on the run queue and the CPUs' stalls.
# The store is filled first (xkv-bench's load phase, memcached's keys); the load phase
# ends 10 s into the soak, every client warmed up: its RSS is the mark. After the
# clients stop and 5 s of quiet, it asserts, from the server's own counters and maps:
#   1. no worker went over 50 ms between two rounds but for what the machine took
#      (tests/soak/gaps.py; waiting for a worker that was stopped, or ran, is not the
#      machine's): both before the stop; after it, the stopped worker's longest gap
#      holds the stop and is within 50 ms of it, the other's is within 50 ms, and the
#      other dropped no reply for want of a frame meanwhile (tx_dropped).
#      round_gap_max_ns is a maximum since start, so this leaves unchecked, for the
#      stopped worker, any gap after the sample before the stop shorter than the stop
#      (one of up to ~2 s there would pass), and for both any gap shorter than a longer
#      one the machine caused;
#   2. every EWT slot empty (the pinned xkv_ewt, all zero), and XDP's taken + joined
#      + the workers' ewt_joined = their ewt_released + ewt_healed;
#   3. every UMEM frame accounted (the server's "queue Q frames_unaccounted: 0" on
#      SIGTERM, exit 0), and RSS at most 10 % over the mark;
#   4. each xkv-linload history linearizable (xkv-lincheck);
#   5. the roles changed (at least once per 4 steps);
#   6. every malformed datagram counted: XDP's protocol drops grew by those XDP must
#      drop, exactly; of those that reach a worker (where a full RX ring may drop
#      them), every error answered was counted (mc_errors), and as many silent drops
#      (mc_dropped) as the errors' share that arrived says, less 3; no reply but the
#      one each must have;
#   7. no client saw a wrong value: mc_load's readers none (SERVER_ERROR answers are
#      counted and allowed: a write refused while its slot heals, which writes
#      nothing), xkv-bench's errors (any non-OK status, BUSY included) no more than the
#      server's non-OK replies; every client kept getting answers to the end, and the
#      server answers after it all.
# Exit 0 passed, 1 failed (every failed check said, logs kept), 77 skipped.
#   tests/soak/soak.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: soak.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
seconds=${SOAK_SECONDS:-60}
stop_worker=${SOAK_STOP_WORKER:-0}
bound_ms=50
stop_ms=2000
step_s=5 # a step of the large share: about one roles change each
epoch_ms=2500 # minos's epoch: the stop (2 s) begins 1 s into one and spans the next
quiet_s=5
python=/usr/bin/python3 # Debian's, which has python3-pymemcache

need_xdp_hosts
need_commands bpftool
"$python" -c 'import pymemcache' 2>/dev/null ||
	skip "python3-pymemcache is not installed (make deps installs it)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs: a worker each, pinned"
case $seconds in '' | *[!0-9]*) echo "soak: SOAK_SECONDS must be whole seconds" >&2; exit 1 ;; esac
[ "$seconds" -ge 30 ] || { echo "soak: SOAK_SECONDS must be at least 30" >&2; exit 1; }

id=$$
ns_s="xkvt-$id-ss" ns_c="xkvt-$id-sc" if_s="xss$id" if_c="xsc$id"
ip_s=10.211.0.1 ip_c=10.211.0.2
port=7411 mc_port=11211
out=$(mktemp -d /tmp/xkv-soak.XXXXXX)
. "$here/../../tools/netns-pair.sh"
server_pid= stall_pid= netns= passed=
bg_pids=()

say() { echo "soak: $*"; }

cleanup() {
	local pid
	for pid in "${bg_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [ -n "$stall_pid" ]; then
		kill "$stall_pid" 2>/dev/null || true
		wait "$stall_pid" 2>/dev/null || true
	fi
	if [ -n "$netns" ]; then netns_pair_down; fi
	if [ "$passed" = 1 ]; then
		rm -rf "$out"
	else
		echo "soak: FAILED; logs kept in $out" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "soak: $*" >&2
	exit 1
}

failures=()
# check CONDITION_STATUS WHAT: a failed check is said now and at the end, and the run
# goes on, so that one run shows every check that fails
check() {
	local what="${*:2}"
	if [ "$1" = 0 ]; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		failures+=("$what")
	fi
}

in_server() { nsenter --net="/run/netns/$ns_s" "$@"; }
in_client() { nsenter --net="/run/netns/$ns_c" "$@"; }
now_ns() { "$python" -c 'import time; print(time.monotonic_ns())'; }
stats_json() { in_server "$build/xkv-loader" stats --iface "$if_s" --json; }
roles_gen() {
	in_server "$build/xkv-loader" status --iface "$if_s" --json |
		"$python" -c 'import json, sys; print(json.load(sys.stdin)[0]["minos"]["gen"])'
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }
# memory NAME: where the server's memory is, for whoever reads a failure
memory() { cat "/proc/$server_pid/smaps" >"$out/memory-$1.txt" 2>/dev/null || true; }
# json FILE EXPR: EXPR of the JSON object in FILE, called j
json() { "$python" -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }
# facts COMMAND ARGS...: tests/soak/facts.py's figures into $figures (an array), its
# words into $words
facts() {
	local line
	line=$("$python" "$here/facts.py" "$@")
	read -ra figures <<<"${line%%|*}"
	words=${line#*|}
}

# --- the hosts and the server -------------------------------------------------------
netns=1
netns_pair_up
say "xkv-server: 2 workers, xkv, compaction, memcached on $mc_port, roles every $epoch_ms ms"
# not through in_server: a function run in the background is a subshell, and $! its pid
nsenter --net="/run/netns/$ns_s" "$build/xkv-server" --backend xdp --iface "$if_s" \
	--workers 2 --policy xkv --compaction on --minos-epoch-ms "$epoch_ms" --memory 1G \
	--port "$port" --memcached-port "$mc_port" --allow "$ip_c/32" --trust "$ip_c/32" \
	>"$out/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
	rc=0
	in_client "$build/xkv-cli" -s "$ip_s:$port" -t 50 -r 0 get ping >/dev/null 2>&1 || rc=$?
	[ "$rc" -le 1 ] && grep -q "memcached on TCP port" "$out/server.log" && break
	kill -0 "$server_pid" 2>/dev/null || fail "xkv-server exited: $(cat "$out/server.log")"
	sleep 0.1
done
[ "$rc" -le 1 ] || fail "xkv-server does not answer: $(cat "$out/server.log")"

# The workers: the threads pinned to one CPU each (worker w to CPU w, util/pin.c). Read
# now, before liburcu's call_rcu thread exists: it inherits its creator's CPU.
declare -A tid_of=()
for task in /proc/"$server_pid"/task/*; do
	cpus=$(awk '/^Cpus_allowed_list/ {print $2}' "$task/status")
	case $cpus in *[-,]*) continue ;; esac
	[ -z "${tid_of[$cpus]:-}" ] || fail "two threads pinned to CPU $cpus alone"
	tid_of[$cpus]=${task##*/}
done
[ -n "${tid_of[0]:-}" ] && [ -n "${tid_of[1]:-}" ] && [ "${#tid_of[@]}" = 2 ] ||
	fail "no two worker threads pinned to CPUs 0 and 1: ${!tid_of[*]}"
say "worker 0: thread ${tid_of[0]}, worker 1: thread ${tid_of[1]}"
"$build/xkv-stall" --pid "$server_pid" --tids "${tid_of[0]},${tid_of[1]}" \
	--log "$out/stall.log" >"$out/stall.out" 2>"$out/stall.err" &
stall_pid=$!

# --- the load phase: the store filled --------------------------------------------------
bench_args=(--server "$ip_s:$port" --keys 5000 --key-size 20 --value-profile etc
	--large-size 500000 --large-keys 100 --zipf 0.99 --get-ratio 0.9 --timeout-ms 200)
# a PUT lost on a busy machine (its reply later than 200 ms) is PUT again next time
for try in 1 2 3; do
	in_client "$build/xkv-bench" "${bench_args[@]}" --rate 100 --duration 0.2 --json \
		>"$out/fill.json" 2>"$out/fill.err" ||
		fail "xkv-bench's load phase: $(tail -3 "$out/fill.err")"
	[ "$(json "$out/fill.json" "j['load']['ok'] == j['load']['keys']")" = True ] && break
	[ "$try" != 3 ] || fail "xkv-bench's load phase, 3 times, stored not every key:" \
		"$(json "$out/fill.json" "j['load']")"
done
in_client "$python" "$here/mc_load.py" fill "$ip_s" "$mc_port" || fail "memcached's keys not filled"
sleep 1
rss_fill=$(rss_kb)
memory fill
say "filled: $(json "$out/fill.json" "j['load']['keys']") xkv keys, memcached's;" \
	"RSS $((rss_fill / 1024)) MiB"

# --- the soak --------------------------------------------------------------------------
stats_json >"$out/stats-before.json"
steps=$(((seconds + step_s - 1) / step_s))
stop_at=$((seconds / 2))
# the stop waits up to 4 s for new roles, lasts 2, and its aftermath a little more
stop_span=$((4 + stop_ms / 1000 + 2))
warmup_s=10
t0=$(date +%s)
say "${seconds} s: xkv-bench (large share 0.2 % and 2 % by turns, $step_s s each)," \
	"memcached's clients, xkv-linload every 30 s; worker $stop_worker stopped for" \
	"$stop_ms ms at ${stop_at} s"
# xkv-bench in runs of 12 steps (it takes 64 at most), the levels going on by turns
(
	run=0 step=0
	while [ "$step" -lt "$steps" ]; do
		n=$((steps - step > 12 ? 12 : steps - step))
		levels=$(for i in $(seq "$step" $((step + n - 1))); do
			if ((i % 2)); then echo 2; else echo 0.2; fi
		done | paste -sd,)
		nsenter --net="/run/netns/$ns_c" "$build/xkv-bench" "${bench_args[@]}" --no-load \
			--threads 2 --rate 3000 --large-pct-steps "$levels" \
			--step-seconds "$step_s" --json >"$out/bench-$run.json" \
			2>"$out/bench-$run.err" || {
			echo "xkv-bench exited $?: $(tail -3 "$out/bench-$run.err")" \
				>"$out/bench.failed"
			exit 1
		}
		run=$((run + 1)) step=$((step + n))
	done
) &
bench_pid=$!
bg_pids+=("$bench_pid")
nsenter --net="/run/netns/$ns_c" "$python" "$here/mc_load.py" run "$ip_s" "$mc_port" "$seconds" \
	--quiet "$((stop_at - 1))-$((stop_at + stop_span))" --trace "$out/mc-trace.txt" \
	>"$out/mc.json" 2>"$out/mc.err" &
mc_pid=$!
bg_pids+=("$mc_pid")

# xkv-linload for 4 s every 30 s from 10 s on, never over the stop (a reply it waits
# for there has no outcome, and porcupine's search grows with those)
(
	n=0
	for at in $(seq 10 30 $((seconds - 5))); do
		if [ "$at" -le $((stop_at + stop_span)) ] && [ $((at + 5)) -ge "$stop_at" ]; then
			continue
		fi
		while [ $(($(date +%s) - t0)) -lt "$at" ]; do sleep 0.2; done
		in_client "$build/xkv-linload" --server "$ip_s:$port" --threads 4 --keys 4 \
			--duration 4 --timeout-ms 1000 --seed "$at" --out "$out/lin-$n.hist" \
			>"$out/lin-$n.out" 2>&1 || echo "xkv-linload exited $?" >>"$out/lin-$n.out"
		n=$((n + 1))
	done
) &
lin_pid=$!
bg_pids+=("$lin_pid")

progress_every=$((seconds > 120 ? 5 : 10))
next_progress=$progress_every stopped= rss_mark=
while kill -0 "$bench_pid" 2>/dev/null || kill -0 "$mc_pid" 2>/dev/null; do
	t=$(($(date +%s) - t0))
	if [ -z "$rss_mark" ] && [ "$t" -ge "$warmup_s" ]; then
		rss_mark=$(rss_kb)
		memory mark
		stats_json >"$out/stats-mark.json"
	fi
	if [ -z "$stopped" ] && [ "$t" -ge "$stop_at" ]; then
		# before: both workers' longest gaps so far
		stats_json >"$out/stats-prestop.json"
		prestop_ns=$(now_ns)
		# 1 s after new roles: the next epoch comes during the stop. Roles that keep
		# every owner are taken without waiting for the stopped worker
		# (engine/roles_adopt.c): if they made the other wait, its gap below would show it.
		gen=$(roles_gen) until_us=$((${EPOCHREALTIME/./} + 4000000))
		while [ "$(roles_gen)" = "$gen" ] && [ "${EPOCHREALTIME/./}" -lt "$until_us" ]; do
			sleep 0.02
		done
		sleep 1
		"$build/tests/soak/xkv-soak-freeze" --tid "${tid_of[$stop_worker]}" \
			--ms "$stop_ms" >"$out/freeze.out" 2>&1 &
		freeze_pid=$!
		bg_pids+=("$freeze_pid")
		# minos's gen meanwhile
		gens=()
		while kill -0 "$freeze_pid" 2>/dev/null; do
			gens+=("$(roles_gen)")
			sleep 0.1
		done
		wait "$freeze_pid" ||
			fail "could not stop worker $stop_worker: $(cat "$out/freeze.out")"
		gens+=("$(roles_gen)")
		gens=$(printf '%s\n' "${gens[@]}" | uniq | paste -sd' ')
		say "$(cat "$out/freeze.out") (worker $stop_worker); minos's gen meanwhile: $gens"
		stopped=1
	fi
	if [ "$t" -ge "$next_progress" ]; then
		if stats_json >"$out/stats-now.json" 2>/dev/null; then
			facts progress "$out/stats-now.json"
			say "$t/$seconds s: $words, roles changed" \
				"$(grep -c "minos roles" "$out/server.log" || true) times," \
				"RSS $(($(rss_kb) / 1024)) MiB"
		fi
		next_progress=$((next_progress + progress_every))
	fi
	kill -0 "$server_pid" 2>/dev/null || fail "xkv-server died: $(tail -20 "$out/server.log")"
	[ ! -e "$out/bench.failed" ] || fail "$(cat "$out/bench.failed")"
	if ! kill -0 "$mc_pid" 2>/dev/null && [ "$t" -lt $((seconds - 2)) ]; then
		fail "mc_load.py ended at $t s: $(tail -5 "$out/mc.err")"
	fi
	sleep 0.5
done
bench_rc=0 mc_rc=0
wait "$bench_pid" || bench_rc=$?
wait "$mc_pid" || mc_rc=$?
wait "$lin_pid" || true
bg_pids=()
[ -n "$stopped" ] || fail "the soak ended before the stop"
rss_end=$(rss_kb)
memory end
say "load over after $(($(date +%s) - t0)) s; RSS $((rss_end / 1024)) MiB; $quiet_s s of quiet"
sleep "$quiet_s"

# --- what the server says while it still runs ---------------------------------------------
rss_quiet=$(rss_kb)
memory quiet
stats_json >"$out/stats-after.json"
bpftool map dump pinned "/sys/fs/bpf/xkv/$if_s/xkv_ewt" -j >"$out/ewt.json"
in_server "$build/xkv-loader" status --iface "$if_s" --json >"$out/status.json"
# it still answers, both protocols
rc=0
in_client "$build/xkv-cli" -s "$ip_s:$port" put soak-after ok >/dev/null 2>&1 &&
	[ "$(in_client "$build/xkv-cli" -s "$ip_s:$port" get soak-after 2>/dev/null)" = ok ] || rc=1
check "$rc" "xkv still answers after the soak (put, then get)"
rc=0
in_client "$python" -c '
import sys
from pymemcache.client.base import Client
c = Client((sys.argv[1], int(sys.argv[2])), connect_timeout=2, timeout=5)
c.set("soak-after", b"ok")
sys.exit(c.get("soak-after") != b"ok")' "$ip_s" "$mc_port" || rc=1
check "$rc" "memcached still answers after the soak (set, then get over TCP)"

# --- the server stopped: its last word --------------------------------------------------------
kill -TERM "$server_pid"
server_rc=0
for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid"
wait "$server_pid" || server_rc=$?
server_pid=
kill "$stall_pid"
wait "$stall_pid" || fail "xkv-stall: $(cat "$out/stall.err")"
stall_pid=
check "$server_rc" "xkv-server exited $server_rc on SIGTERM"

# --- 1. gaps between rounds ---------------------------------------------------------
gap() { # FILE WORKER: its round_gap_max_ns in a stats JSON
	facts gap "$1" "$2"
	echo "${figures[0]}"
}
final_gap() { # WORKER: from the server's last print
	sed -n -E "s/^worker $1 round_gap_max_ns: ([0-9]+)$/\1/p" "$out/server.log"
}
read -r _ _ _ _ stop_from _ stop_to _ <"$out/freeze.out"
stopped_at=":stopped=$stop_from-$stop_to"
other=$((1 - stop_worker))
rc=0
"$python" "$here/gaps.py" "$out/stall.log" "$bound_ms" \
	"W:${tid_of[0]}:0:$(gap "$out/stats-prestop.json" 0):until=$prestop_ns" \
	"W:${tid_of[1]}:1:$(gap "$out/stats-prestop.json" 1):until=$prestop_ns" \
	"W:${tid_of[$stop_worker]}:$stop_worker:$(final_gap "$stop_worker")$stopped_at" |
	tee "$out/gaps.out" || rc=$?
check "$rc" "no worker went over $bound_ms ms between two rounds before the stop, and the" \
	"stopped one only by the stop, but for what the machine took"
# The other worker, the whole run, the stop in it: new roles published during the stop
# keep every owner (2 workers: one small), so it takes them without waiting for the
# stopped one (engine/roles_adopt.c); the stopped worker's full RX ring leaves frames for its
# replies (net/xsk.c, TX_RESERVE), so it drops none for want of one.
rc=0
"$python" "$here/gaps.py" "$out/stall.log" "$bound_ms" \
	"W:${tid_of[$other]}:$other:$(final_gap "$other")" | tee -a "$out/gaps.out" || rc=$?
facts tx_dropped "$out/stats-prestop.json" "$out/stats-after.json" "$other"
why="minos's roles: gen $gens during the stop"
check "$rc" "worker $other never went over $bound_ms ms between two rounds but for what" \
	"the machine took, the other worker stopped ($why)"
check "$([ "${figures[1]}" = "${figures[0]}" ] && echo 0 || echo 1)" \
	"worker $other dropped no reply for want of a frame while the other was stopped" \
	"(tx_dropped: ${figures[0]} before the stop, ${figures[1]} after it)"
say "the machine: $(sed -n 's/^stall_max_us: //p' "$out/stall.out") us the worst stall;" \
	"run queue waits up to" \
	"$(sed -n 's/^tid .* runq_wait_max_us: //p' "$out/stall.out" | paste -sd/) us"

# --- 2. the EWT ------------------------------------------------------------------------
facts ewt "$out/ewt.json" "$out/stats-after.json"
check "$([ "${figures[0]}" = 0 ] && echo 0 || echo 1)" "every EWT slot empty (${figures[0]} held)"
check "$([ "${figures[1]}" = "${figures[2]}" ] && echo 0 || echo 1)" \
	"XDP's taken + joined + ewt_joined ${figures[1]} = ewt_released + ewt_healed" \
	"${figures[2]} ($words)"

# --- 3. frames and memory ----------------------------------------------------------------
unaccounted=$(sed -n -E 's/^queue [0-9]+ frames_unaccounted: (-?[0-9]+)$/\1/p' \
	"$out/server.log" | paste -sd' ')
rc=1
[ -n "$unaccounted" ] && [ -z "$(tr -d ' 0' <<<"$unaccounted")" ] && rc=0
check "$rc" "every UMEM frame accounted (frames_unaccounted per queue:" \
	"${unaccounted:-none printed})"
facts store "$out/stats-mark.json"
store_mark=${figures[0]}
facts store "$out/stats-after.json"
rc=0
[ $((rss_quiet * 10)) -le $((rss_mark * 11)) ] || rc=1
check "$rc" "RSS after the quiet $((rss_quiet / 1024)) MiB at most 10 % over the load" \
	"phase's $((rss_mark / 1024)) MiB (filled: $((rss_fill / 1024)) MiB, at the end:" \
	"$((rss_end / 1024)) MiB; the store's bytes $store_mark KiB then, ${figures[0]} KiB after)"

# --- 4. the hot keys' histories -----------------------------------------------------------
nhist=0
for h in "$out"/lin-*.hist; do
	[ -e "$h" ] || continue
	nhist=$((nhist + 1))
	o=${h%.hist}.out
	rc=0
	# it ran, and every reply it got made sense
	grep -q "exited" "$o" && rc=1
	grep -qE "bad replies [1-9]" "$o" && rc=1
	"$build/xkv-lincheck" --timeout 60 "$h" >"${h%.hist}.check" 2>&1 || rc=1
	check "$rc" "$(basename "$h"): $(sed -n 's/^xkv-linload: \(.* ops in .*\)/\1/p' "$o");" \
		"xkv-lincheck: $(tail -1 "${h%.hist}.check")"
done
check "$([ "$nhist" -ge 1 ] && echo 0 || echo 1)" "$nhist xkv-linload histories checked"

# --- 5. roles ------------------------------------------------------------------------------
changes=$(grep -c "minos roles" "$out/server.log" || true)
gen=$(json "$out/status.json" "j[0]['minos']['gen']")
rc=0
[ "$changes" -ge $((steps / 4)) ] && [ "$gen" -gt 1 ] || rc=1
check "$rc" "minos's roles changed $changes times in $steps steps (gen $gen)"

# --- 6. malformed datagrams ----------------------------------------------------------------
facts malformed "$out/stats-before.json" "$out/stats-after.json" "$out/mc.json"
read -r xdp_sent xdp_counted protocol err_sent err_answered err_counted quiet_sent \
	quiet_counted quiet_least lost unexpected <<<"${figures[*]}"
rc=0
[ "$xdp_counted" = "$xdp_sent" ] && [ "$protocol" = 0 ] && [ "$xdp_sent" -gt 0 ] || rc=1
check "$rc" "malformed datagrams XDP must drop: $xdp_sent sent, $xdp_counted counted" \
	"(its protocol reasons); $protocol dropped by the workers as xkv"
rc=0
[ "$err_answered" -le "$err_counted" ] && [ "$err_counted" -le "$err_sent" ] &&
	[ "$err_sent" -gt 0 ] || rc=1
[ "$quiet_counted" -ge "$quiet_least" ] && [ "$quiet_counted" -le "$quiet_sent" ] || rc=1
check "$rc" "malformed datagrams a worker must refuse: errors $err_sent sent, $err_answered" \
	"answered, $err_counted counted (mc_errors); silent drops $quiet_sent sent," \
	"$quiet_counted counted (mc_dropped, at least $quiet_least by the errors' share that" \
	"arrived)"
rc=0
[ "$unexpected" = 0 ] && { [ "$err_answered" = "$err_sent" ] || [ "$lost" -gt 0 ]; } || rc=1
check "$rc" "malformed datagrams answered as they must be, or lost on a full ring" \
	"($lost datagrams the kernel or the workers dropped meanwhile): $words"

# --- 7. the clients ------------------------------------------------------------------------
for c in tcp0 tcp1 meta0 meta1 udp; do
	facts client "$out/mc.json" "$c"
	rc=0
	[ "${figures[0]}" = 0 ] && [ "${figures[1]}" -ge $((seconds - 5)) ] || rc=1
	check "$rc" "memcached $c: $words"
done
check "$mc_rc" "mc_load.py exited $mc_rc"
conns=$(json "$out/stats-after.json" "[w['memcached']['total_connections'] for w in j['workers']]")
say "memcached connections each worker served: $conns"
facts bench "$out/stats-after.json" "$out"/bench-*.json
read -r bench_errors bench_invalid not_ok <<<"${figures[*]}"
say "xkv-bench: $words"
rc=0
[ "$bench_rc" = 0 ] && [ "$bench_errors" -le "$not_ok" ] && [ "$bench_invalid" = 0 ] || rc=1
check "$rc" "xkv-bench (exit $bench_rc): errors $bench_errors <= the server's non-OK replies" \
	"$not_ok, none invalid"

echo "soak: load $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
if [ "${#failures[@]}" -gt 0 ]; then
	echo "soak: ${#failures[@]} checks failed:"
	printf '  %s\n' "${failures[@]}"
	exit 1
fi
passed=1
echo "soak: passed"
