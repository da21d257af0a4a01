#!/usr/bin/env bash
# xkv's ketama against twemproxy's own (Debian's nutcracker, distribution ketama, hash
# md5): four memcacheds on loopback (weights 1, 3, 1, 2; one named, as twemproxy's
# "HOST:PORT:WEIGHT NAME"), nutcracker in front with its own configuration and ports,
# 3000 keys set through it and found on the memcached it chose (ketama.py); xkv-cli
# given the same list must name that server for every key. Every daemon is stopped by
# pid on every way out.
#   ketama.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: ketama.sh BUILD_DIR}" && pwd)
under_test=memcached # only the placement is under test: the servers are memcacheds
dir=$(dirname "$0")
. "$dir/../skip.sh"
. "$dir/lib.sh"
need_commands nutcracker
need_pymemcache
interop_begin ketama

for s in one two three four; do
	memcached_start "$s"
done
# weights whose shares of 160 points are fractions: twemproxy's rounding counts too
servers=("127.0.0.1:$one_port:1" "127.0.0.1:$two_port:3" "127.0.0.1:$three_port:1 gamma"
	"127.0.0.1:$four_port:2")
proxy_port=$(free_port)
{
	echo "pool:"
	echo "  listen: 127.0.0.1:$proxy_port"
	echo "  hash: md5"
	echo "  distribution: ketama"
	echo "  servers:"
	for s in "${servers[@]}"; do
		echo "   - $s"
	done
} >"$out/nutcracker.yml"
nutcracker --test-conf --conf-file="$out/nutcracker.yml" >"$out/conf-test.log" 2>&1 ||
	fail "nutcracker refuses its configuration: $(cat "$out/conf-test.log")"
daemon_start nutcracker "$proxy_port" nutcracker --conf-file="$out/nutcracker.yml" \
	--stats-addr=127.0.0.1 --stats-port="$(free_port)" --output="$out/nutcracker.out"

list=$(IFS=,; echo "${servers[*]}")
/usr/bin/python3 "$dir/ketama.py" "127.0.0.1:$proxy_port" "$build/xkv-cli" "$list" \
	"$one_port" "$two_port" "$three_port" "$four_port"
