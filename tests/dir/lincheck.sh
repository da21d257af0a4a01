#!/usr/bin/env bash
# Linearizability across servers through the coherence directory (docs/DIRECTORY.md):
# the lab with four xkv-servers, xkv-dir attached with writes to up to two servers,
# and xkv-linload --dir on the pool's hot keys (80 % reads), every one replicated,
# while the keys are removed and added again and the directory loses its maps once and
# recovers them (Sec. 6.4, 6.5, 6.7). xkv-lincheck must
# call the history linearizable. Then the controller's loop (xkv-dir run, epochs of
# 200 ms, one key held, the servers' epochs as long) chooses the keys itself while
# xkv-bench's reads move the hot key among the four every second (--shuffle), so that it
# adds and removes keys under the same load: that
# history must be linearizable too. Then the same run with a directory built with one
# planted fault each must be called not linearizable: a newer reply that joins the
# replica set instead of resetting it (tests/dir/broken/join.sed), and a removal without
# its migration phase (tests/dir/broken/no_migration.c).
#   lincheck.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: lincheck.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
need_xdp_hosts
dir_prefix="xn$$"
dir_nservers=4
pin="/sys/fs/bpf/xkv-dir-lin-$$"
lab_server_opts=(--hot-epoch-ms 200) # the servers' hot keys as often as the loop asks
. "$here/lab_env.sh"

keys=(k000000000000000 k000000000000001 k000000000000002 k000000000000003)
lab_servers

forwarding() { ip netns exec "$d" sysctl -qw net.ipv4.ip_forward="$1"; }
# the writes the run's directory sent to two servers, since its last attach
dir_copies() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["fanout"])' "$out/$name.stats"; }

# One run with the xkv-dir at $1 (its name $2): the history's verdict, xkv-lincheck's exit.
run() {
	local xkv_dir=$1 name=$2 load rc=0 round=0
	dir() { in_d "$xkv_dir" --pin "$pin" --state "$out/$name.keys" --timeout 200 "$@"; }
	dir --servers "$dir_pool" --write-servers 2 attach "${dir_ifaces[@]}" >/dev/null ||
		fail "$name: attach"
	dir add "${keys[@]}" >/dev/null || fail "$name: add"
	ip netns exec "$c" "$build/xkv-linload" --dir -s "$dir_pool" -t 8 -k 4 -D 4 -m 80:15:5 \
		-v 16-1000 --timeout-ms 300 --out "$out/$name.history" >"$out/$name.load" 2>&1 &
	load=$!
	pids+=($load)
	# keys removed and added again, one at a time; the directory lost once, on the way
	while kill -0 "$load" 2>/dev/null; do
		sleep 0.2
		round=$((round + 1))
		if [ $round -eq 8 ]; then
			# the host down: nothing crosses it while its maps are lost and until
			# it is attached again (holding, as it recovers, what may cross then)
			forwarding 0
			dir --force detach "${dir_ifaces[@]}" >/dev/null
			dir --servers "$dir_pool" --write-servers 2 attach "${dir_ifaces[@]}" \
				>/dev/null || fail "$name: attach after the loss"
			forwarding 1
			dir add "${keys[@]}" >/dev/null
			continue
		fi
		# 50 ms unreplicated: every request for the key goes to its home, which
		# must hold its newest value by then
		key=${keys[$((round % 4))]}
		dir remove "$key" >/dev/null && sleep 0.05 && dir add "$key" >/dev/null ||
			fail "$name: remove and add $key"
	done
	wait "$load" || fail "$name: xkv-linload: $(tail -3 "$out/$name.load")"
	dir --json stats >"$out/$name.stats"
	dir --force detach "${dir_ifaces[@]}" >/dev/null || fail "$name: detach"
	echo "$name: $(grep -m1 'operations' "$out/$name.load" || tail -1 "$out/$name.load"), $round rounds of churn, $(dir_copies) writes to two servers"
	"$build/xkv-lincheck" "$out/$name.history" >"$out/$name.verdict" 2>&1 || rc=$?
	echo "$name: $(head -1 "$out/$name.verdict")"
	return $rc
}

# The controller's loop doing the churn: reads alone (no writes of xkv-bench's into the
# history), zipf 3 over the four keys (the hottest gets some 80 %), the hottest moved
# every second.
run_loop() {
	local name=loop rc=0 load reads ctl changes
	dir() { in_d "$build/xkv-dir" --pin "$pin" --state "$out/$name.keys" --timeout 200 "$@"; }
	dir --servers "$dir_pool" --write-servers 2 attach "${dir_ifaces[@]}" >/dev/null ||
		fail "$name: attach"
	# not by in_d, a function: $! must be the loop's own process, for its signal
	nsenter --net="/run/netns/$d" "$build/xkv-dir" --pin "$pin" --state "$out/$name.keys" \
		--timeout 200 --epoch 200 --keys 1 run >"$out/$name.run" 2>&1 &
	ctl=$!
	pids+=($ctl)
	ip netns exec "$c" "$build/xkv-bench" -s "$dir_pool" --protocol xkv-dir --keys 4 \
		--no-load --get-ratio 1 --zipf 3 --shuffle 1 --duration 5 --depth 16 \
		>"$out/$name.reads" 2>&1 &
	reads=$!
	pids+=($reads)
	ip netns exec "$c" "$build/xkv-linload" --dir -s "$dir_pool" -t 8 -k 4 -D 4 -m 80:15:5 \
		-v 16-1000 --timeout-ms 300 --out "$out/$name.history" >"$out/$name.load" 2>&1 ||
		fail "$name: xkv-linload: $(tail -3 "$out/$name.load")"
	kill -INT "$ctl" "$reads" 2>/dev/null || true
	wait "$ctl" "$reads" 2>/dev/null || true
	dir --force detach "${dir_ifaces[@]}" >/dev/null || fail "$name: detach"
	changes=$(grep -c -e ': added ' -e ': removed ' "$out/$name.run" || true)
	[ "$changes" -ge 4 ] || fail "$name: the loop added and removed $changes keys: $(cat "$out/$name.run")"
	echo "$name: $(grep -m1 'operations' "$out/$name.load" || tail -1 "$out/$name.load"), the loop added or removed a key $changes times"
	"$build/xkv-lincheck" "$out/$name.history" >"$out/$name.verdict" 2>&1 || rc=$?
	echo "$name: $(head -1 "$out/$name.verdict")"
	return $rc
}

run "$build/xkv-dir" directory || fail "the directory's history is not linearizable: $(cat "$out/directory.verdict")"
run_loop || fail "the history while the loop churned keys is not linearizable: $(cat "$out/loop.verdict")"
for broken in join no_migration; do
	rc=0
	run "$build/tests/dir/broken/xkv-dir-$broken" "$broken" || rc=$?
	[ $rc -eq 1 ] || fail "a directory with the $broken fault was not caught (xkv-lincheck exit $rc)"
done
echo "dir-lincheck: linearizable across 4 servers; both planted faults caught"
