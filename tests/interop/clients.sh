#!/usr/bin/env bash
# Real memcached clients against two servers under test on loopback: libmemcached's
# command-line tools (Debian's libmemcached-tools), in the text protocol and then the
# binary one, copy files in, read them back byte-exact (one of 1,000,000 bytes), show
# their flags, remove them and read the servers' stats; then pymemcache's Client and
# HashClient and pylibmc in the binary protocol (clients.py). Both servers are stopped
# on every way out.
#   clients.sh BUILD_DIR [xkv|memcached]
set -euo pipefail

build=$(cd "${1:?usage: clients.sh BUILD_DIR [xkv|memcached]}" && pwd)
under_test=${2:-xkv}
dir=$(dirname "$0")
. "$dir/../skip.sh"
. "$dir/lib.sh"
need_commands memccp memccat memcrm memcstat
need_pymemcache
need_pylibmc
interop_begin clients

server_start one
server_start two
one=127.0.0.1:$one_port
two=127.0.0.1:$two_port

files=$out/files
mkdir "$files"
echo hello >"$files/small.txt"
: >"$files/empty"
head -c 1000000 /dev/urandom >"$files/big.bin"
printf 'line\r\nEND\r\nVALUE x 0 1\r\n' >"$files/protocol-like"
names=(small.txt empty big.bin protocol-like)
tool=/usr/share/memcached/scripts/memcached-tool

# each in the text protocol, then in the binary one
for mode in text binary; do
	opt=()
	[ "$mode" = text ] || opt=(--binary)
	memccp "${opt[@]}" --servers="$one" --flag=42 "${names[@]/#/$files/}" ||
		fail "memccp ($mode) exited $?"
	for name in "${names[@]}"; do
		memccat "${opt[@]}" --servers="$one" --file="$out/got" "$name" ||
			fail "memccat ($mode) $name exited $?"
		cmp "$files/$name" "$out/got" || fail "memccat ($mode) $name: not what memccp stored"
	done
	# memcached-tool's display: a row per slab class holding them, 4 items in all
	timeout 20 "$tool" "$one" display >"$out/display-$mode" ||
		fail "memcached-tool display exited $? (124: it waited for an END)"
	count=$(awk 'NR > 1 { n += $5 } END { print n + 0 }' "$out/display-$mode")
	[ "$count" = 4 ] && [ "$(wc -l <"$out/display-$mode")" -ge 3 ] ||
		fail "memcached-tool display ($mode): $(cat "$out/display-$mode")"
	flags=$(memccat "${opt[@]}" --servers="$one" --flags small.txt | head -n 1)
	[ "$flags" = 42 ] || fail "memccat ($mode) --flags: '$flags', not 42"
	memcrm "${opt[@]}" --servers="$one" "${names[@]}" || fail "memcrm ($mode) exited $?"
	for name in "${names[@]}"; do
		! memccat "${opt[@]}" --servers="$one" "$name" >/dev/null 2>&1 ||
			fail "$name still there after memcrm ($mode)"
	done
done
memcstat --binary --servers="$one,$two" >"$out/stats-binary" || fail "memcstat --binary exited $?"
grep -q "^	curr_items: " "$out/stats-binary" || fail "memcstat --binary: $(cat "$out/stats-binary")"
memcstat --servers="$one,$two" >"$out/stats" || fail "memcstat exited $?"
for port in "$one_port" "$two_port"; do
	grep -q "^Server: 127.0.0.1 ($port)" "$out/stats" || fail "memcstat: no server $port"
done
for stat in pid uptime version curr_items; do
	[ "$(grep -c "^	$stat: " "$out/stats")" -eq 2 ] ||
		fail "memcstat: no $stat for both servers: $(cat "$out/stats")"
done
# memcached's own memcached-tool: its stats and settings pages (it leaves each value's \r)
"$tool" "$one" stats | tr -d '\r' >"$out/tool-stats" || fail "memcached-tool stats exited $?"
grep -Eq "^ +cmd_get +[0-9]+$" "$out/tool-stats" || fail "memcached-tool stats: $(cat "$out/tool-stats")"
"$tool" "$one" settings | tr -d '\r' >"$out/tool-settings" ||
	fail "memcached-tool settings exited $?"
grep -Eq "^ +maxbytes +[0-9]+$" "$out/tool-settings" ||
	fail "memcached-tool settings: $(cat "$out/tool-settings")"
echo "memcached-tool: display, stats and settings"
echo "libmemcached-tools, text and binary: memccp, memccat (byte-exact, 1,000,000 bytes" \
	"too; flags), memcrm, memcstat on two servers"

/usr/bin/python3 "$dir/clients.py" "$one" "$two"
daemon_stop one
daemon_stop two
