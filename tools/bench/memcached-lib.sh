# SPDX-License-Identifier: MIT
# Sourced by the scripts that run a real memcached beside xkv (tests/bench/memcached.sh,
# tools/bench/memory.sh): a free UDP port, and memcached started on loopback.

# Whether UDP port $1 on loopback is free now.
udp_port_free() {
	python3 -c 'import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind(("127.0.0.1", int(sys.argv[1])))' \
		"$1" 2>/dev/null
}

# Whether memcached answers an ASCII "version" in a one-datagram UDP frame on port $1.
memcached_answers() {
	python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.1)
s.sendto(b"\0\1\0\0\0\1\0\0version\r\n", ("127.0.0.1", int(sys.argv[1])))
try:
    sys.exit(0 if s.recv(1500)[8:].startswith(b"VERSION ") else 1)
except OSError:
    sys.exit(1)
PY
}

# memcached_start LOG_DIR [MEMCACHED_ARGS...]: memcached on a free loopback UDP port
# (no TCP), one thread. Sets memcached_port and memcached_pid; returns 1, having
# said why, when it could not start.
memcached_start() {
	local dir=$1 attempt
	shift
	for attempt in 0 1 2 3 4; do
		memcached_port=$((20000 + ($$ + attempt * 3331) % 10000))
		udp_port_free "$memcached_port" || continue
		# -u: memcached refuses to run as root without it (and ignores it otherwise)
		memcached -u root -U "$memcached_port" -p 0 -l 127.0.0.1 -t 1 "$@" \
			>"$dir/memcached.log" 2>&1 &
		memcached_pid=$!
		for _ in $(seq 50); do
			kill -0 "$memcached_pid" 2>/dev/null || break
			# still alive once answered: the answer was ours, not a squatter's
			memcached_answers "$memcached_port" && kill -0 "$memcached_pid" 2>/dev/null &&
				return 0
			sleep 0.1
		done
		kill "$memcached_pid" 2>/dev/null || true
		wait "$memcached_pid" 2>/dev/null || true
		memcached_pid=
		echo "memcached did not start on UDP port $memcached_port:" \
			"$(cat "$dir/memcached.log")" >&2
		return 1
	done
	echo "no free UDP port for memcached (tried 5)" >&2
	return 1
}
