# Sourced: the coherence directory's lab (docs/DIRECTORY.md), Pegasus's rack in network
# namespaces: a client host, a directory host that routes (ip_forward on), and
# $dir_nservers server hosts, each on a veth of its own from the directory:
#   client 10.0.0.1/24 <-> 10.0.0.254 directory 10.0.(i+1).254 <-> 10.0.(i+1).1/24 server i
# The caller sets dir_prefix (a few letters, unique per run) and dir_nservers, calls
# dir_lab_start (or dir_lab_up), and dir_lab_stop (or dir_lab_down) from its exit trap. Names: ${dir_prefix}c, ${dir_prefix}d
# and ${dir_prefix}s0.. for the namespaces; the directory's ends are ${dir_prefix}dc
# (to the client) and ${dir_prefix}d0.. (to server i), the others' ${dir_prefix}c0 and
# ${dir_prefix}s0...

dir_lab_ns_c() { echo "${dir_prefix}c"; }
dir_lab_ns_d() { echo "${dir_prefix}d"; }
dir_lab_ns_s() { echo "${dir_prefix}s$1"; }

. "$(dirname "${BASH_SOURCE[0]}")/netns-pair.sh" # netns_link

dir_lab_up() {
	local c d s i
	c=$(dir_lab_ns_c) d=$(dir_lab_ns_d)
	for ns in "$c" "$d"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip netns exec "$d" sysctl -qw net.ipv4.ip_forward=1
	netns_link "$c" "${dir_prefix}c0" 10.0.0.1 "$d" "${dir_prefix}dc" 10.0.0.254
	ip -n "$c" route add default via 10.0.0.254
	for i in $(seq 0 $((dir_nservers - 1))); do
		s=$(dir_lab_ns_s "$i")
		ip netns add "$s"
		ip -n "$s" link set lo up
		netns_link "$s" "${dir_prefix}s$i" "10.0.$((i + 1)).1" "$d" "${dir_prefix}d$i" \
			"10.0.$((i + 1)).254"
		ip -n "$s" route add default via "10.0.$((i + 1)).254"
	done
}

# The lab's servers as the clients list them (dir_pool: "10.0.1.1:7411 s0,...") and the
# directory's interfaces (dir_ifaces: to the client, then to each server).
dir_lab_names() {
	local i
	dir_pool=
	dir_ifaces=("${dir_prefix}dc")
	for i in $(seq 0 $((dir_nservers - 1))); do
		dir_pool+="${dir_pool:+,}10.0.$((i + 1)).1:7411 s$i"
		dir_ifaces+=("${dir_prefix}d$i")
	done
}

# dir_lab_far_ends XDP_PASS_OBJ: an XDP program on the client's and the servers' ends
# of the directory's veths, which a redirect into a veth needs on its peer.
dir_lab_far_ends() {
	local i
	ip -n "$(dir_lab_ns_c)" link set dev "${dir_prefix}c0" xdpdrv obj "$1" sec xdp
	for i in $(seq 0 $((dir_nservers - 1))); do
		ip -n "$(dir_lab_ns_s "$i")" link set dev "${dir_prefix}s$i" xdpdrv obj "$1" sec xdp
	done
}

# dir_lab_start XDP_PASS_OBJ: the lab up, bpffs mounted, its names set (dir_lab_names),
# and XDP_PASS on the far ends: what every user of the lab starts with.
dir_lab_start() {
	dir_lab_up
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	dir_lab_names
	dir_lab_far_ends "$1"
}

# dir_lab_stop [PID...]: each process asked to stop and waited for (a server prints its
# counters at exit), then the lab down.
dir_lab_stop() {
	local pid
	for pid in "$@"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	dir_lab_down
}

# Kills what still runs in the lab's namespaces and removes them.
dir_lab_down() {
	local ns pids i
	for ns in "$(dir_lab_ns_c)" "$(dir_lab_ns_d)" \
		$(for i in $(seq 0 $((dir_nservers - 1))); do dir_lab_ns_s "$i"; done); do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		if [ -n "$pids" ]; then kill -KILL $pids 2>/dev/null || true; fi
		ip netns del "$ns" 2>/dev/null || true
	done
}
