# Sourced by xkv-bench's namespace scripts (tests/bench/xdp_client.sh,
# tools/bench/compare_clients.sh): on top of tools/netns-pair.sh, an xkv-server
# --backend xdp on the server host and commands on either host. The caller sets
# what netns-pair.sh wants, plus build (the build directory) and out (a directory
# for the server's log), and calls server_host_down from its exit trap.

. "$(dirname "${BASH_SOURCE[0]}")/../netns-pair.sh"
server_pid=

# nsenter, not ip netns exec: that remounts /sys, and bpffs with it
in_server() { nsenter --net="/run/netns/$ns_s" "$@"; }
in_client() { nsenter --net="/run/netns/$ns_c" "$@"; }

# server_start NAME [SERVER_OPTIONS...]: returns once the server answers; log in $out/NAME.log
server_start() {
	local name=$1 rc
	shift
	# not through in_server: a function run in the background is a subshell, and $!
	# would be that shell, not the server
	nsenter --net="/run/netns/$ns_s" "$build/xkv-server" --backend xdp --iface "$if_s" \
		--workers 1 --allow "$ip_c/32" "$@" >"$out/$name.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		rc=0
		in_client "$build/xkv-cli" -s "$ip_s" -t 50 -r 0 get ping >/dev/null 2>&1 || rc=$?
		[ "$rc" -le 1 ] && return 0 # found or not found: it answers
		if ! kill -0 "$server_pid" 2>/dev/null; then
			echo "xkv-server died: $(cat "$out/$name.log")" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "xkv-server does not answer: $(cat "$out/$name.log")" >&2
	return 1
}

server_stop() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=
}

server_host_down() {
	server_stop
	netns_pair_down
}
