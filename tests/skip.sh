# Sourced by the test scripts. A test this machine cannot run says why on a line
# "SKIP: <why>" and exits 77, automake's skip code: tests/run-tests.sh counts it as
# skipped, neither passed nor failed. (Criterion suites: tests/skip.h.)

skip() {
	echo "SKIP: $*"
	exit 77
}

# need_commands CMD...: each one is installed
need_commands() {
	local cmd
	for cmd; do
		command -v "$cmd" >/dev/null || skip "$cmd is not installed (make deps installs it)"
	done
}

# need_bpf BUILD_DIR TYPE: BPF programs of TYPE (libbpf's section name: xdp,
# sk_reuseport) load here, as the Criterion suites ask it (tests/skip.c)
need_bpf() {
	local out rc=0
	out=$("$1/tests/skip-bpf" "$2") || rc=$?
	case $rc in
	0) ;;
	77) skip "${out#SKIP: }" ;;
	*)
		echo "need_bpf: $1/tests/skip-bpf $2 exited $rc" >&2
		exit "$rc"
		;;
	esac
}

# need_xdp_hosts: what a test of a server host and a client host on veth needs:
# root, network namespaces, a veth pair between them, XDP and AF_XDP
need_xdp_hosts() {
	local out
	[ "$(id -u)" -eq 0 ] || skip "needs root: network namespaces, veth, XDP, AF_XDP"
	need_commands ip nsenter unshare bpftool
	# in a namespace of its own: nothing to remove after, whatever happens
	out=$(unshare --net ip link add xkvprobe0 type veth peer name xkvprobe1 2>&1) ||
		skip "no veth pair in a new network namespace here: $out"
	# XDP programs, and XSKMAPs for AF_XDP sockets
	out=$(bpftool feature probe kernel 2>&1) ||
		skip "bpftool cannot probe BPF here: $(grep -m1 Error <<<"$out")"
	grep -q 'program_type xdp is available' <<<"$out" &&
		grep -q 'map_type xskmap is available' <<<"$out" ||
		skip "this kernel has no XDP programs or no XSKMAP (AF_XDP)"
}
