# Sourced: a server host and a client host, two network namespaces joined by a veth
# pair, for the demo and the tests, and how to stop what runs there. The caller sets
# ns_s ns_c if_s if_c ip_s ip_c (addresses in one /24) and calls netns_pair_down from
# its exit trap.

# netns_pair_up [QUEUES]: each end with QUEUES tx and rx queues (default 1). A packet
# lands on the rx queue numbered as the tx queue the sender's kernel picked for its flow.
netns_pair_up() {
	ip netns add "$ns_s"
	ip netns add "$ns_c"
	for ns in "$ns_s" "$ns_c"; do ip -n "$ns" link set lo up; done
	netns_pair_veth "$if_s" "$if_c" "$ip_s" "$ip_c" "${1:-1}"
}

# netns_pair_veth IF_S IF_C IP_S IP_C QUEUES: one more veth pair between the two hosts.
netns_pair_veth() {
	netns_link "$ns_s" "$1" "$3" "$ns_c" "$2" "$4" "$5"
}

# netns_link NS_A IF_A IP_A NS_B IF_B IP_B [QUEUES]: a veth between two namespaces, an
# address in a /24 at each end, QUEUES (1) tx and rx queues a side.
netns_link() {
	local q=${7:-1}
	ip link add "$2" numtxqueues "$q" numrxqueues "$q" type veth \
		peer name "$5" numtxqueues "$q" numrxqueues "$q"
	ip link set "$2" netns "$1"
	ip link set "$5" netns "$4"
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$4" addr add "$6/24" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# Kills what still runs in the namespaces, removes them and the server side's pins.
# Each step may find nothing to do: that is no failure (callers run under set -e).
netns_pair_down() {
	local ns pids
	for ns in "$ns_s" "$ns_c"; do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		if [ -n "$pids" ]; then kill -KILL $pids 2>/dev/null || true; fi
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "/sys/fs/bpf/xkv/$if_s"
	rmdir /sys/fs/bpf/xkv 2>/dev/null || true
	rm -f "/run/xkv/$if_s.lock" # its server was killed above: nobody holds it
	rmdir /run/xkv 2>/dev/null || true
}

# stop_pid PID SECONDS: SIGTERM to a child of this shell, SIGKILL if it still runs SECONDS
# later; reaps it. $stopped says what was wrong: empty when it was running and exited 0
# (an ASan build reports leaks and faults as it exits).
stop_pid() {
	local rc=0
	stopped=
	kill -TERM "$1" 2>/dev/null || stopped="it had died before it was stopped"
	for _ in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null && stopped="it ignored SIGTERM for $2 s"
	wait "$1" 2>/dev/null || rc=$?
	[ $rc -eq 0 ] || stopped="exit status $rc${stopped:+, $stopped}"
}
