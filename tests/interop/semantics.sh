#!/usr/bin/env bash
# memcached's text and meta protocol side by side (semantics.py, the cases and how
# replies are compared), then its binary protocol (binary.py): a reference memcached, a second one with -I 2m for the value
# of exactly 1 MiB, and the server under test, each on its own loopback port, all
# stopped on every way out.
#   semantics.sh BUILD_DIR [xkv|memcached] [SEMANTICS_PY_OPTIONS...]
# xkv (the default) tests xkv-server; memcached tests a memcached against the reference
# (the harness's own check; also what runs while xkv-server has no --memcached-port).
set -euo pipefail

build=$(cd "${1:?usage: semantics.sh BUILD_DIR [xkv|memcached]}" && pwd)
under_test=${2:-xkv}
shift $(($# < 2 ? $# : 2))
dir=$(dirname "$0")
. "$dir/../skip.sh"
. "$dir/lib.sh"
interop_begin semantics

memcached_start reference
memcached_start reference_large -I 2m
server_start server
large=()
# memcached under test refuses a value of 1 MiB exactly unless it has -I 2m (and then
# takes 1 MiB + 1): one of each
if [ "$under_test" = memcached ]; then
	memcached_start server_large -I 2m
	large=(--server-large "127.0.0.1:$server_large_port")
fi
/usr/bin/python3 "$dir/semantics.py" --reference "127.0.0.1:$reference_port" \
	--reference-large "127.0.0.1:$reference_large_port" --server "127.0.0.1:$server_port" \
	"${large[@]}" "$@"
/usr/bin/python3 "$dir/binary.py" --reference "127.0.0.1:$reference_port" \
	--server "127.0.0.1:$server_port"
daemon_stop server
