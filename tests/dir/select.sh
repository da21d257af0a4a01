#!/usr/bin/env bash
# The directory's strategies for choosing a server (docs/DIRECTORY.md, "Choosing a
# server") on a real data path: the lab of tools/netns-dir.sh with two xkv-servers, one
# key replicated on both, and xkv-bench reading it through the directory. Each strategy
# in turn (xkv-dir select), first with the servers alike, then with one of them made
# slow on purpose: stopped 7 ms in every 8 (SIGSTOP, SIGCONT). What each strategy sent
# where comes from xkv-dir status. Then the servers' report of their hot keys (xkv-dir
# hot). Namespaces, pins and processes go on every way out.
#   select.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: select.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
need_xdp_hosts
need_commands /usr/bin/python3
dir_prefix="xs$$"
pin="/sys/fs/bpf/xkv-dir-sel-$$"
. "$here/lab_env.sh"

pool=$dir_pool
key=k000000000000000 # xkv-bench's first key
dir() { in_d "$build/xkv-dir" --pin "$pin" --state "$out/keys" "$@"; }
cli() { ip netns exec "$c" "$build/xkv-cli" -s "$pool" --dir "$@"; }
json() { /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

lab_servers
dir --servers "$pool" --write-servers 2 attach "${dir_ifaces[@]}" >/dev/null || fail "attach"
dir add "$key" >/dev/null || fail "add $key"
# read more than written, a write goes to both servers, and both join the replica set
for _ in 1 2 3 4 5 6; do cli get "$key" >/dev/null 2>&1 || [ $? -eq 1 ] || fail "a read"; done
cli put "$key" v >/dev/null || fail "a write to both servers"
for _ in $(seq 20); do
	[ "$(dir --json status | json 'd["keys"][0]["rset"]')" = 3 ] && break
	sleep 0.05
done
[ "$(dir --json status | json 'd["keys"][0]["rset"]')" = 3 ] || fail "not on both: $(dir status)"
home=$(cli where "$key" | awk '{print $2}')
home=${home#s}
slow=$((1 - home)) # the one made slow: popularity's cool key stays home, away from it

# What strategy $1 has sent each server so far: "N0 N1".
sent() { dir --json status | json "' '.join(str(s['sent']['$1']) for s in d['servers'])"; }

# Reads through the directory for $1 seconds, 16 outstanding, of xkv-bench's first $2
# keys, the first of which is replicated.
reads() {
	ip netns exec "$c" "$build/xkv-bench" -s "$pool" --protocol xkv-dir --keys "$2" \
		--get-ratio 1 --duration "$1" --threads 1 --depth 16 --json >"$out/bench.json" \
		2>"$out/bench.log" || fail "xkv-bench: $(tail -3 "$out/bench.log")"
}

# Server $1 stopped 7 ms in every 8 until the process this starts is stopped; it is
# first in pids, so that the lab's cleanup lets the server go on before stopping it.
slow_down() {
	/usr/bin/python3 - "${pids[$1]}" <<'PY' &
import os, signal, sys, time
pid = int(sys.argv[1])
def done(*_):
	os.kill(pid, signal.SIGCONT)
	sys.exit(0)
signal.signal(signal.SIGTERM, done)
signal.signal(signal.SIGINT, done)
while True:
	os.kill(pid, signal.SIGSTOP)
	time.sleep(0.007)
	os.kill(pid, signal.SIGCONT)
	time.sleep(0.001)
PY
	pids=($! "${pids[@]}")
}
speed_up() {
	kill "${pids[0]}"
	wait "${pids[0]}" || true
	pids=("${pids[@]:1}")
}

# Runs phase $2 (alike or slow) of strategy $1 over $3 keys; prints the share of its
# sends server $slow got, in per cent, and the sends.
phase() {
	local before after
	before=$(sent "$1")
	[ "$2" = slow ] && slow_down "$slow"
	reads 1.5 "$3"
	[ "$2" = slow ] && speed_up
	after=$(sent "$1")
	/usr/bin/python3 - "$before" "$after" "$slow" <<'PY'
import sys
before, after = ([int(n) for n in a.split()] for a in sys.argv[1:3])
got = [a - b for a, b in zip(after, before)]
slow = int(sys.argv[3])
print(round(100 * got[slow] / max(1, sum(got))), sum(got))
PY
}

dir select fastest 2>"$out/err" && fail "an unknown strategy chosen"
grep -q "select takes one of" "$out/err" || fail "an unknown strategy: $(cat "$out/err")"
dir select c3 >/dev/null && dir status | grep -q "servers chosen by c3" || fail "status: $(dir status)"

printf '%-13s %-22s %s\n' strategy "alike: server $slow" "server $slow slow: its share"
for s in round-robin least-loaded predict c3 popularity; do
	popular=() keys=1
	# the replicated key one of 100 read alike: 1 %, below a 10 % threshold, cool
	[ $s = popularity ] && popular=(--popular 100000) keys=100
	dir "${popular[@]}" select $s >/dev/null || fail "select $s"
	read -r alike n_alike < <(phase $s alike $keys)
	read -r slowed n_slow < <(phase $s slow $keys)
	printf '%-13s %3s %% of %-12s %3s %% of %s\n' $s "$alike" "$n_alike" "$slowed" "$n_slow"
	[ "$n_alike" -ge 200 ] && [ "$n_slow" -ge 50 ] || fail "$s: too few reads to judge"
	case $s in
	round-robin)
		# blind to load: half each, slow or not
		[ "$alike" -ge 40 ] && [ "$alike" -le 60 ] || fail "$s: $alike % alike"
		[ "$slowed" -ge 40 ] && [ "$slowed" -le 60 ] || fail "$s: $slowed % to the slow";;
	popularity)
		# a cool key: every read to one server, its home
		[ "$alike" -eq 0 ] && [ "$slowed" -eq 0 ] || fail "$s: a cool key left home";;
	*)
		# spread while alike; the slow server gets fewer
		[ "$alike" -ge 20 ] && [ "$alike" -le 80 ] || fail "$s: $alike % alike, not spread"
		[ "$slowed" -lt 40 ] || fail "$s: $slowed % to the slow server";;
	esac
done
dir --popular 0 select popularity >/dev/null || fail "select popularity, every key popular"
read -r hot n_hot < <(phase popularity alike 100)
[ "$hot" -ge 40 ] && [ "$hot" -le 60 ] || fail "popularity: a popular key's reads: $hot % not half"
echo "popularity, every key popular: $hot % of $n_hot to server $slow"
[ "$(dir --json stats | json "d['sent_by']['c3'] > 0 and d['sent_by']['predict'] > 0")" = True ] ||
	fail "stats: $(dir stats)"

# The servers' hot keys (Pegasus Sec. 7.3): a second of reads of the key, round-robin
# over both servers, and the last epoch each reported (1 s, the servers' default) has
# the key first, counted by both, replicated
dir select round-robin >/dev/null
reads 1.5 1
hot=$(dir --json hot) || fail "hot: $(dir hot 2>&1)"
[ "$(echo "$hot" | json "d['keys'][0]['key'] == '$key' and d['keys'][0]['servers'] == 2 and
	d['keys'][0]['replicated'] and d['keys'][0]['count'] > 1000 and
	d['keys'][0]['count'] <= d['requests']")" = True ] || fail "hot keys: $hot"
echo "hot keys: $(dir hot | sed -n 2p)"
dir detach "${dir_ifaces[@]}" >/dev/null 2>&1 || true
