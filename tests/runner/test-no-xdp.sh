#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: test-no-xdp.sh RUN_TESTS TEST...
#
# A machine that cannot make the XDP hosts (tests/skip.sh, need_xdp_hosts), planted
# here as a bpftool that cannot probe BPF, first on the PATH (without root, that is
# reason enough already): each TEST, all of which need those hosts, skips and says
# why, none passes in part; under XKV_NO_SKIP=1 the runner fails each of them.
set -uo pipefail
runner=${1:?usage: test-no-xdp.sh RUN_TESTS TEST...}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

printf '#!/bin/sh\necho "Error: no BPF here (planted by %s)" >&2\nexit 1\n' "$0" >"$tmp/bpftool"
chmod +x "$tmp/bpftool"
export PATH="$tmp:$PATH"
why="bpftool cannot probe BPF here: Error: no BPF here (planted by $0)"
# a user without root skips before the probe, for that
[ "$(id -u)" -eq 0 ] || why="needs root: network namespaces, veth, XDP, AF_XDP"

out=$(env -u XKV_NO_SKIP "$runner" "$@" 2>&1) && rc=0 || rc=$?
if [ $rc -eq 0 ] && grep -qxF "0 passed, $# skipped, 0 failed" <<<"$out"; then
	ok "lenient: all $# skip"
else
	not_ok "lenient: exit $rc, not all $# skipped:"$'\n'"$out"
fi
for t in "$@"; do
	if grep -qxF "skipped: $t: $why" <<<"$out"; then
		ok "lenient: $t says why"
	else
		not_ok "lenient: no line 'skipped: $t: $why'"
	fi
done

out=$(XKV_NO_SKIP=1 "$runner" "$@" 2>&1) && rc=0 || rc=$?
if [ $rc -ne 0 ] && grep -qxF "0 passed, 0 skipped, $# failed" <<<"$out"; then
	ok "strict: all $# fail"
else
	not_ok "strict: exit $rc, not all $# failed:"$'\n'"$out"
fi

checks_done no-xdp
