#!/usr/bin/env bash
# twemproxy (Debian's nutcracker) with ketama distribution (md5, as libmemcached's
# ketama) in front of two servers under test on loopback, with its own configuration and
# ports (never a system service's), and pymemcache through it (twemproxy.py): 1000 keys
# spread over both servers and read back byte-exact; then one server stopped, and what a
# client sees. auto_eject_hosts is on, as a cache tier wants it: after at most
# server_failure_limit (2) failed requests the stopped server is ejected and its keys
# re-hash onto the live one (misses the application refills) rather than failing until it
# returns; server_retry_timeout (60 s) keeps it out for the whole test. Everything is
# stopped by pid on every way out.
#   twemproxy.sh BUILD_DIR [xkv|memcached]
set -euo pipefail

build=$(cd "${1:?usage: twemproxy.sh BUILD_DIR [xkv|memcached]}" && pwd)
under_test=${2:-xkv}
dir=$(dirname "$0")
. "$dir/../skip.sh"
. "$dir/lib.sh"
need_commands nutcracker
need_pymemcache
interop_begin twemproxy

server_start one
server_start two
failure_limit=2
proxy_port=$(free_port)
cat >"$out/nutcracker.yml" <<YML
xkv:
  listen: 127.0.0.1:$proxy_port
  hash: md5
  distribution: ketama
  timeout: 2000
  auto_eject_hosts: true
  server_failure_limit: $failure_limit
  server_retry_timeout: 60000
  servers:
   - 127.0.0.1:$one_port:1 one
   - 127.0.0.1:$two_port:1 two
YML
nutcracker --test-conf --conf-file="$out/nutcracker.yml" >"$out/conf-test.log" 2>&1 ||
	fail "nutcracker refuses its configuration: $(cat "$out/conf-test.log")"
daemon_start nutcracker "$proxy_port" nutcracker --conf-file="$out/nutcracker.yml" \
	--stats-addr=127.0.0.1 --stats-port="$(free_port)" --output="$out/nutcracker.out"

/usr/bin/python3 "$dir/twemproxy.py" load "127.0.0.1:$proxy_port" "127.0.0.1:$one_port" \
	"127.0.0.1:$two_port"
daemon_stop two
/usr/bin/python3 "$dir/twemproxy.py" stopped "127.0.0.1:$proxy_port" "127.0.0.1:$one_port" \
	"$failure_limit"
kill -0 "$nutcracker_pid" || fail "nutcracker died: $(cat "$out/nutcracker.out")"
daemon_stop one
