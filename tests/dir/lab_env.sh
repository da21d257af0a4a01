# Sourced by the directory's lab tests (lab.sh, controller.sh, lincheck.sh), after
# skip.sh's checks: the lab of tools/netns-dir.sh with dir_nservers server hosts (2
# unless the caller sets it), XDP_PASS on the far ends of the directory's veths (a
# redirect into a veth needs a program on its peer), an xkv-server (io_uring backend)
# on each server host once lab_servers runs, and what the tests use: fail, in_d, in_s,
# the directory's interfaces (dir_ifaces), the pool as clients list it (dir_pool), and
# le and map_set, to write the directory's maps by hand.
# The caller sets build, here, dir_prefix and pin. On every way out, the namespaces, the
# pins, the processes in pids and the files in out go.

. "$here/../../tools/netns-dir.sh"

dir_nservers=${dir_nservers:-2}
servers=$(seq 0 $((dir_nservers - 1)))
out=$(mktemp -d /tmp/xkv-dir-lab.XXXXXX)
pids=()
cleanup() {
	dir_lab_stop "${pids[@]}"
	rm -rf "$pin" "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

c=$(dir_lab_ns_c) d=$(dir_lab_ns_d)
dir_lab_start "$build/tests/bpf/xdp_pass.bpf.o"

# in the directory's namespace by nsenter: ip netns exec would hide bpffs (DESIGN.md)
in_d() { nsenter --net="/run/netns/$d" "$@"; }
# xkv-cli on server host $1, to its own server
in_s() { ip netns exec "$(dir_lab_ns_s "$1")" "$build/xkv-cli" -r 20 -t 100 "${@:2}"; }

# Little-endian hex bytes of an unsigned number, width bytes wide.
le() { /usr/bin/python3 -c "import sys; print(' '.join(f'{b:02x}' for b in int(sys.argv[1], 0).to_bytes(int(sys.argv[2]), 'little')))" "$1" "$2"; }
# A pinned map of the directory's, under $pin, written with bpftool: map_set MAP KEY VALUE.
map_set() { bpftool map update pinned "$pin/$1" key hex $2 value hex $3; }

# An xkv-server on server host $1, serving the lab's networks, with the caller's
# lab_server_opts besides.
lab_server() {
	ip netns exec "$(dir_lab_ns_s "$1")" "$build/xkv-server" -b uring -w 1 -M 0 -m 64M \
		-a 10.0.0.0/16 -a 127.0.0.0/8 ${lab_server_opts[@]+"${lab_server_opts[@]}"} \
		>"$out/s$1.log" 2>&1 &
	pids+=($!)
}

# An xkv-server on each server host, once it answers.
lab_servers() {
	local i
	for i in $servers; do
		lab_server "$i"
	done
	for i in $servers; do
		for _ in $(seq 50); do # until it listens: a refused datagram ends xkv-cli at once
			in_s $i get lab:nothing >/dev/null 2>&1 || [ $? -eq 1 ] && break
			sleep 0.1
		done
		in_s $i get lab:nothing >/dev/null 2>&1 || [ $? -eq 1 ] ||
			fail "server $i does not answer: $(cat "$out/s$i.log")"
	done
}
