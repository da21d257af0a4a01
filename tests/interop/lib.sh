# SPDX-License-Identifier: MIT
# Sourced by the memcached interop tests (tests/interop/*.sh): memcached and the server
# under test on free loopback TCP ports of their own (never a system service's), each
# stopped by its pid on every way out. The caller sets build (the build directory) and
# under_test ("xkv" or "memcached": the daemon the real clients are pointed at), and
# calls interop_begin first.

interop_pids=()
out=

interop_cleanup() {
	local pid
	for pid in "${interop_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	[ -z "$out" ] || rm -rf "$out"
}

need_pymemcache() {
	/usr/bin/python3 -c 'import pymemcache' 2>/dev/null ||
		skip "python3-pymemcache is not installed (make deps installs it)"
}

need_pylibmc() {
	/usr/bin/python3 -c 'import pylibmc' 2>/dev/null ||
		skip "python3-pylibmc is not installed (make deps installs it)"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# interop_begin NAME: the traps, and $out, a directory for logs and files
interop_begin() {
	need_commands memcached /usr/bin/python3
	# xkv-server on the io_uring backend loads its SK_REUSEPORT program (test_server_uring)
	[ "$under_test" != xkv ] || need_bpf "$build" sk_reuseport
	out=$(mktemp -d "/tmp/xkv-$1.XXXXXX")
	trap interop_cleanup EXIT
	# a trapped signal would resume the script: leave through the EXIT trap instead
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# the clients only answer on loopback; the only proxy here is nutcracker
	export no_proxy='*'
	echo "under test: $under_test"
}

# A port free on loopback for both TCP and UDP now (the kernel's pick).
free_port() {
	/usr/bin/python3 -c 'import socket
t = socket.socket()
t.bind(("127.0.0.1", 0))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", t.getsockname()[1]))
print(t.getsockname()[1])'
}

# Whether a memcached text-protocol server (or proxy) on TCP port $1 answers a GET of a
# key no test sets.
answers_get() {
	/usr/bin/python3 - "$1" <<'PY'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5)
    s.sendall(b"get xkv-interop-probe\r\n")
    sys.exit(0 if s.recv(100) == b"END\r\n" else 1)
except OSError:
    sys.exit(1)
PY
}

# daemon_start NAME PORT COMMAND...: COMMAND in the background, its log in $out/NAME.log;
# returns once it answers a GET on PORT ($daemon_probe PORT: answers_get unless the
# caller set another, such as over TLS), with its pid in ${NAME}_pid.
daemon_start() {
	local name=$1 port=$2 pid
	shift 2
	"$@" >"$out/$name.log" 2>&1 &
	pid=$!
	interop_pids+=("$pid")
	printf -v "${name}_pid" %s "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || fail "$name exited: $(cat "$out/$name.log")"
		# still alive once answered: the answer was its own, not a squatter's
		"${daemon_probe:-answers_get}" "$port" && kill -0 "$pid" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$name does not answer on 127.0.0.1:$port: $(cat "$out/$name.log")"
}

# memcached_start NAME [ARGS...]: a memcached on TCP only, loopback, one thread, 64 MiB,
# on a free port: ${NAME}_port, ${NAME}_pid. -u: memcached refuses root without it.
memcached_start() {
	local name=$1 port
	shift
	port=$(free_port)
	printf -v "${name}_port" %s "$port"
	daemon_start "$name" "$port" memcached -u root -p "$port" -U 0 -l 127.0.0.1 -t 1 -m 64 "$@"
}

# server_start NAME [MEMCACHED_ARGS...]: the server under test with its memcached listener
# on a free port: xkv-server on the io_uring backend (loopback; 2 workers, so that writes
# arriving on the partition's other worker are handed over), or memcached with
# MEMCACHED_ARGS. ${NAME}_port, ${NAME}_pid.
server_start() {
	local name=$1 port
	shift
	if [ "$under_test" = memcached ]; then
		memcached_start "$name" "$@"
		return
	fi
	port=$(free_port)
	printf -v "${name}_port" %s "$port"
	daemon_start "$name" "$port" "$build/xkv-server" --backend uring --workers 2 \
		--port "$(free_port)" --memcached-port "$port" --memory 256M
}

# daemon_stop NAME: stops NAME by its pid and waits for it; fails unless it exited 0 (in
# the ASan build a leak or a fault xkv-server found on its way out fails the test)
daemon_stop() {
	local pid_var="${1}_pid" rc=0 pid
	kill "${!pid_var}" 2>/dev/null || true
	wait "${!pid_var}" 2>/dev/null || rc=$?
	# gone: the exit trap must not signal its pid again
	for pid in "${!interop_pids[@]}"; do
		[ "${interop_pids[$pid]}" != "${!pid_var}" ] || unset "interop_pids[$pid]"
	done
	[ "$rc" -eq 0 ] || fail "$1 exited $rc on SIGTERM: $(tail -n 20 "$out/$1.log")"
}
