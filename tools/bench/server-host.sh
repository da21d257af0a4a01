# Sourced by xkv-bench's namespace scripts (tests/bench/xdp_client.sh,
# tools/bench/compare_clients.sh, tools/bench/bench-all.sh): on top of
# tools/netns-pair.sh, a server (xkv-server --backend xdp, or any command) on the
# server host and commands on either host. The caller sets
# what netns-pair.sh wants, plus build (the build directory) and out (a directory
# for the server's log), stops each server with server_stop (which fails unless it
# exited 0), and calls server_host_down from its exit trap.

. "$(dirname "${BASH_SOURCE[0]}")/../netns-pair.sh"
server_pid= server_name=

# nsenter, not ip netns exec: that remounts /sys, and bpffs with it
in_server() { nsenter --net="/run/netns/$ns_s" "$@"; }
in_client() { nsenter --net="/run/netns/$ns_c" "$@"; }

# server_start NAME [SERVER_OPTIONS...]: an xkv-server --backend xdp, see server_run
server_start() {
	local name=$1
	shift
	server_run "$name" xkv "$build/xkv-server" --backend xdp --iface "$if_s" --workers 1 \
		--allow "$ip_c/32" "$@"
}

# server_run NAME PROBE COMMAND...: runs COMMAND on the server host, log in $out/NAME.log;
# returns once it answers on ${server_port:-7411}: xkv-cli's GET when PROBE is xkv, else
# xkv-bench loading one key with --protocol PROBE
server_run() {
	local name=$1 probe=$2 rc
	shift 2
	# not through in_server: a function run in the background is a subshell, and $!
	# would be that shell, not the server
	nsenter --net="/run/netns/$ns_s" "$@" >"$out/$name.log" 2>&1 &
	server_pid=$! server_name=$name
	for _ in $(seq 100); do
		rc=0
		if [ "$probe" = xkv ]; then
			in_client "$build/xkv-cli" -s "$ip_s:${server_port:-7411}" -t 50 -r 0 \
				get ping >/dev/null 2>&1 || rc=$?
			[ "$rc" -le 1 ] && return 0 # found or not found: it answers
		else
			in_client "$build/xkv-bench" --server "$ip_s:${server_port:-7411}" \
				--protocol "$probe" --keys 1 --key-size 2 --duration 0.01 \
				>/dev/null 2>&1 && return 0
		fi
		if ! kill -0 "$server_pid" 2>/dev/null; then
			echo "$name died: $(cat "$out/$name.log")" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "$name does not answer: $(cat "$out/$name.log")" >&2
	return 1
}

# server_stop: SIGTERM to the server, SIGKILL if it still runs 10 s later. It must have
# been running, and exit 0: an ASan build reports leaks and faults as it exits. If not,
# says how it ended, with its log's tail, and returns 1.
server_stop() {
	[ -n "$server_pid" ] || return 0
	stop_pid "$server_pid" 10
	server_pid=
	[ -n "$stopped" ] || return 0
	echo "$server_name: $stopped: $(tail -n 20 "$out/$server_name.log")" >&2
	return 1
}

# on every way out: the verdict is made, a server still running only goes
server_host_down() {
	stall_stop
	server_stop || true
	netns_pair_down
}

# A run's two sides (docs/BENCH.md, "Server side and client side"): measure_begin NAME
# saves the running server's counters and latency histograms ($out/NAME.begin.json,
# $out/NAME.lat) and starts xkv-stall, which watches every CPU for stalls of the
# machine; measure_end NAME, the server still running, saves its counters and the
# histograms of the run alone (xkv-loader stats --since) in $out/NAME.server.json, and
# the stalls in $out/NAME.stall. tools/bench/sides.py reads them.
stall_pid=
measure_begin() {
	in_server "$build/xkv-loader" stats --iface "$if_s" --json --save "$out/$1.lat" \
		>"$out/$1.begin.json"
	"$build/xkv-stall" >"$out/$1.stall" 2>/dev/null &
	stall_pid=$!
}

measure_end() {
	in_server "$build/xkv-loader" stats --iface "$if_s" --json --since "$out/$1.lat" \
		>"$out/$1.server.json"
	stall_stop
}

stall_stop() {
	[ -n "$stall_pid" ] || return 0
	kill -INT "$stall_pid" 2>/dev/null || true
	wait "$stall_pid" 2>/dev/null || true
	stall_pid=
}
