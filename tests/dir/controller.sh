#!/usr/bin/env bash
# xkv-dir, the directory's controller (docs/DIRECTORY.md), in the lab of tools/netns-dir.sh
# with two xkv-servers (io_uring backend) and xkv-cli --dir as the client, spreading keys
# over both by ketama: attach, add, writes and reads through the directory, remove with
# its migration home, add again over servers that hold older copies, a full directory,
# a server that does not answer, status and stats in JSON, detach. Namespaces, pins and
# processes are removed on every way out.
#   controller.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: controller.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
need_xdp_hosts
need_commands /usr/bin/python3
dir_prefix="xk$$"
pin="/sys/fs/bpf/xkv-dir-ctl-$$"
. "$here/lab_env.sh"

pool=$dir_pool
ifaces=("${dir_ifaces[@]}")
dir() { in_d "$build/xkv-dir" --pin "$pin" --state "$out/keys" "$@"; }
cli() { ip netns exec "$c" "$build/xkv-cli" -s "$pool" --dir "$@"; }
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

lab_servers
dir --servers "$pool" attach "${ifaces[@]}" || fail "attach"
dir --servers "$pool" attach "${dir_prefix}dc" 2>"$out/err" && fail "a second attach"
grep -q "exists" "$out/err" || fail "a second attach says: $(cat "$out/err")"

