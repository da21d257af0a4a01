#!/usr/bin/env bash
# make install (tools/install/install.mk) into a DESTDIR of its own, PREFIX /usr: every
# program, man page and the unit template where it belongs; each man page names every
# option its program's --help lists; systemd-analyze verifies an instance of the unit;
# and the installed xkv-server, in a namespace pair (tools/netns-pair.sh), serves a GET
# and stops cleanly (nothing left attached) under the unit's bounding set of
# capabilities, and not with any one of them taken away. The DESTDIR, the namespaces and the servers go on every way out.
#   install.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: install.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../skip.sh"
need_xdp_hosts
need_commands help2man setpriv systemd-analyze
. "$root/tools/netns-pair.sh"

id=$$ ns_s="xki-$id-s" ns_c="xki-$id-c" if_s="xis$id" if_c="xic$id"
ip_s=10.206.0.1 ip_c=10.206.0.2
dest=$(mktemp -d /tmp/xkv-install.XXXXXX)
server_pid= netns=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill -INT "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	[ -z "$netns" ] || netns_pair_down
	rm -rf "$dest"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	echo "install: $*" >&2
	exit 1
}

make --no-print-directory -s -C "$root" BUILD="$build" DESTDIR="$dest" PREFIX=/usr install \
	>"$dest.log" 2>&1 || fail "make install: $(tail -5 "$dest.log")"
rm -f "$dest.log"
for f in usr/sbin/xkv-server usr/sbin/xkv-loader usr/sbin/xkv-dir usr/bin/xkv-cli \
	usr/bin/xkv-bench; do
	[ -x "$dest/$f" ] || fail "$f not installed, or not executable"
done
for page in man8/xkv-server.8 man8/xkv-loader.8 man8/xkv-dir.8 man1/xkv-cli.1 man1/xkv-bench.1; do
	man=$dest/usr/share/man/$page prog=$(basename "${page%.*}")
	[ -f "$man" ] || fail "$page not installed"
	bin=$dest/usr/sbin/$prog
	[ -x "$bin" ] || bin=$dest/usr/bin/$prog
	# every long option of --help, in the page (help2man writes - as \-)
	text=$(sed 's/\\-/-/g' "$man")
	for opt in $("$bin" --help 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -q -- "$opt" <<<"$text" || fail "$page does not name $opt"
	done
done
unit=$dest/usr/lib/systemd/system/xkv-server@.service
[ -f "$unit" ] || fail "the unit template not installed"
grep -q "^ExecStart=/usr/sbin/xkv-server --iface %i" "$unit" || fail "ExecStart: $(grep ExecStart "$unit")"
# verified as an instance, against this host's units, its program where it was installed
mkdir "$dest/verify"
sed "s|/usr/sbin/|$dest/usr/sbin/|" "$unit" >"$dest/verify/xkv-server@eth0.service"
systemd-analyze verify --man=no "$dest/verify/xkv-server@eth0.service" >"$dest/verify.log" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$dest/verify.log")"
echo "install: 5 programs, 5 man pages naming every option, the unit verified"

# The unit's bounding set: a GET served under it, and not with any one taken away.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_//g')
netns=1
netns_pair_up
serves() { # serves CAP,CAP...: whether the installed server starts and answers under them
	nsenter --net="/run/netns/$ns_s" setpriv --bounding-set="-all,$1" --inh-caps=-all \
		"$dest/usr/sbin/xkv-server" --iface "$if_s" --allow "$ip_c/32" -M 0 -w 1 \
		>"$dest/server.log" 2>&1 &
	server_pid=$!
	local ok=1
	for _ in $(seq 30); do
		kill -0 "$server_pid" 2>/dev/null || break
		if ip netns exec "$ns_c" "$build/xkv-cli" -s "$ip_s" -t 200 -r 2 put k v >/dev/null 2>&1; then
			ok=0
			break
		fi
		sleep 0.1
	done
	kill -INT "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=
	# and stopped cleanly: nothing of it left on the interface
	if ip -n "$ns_s" link show "$if_s" | grep -q 'prog/xdp'; then
		echo "its XDP program left attached" >>"$dest/server.log"
		ip -n "$ns_s" link set "$if_s" xdp off
		ok=1
	fi
	return $ok
}
all=$(for c in $caps; do printf '+%s,' "$c"; done)
serves "${all%,}" || fail "no GET served under $caps: $(tail -3 "$dest/server.log")"
for c in $caps; do
	fewer=$(for o in $caps; do [ "$o" = "$c" ] || printf '+%s,' "$o"; done)
	! serves "${fewer%,}" || fail "served and stopped cleanly without cap_$c: it is not needed"
	echo "install: without cap_$c: $(grep -m1 -i 'not permitted\|denied\|left attached' "$dest/server.log")"
done
echo "install: the unit's capabilities ($caps) serve, and each is needed"