# the key's home, by ketama, as the client and the directory both place it
home=$(cli where hot | awk '{print $2}')
home=${home#s}
other=$((1 - home))
cli put hot v0 >/dev/null || fail "a write of a key the directory does not hold"
added=$(dir add hot) || fail "add"
echo "$added"
# one past the newest version any server holds: none holds one yet
[ "$(dir --json status | json '[(k["home"], k["rset"], k["ver_curr"]) for k in d["keys"]]')" = \
	"[($home, $((1 << home)), 1)]" ] || fail "status after add: $(dir --json status)"
dir add hot 2>"$out/err" && fail "adding a key twice"

# writes go round the servers, each stamped; every read returns the last
for v in 1 2 3 4 5; do
	cli put hot "v$v" >/dev/null || fail "write v$v"
	[ "$(cli get hot)" = "v$v" ] || fail "a read after write v$v: $(cli get hot)"
done
status=$(dir --json status)
[ "$(echo "$status" | json '[(k["ver_curr"], k["ver_next"], k["writes"]) for k in d["keys"]]')" = \
	"[(6, 6, 5)]" ] || fail "status after 5 writes: $status"

# Writes until the newest value is on the other server alone, so that a removal or a
# recovery must move it; last: the value written last.
rset() { dir --json status | json 'd["keys"][0]["rset"]'; }
write_to_other() {
	local tries
	for tries in 1 2 3 4; do
		[ "$(rset)" = $((1 << other)) ] && return
		last=$((last + 1))
		cli put hot "v$last" >/dev/null || fail "write v$last"
	done
	fail "no write reached server $other: $(dir status)"
}
last=5
write_to_other

# remove: the newest value goes home; after it, the home alone answers, in version 2 too
dir remove hot || fail "remove"
[ "$(in_s "$home" get hot)" = "v$last" ] || fail "home holds $(in_s "$home" get hot), not v$last"
[ "$(ip netns exec "$c" "$build/xkv-cli" -s "$pool" get hot)" = "v$last" ] ||
	fail "a version 2 read after the removal"
dir remove hot 2>"$out/err" && fail "removing a key not held"
grep -q "not replicated" "$out/err" || fail "removing a key not held says: $(cat "$out/err")"

# added again: the versions start past any a server holds, so that a write to a server
# with an older copy still applies there
dir add hot >/dev/null || fail "add again"
ver=$(dir --json status | json 'd["keys"][0]["ver_curr"]')
[ "$ver" -gt "$((last + 1))" ] || fail "added again at version $ver: servers hold up to $((last + 1))"
writes=$last
for v in 10 11; do
	cli put hot "v$v" >/dev/null || fail "write v$v"
	[ "$(cli get hot)" = "v$v" ] || fail "a read after write v$v, the key added again"
done
echo "controller: add, 5 writes and reads, remove home, add again at version $ver: ok"

# stats: every steered request counted
stats=$(dir --json stats)
[ "$(echo "$stats" | json "d['write'] == $writes + 2 and d['read'] >= 7 and
	d['reply_newer'] >= $writes + 2")" = True ] || fail "stats: $stats"

# Sec. 6.6: a server sends home a steered request for a key it does not hold replicated
# (a late packet, a key whose hash collides with a replicated one's). "cold" added and
# removed, so that the servers heard it is gone, then put back in the directory by hand
# on its other server, as a collision would steer it: each of its requests reaches that
# server, which sends it home; home serves it; the directory lets it by, as it drops one
# a client forges.
chash=$(dir add cold | sed -n 's/.*hash \([0-9a-f]*\).*/\1/p')
[ -n "$chash" ] || fail "add cold printed no hash"
dir remove cold >/dev/null || fail "remove cold"
chome=$(cli where cold | awk '{print $2}')
chome=${chome#s}
cother=$((1 - chome))
map_set xkv_dir_keys "$(le "0x$chash" 8)" "$(le 0 4) $(le $((1 << cother)) 4) $(le 1 8) \
	$(le 1 8) $(le "$chome" 4) $(le 0 4) $(le 0 8) $(le 0 8)"
cli put cold stray >/dev/null || fail "a stray write"
for _ in 1 2 3; do
	[ "$(cli get cold)" = stray ] || fail "a stray read: $(cli get cold)"
done
[ "$(in_s "$chome" get cold)" = stray ] || fail "home does not hold the stray write"
rc=0
in_s "$cother" get cold >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "server $cother, not home, took a stray (exit $rc)"
ip netns exec "$c" /usr/bin/python3 "$here/lab.py" forge "10.0.$((chome + 1)).1" cold ||
	fail "a forged stray"
# the reads went to the replica set, the other server; the write to any server, maybe home
[ "$(dir --json stats | json 'd["forwarded"] in (3, 4) and d["forged"] == 1')" = True ] ||
	fail "strays counted: $(dir stats)"
bpftool map delete pinned "$pin/xkv_dir_keys" key hex $(le "0x$chash" 8)
echo "controller: strays sent home by server $cother, served by $chome; a forged one dropped"

# The directory lost (Sec. 6.7): its maps go with a forced detach; the state file keeps
# its keys, so the next attach holds requests until each key's newest value is home
last=11
write_to_other
dir recover 2>"$out/err" && fail "a recovery of a directory that lost nothing"
grep -q "not recovering" "$out/err" || fail "a needless recovery says: $(cat "$out/err")"
[ "$(dir --json status | json 'len(d["keys"])')" = 1 ] || fail "a needless recovery changed the keys"
dir detach "${ifaces[@]}" 2>"$out/err" && fail "a detach with keys replicated"
grep -q "replicated" "$out/err" || fail "a detach with keys replicated says: $(cat "$out/err")"
dir --force detach "${ifaces[@]}" || fail "detach --force"
[ "$(in_s "$home" get hot)" != "v$last" ] || fail "home holds the newest already: no test"
dir --servers "$pool" attach "${ifaces[@]}" >"$out/attach" || fail "attach after the loss"
grep -q "recovered 1 keys, 1 of them moved home" "$out/attach" ||
	fail "the recovery says: $(cat "$out/attach")"
[ "$(in_s "$home" get hot)" = "v$last" ] || fail "home holds $(in_s "$home" get hot) after recovery"
[ "$(cli get hot)" = "v$last" ] || fail "a read after the recovery"
[ "$(dir --json status | json 'len(d["keys"])')" = 0 ] || fail "keys held after the recovery"
echo "controller: the directory lost and attached again: v$last back home first"
dir add hot >/dev/null || fail "add after the recovery"

# Writes to several servers (Sec. 6.4): attached with --write-servers 2, a write of a key
# read more often than written goes to two servers, through the tc program's copies;
# both apply it, and both replies put their server in the replica set
dir remove hot >/dev/null || fail "remove before the writes to two servers"
dir detach "${ifaces[@]}" || fail "detach before the writes to two servers"
dir --servers "$pool" --write-servers 2 attach "${ifaces[@]}" || fail "attach --write-servers 2"
dir add hot >/dev/null || fail "add, two servers a write"
for _ in 1 2 3 4 5 6; do cli get hot >/dev/null || fail "a read of hot"; done
cli put hot v-both >/dev/null || fail "a write to two servers"
for _ in $(seq 20); do
	[ "$(rset)" = 3 ] && break
	sleep 0.05
done
[ "$(rset)" = 3 ] || fail "the replica set after a write to two servers: $(dir status)"
for i in 0 1; do
	[ "$(in_s $i get hot)" = v-both ] || fail "server $i holds $(in_s $i get hot), not v-both"
done
for _ in 1 2 3 4; do [ "$(cli get hot)" = v-both ] || fail "a read after the write to two"; done
[ "$(dir --json stats | json 'd["fanout"] == 1 and d["fanout_copy"] == 2')" = True ] ||
	fail "the copies counted: $(dir stats)"
echo "controller: a write to two servers, both hold it, the replica set both"

# a full directory refuses, and says so
mapfile -t keys < <(seq -f "k%g" 2 4096) # hot and 4095 more
dir add "${keys[@]}" >/dev/null 2>"$out/err" || fail "filling it: $(tail -3 "$out/err")"
dir add one-too-many 2>"$out/err" && fail "a key past a full directory"
grep -q "full" "$out/err" || fail "a full directory says: $(cat "$out/err")"
[ "$(dir --json status | json 'len(d["keys"])')" = 4096 ] || fail "not 4096 keys"
echo "controller: 4096 keys held, the next refused"

# a server that does not answer: its version is unknown, so no key is added, and a
# recovery cannot finish: requests stay held until it does
dir remove k2 >/dev/null || fail "remove k2" # every server hears of it
kill "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
dir --timeout 100 add k2 2>"$out/err" && fail "adding with a server down"
echo "controller: with a server down, add refused: $(tail -1 "$out/err")"
dir --force detach "${ifaces[@]}" || fail "detach --force, 4095 keys"
dir --timeout 100 --servers "$pool" attach "${ifaces[@]}" >/dev/null 2>"$out/err" &&
	fail "a recovery with a server down"
grep -q "held" "$out/err" || fail "a recovery with a server down says: $(cat "$out/err")"
dir add k2 2>"$out/err" && fail "an add while recovering"
grep -q "recovering" "$out/err" || fail "an add while recovering says: $(cat "$out/err")"
cli -r 0 -t 200 get k3 >/dev/null 2>&1 && fail "a request passed a holding directory"
[ "$(dir --json stats | json 'd["held"] >= 1')" = True ] || fail "no request counted held"
lab_server 1
for _ in $(seq 50); do
	dir --timeout 100 recover >"$out/recover" 2>/dev/null && break
	sleep 0.1
done
grep -q "recovered 4095 keys" "$out/recover" || fail "recover: $(cat "$out/recover")"
rc=0
cli get k3 >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "a request after the recovery: exit $rc, not 1 (not found)"
echo "controller: a recovery held requests until the server was back: $(cat "$out/recover")"

dir detach "${ifaces[@]}" || fail "detach"
[ ! -e "$pin" ] || fail "$pin left after detach"
ip -n "$d" link show "${dir_prefix}d0" | grep -q xdp && fail "XDP left on ${dir_prefix}d0"
echo "controller: detached, nothing left"
