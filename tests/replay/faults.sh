#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The replay test fails, neither passes nor skips, on what a busy machine cannot cause
# (tests/replay/replay.sh, XKV_REPLAY_FAULT): a server that crashes before it is
# stopped, and a checker that crashes. Each run stops at its first policy. A replay
# that failed before it reached its fault (a machine too busy for its first policy
# fails run-replay too) tells nothing of the fault: a skip, saying why.
#   tests/replay/faults.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: faults.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
. "$here/../checks.sh"
need_xdp_hosts
need_commands tcpreplay tcpdump
log=$(mktemp /tmp/xkv-replay-faults.XXXXXX)
trap 'rm -f "$log"' EXIT

# planted FAULT WHY: replay.sh with FAULT exits 1 and says WHY
planted() {
	local rc=0
	echo "== XKV_REPLAY_FAULT=$1"
	XKV_REPLAY_FAULT=$1 "$here/replay.sh" "$build" >"$log" 2>&1 || rc=$?
	grep -E '^replay: ' "$log" | grep -v FAILED || true
	# a failed replay keeps its files: these are no news
	rm -rf "$(sed -n 's/^replay: FAILED; traces and logs kept in //p' "$log")"
	if ! grep -q '^replay: planted: ' "$log"; then
		[ $rc -ne 0 ] || {
			not_ok "$1: the replay passed, its fault never planted"
			return
		}
		skip "the replay failed before its fault ($1) was planted:" \
			"$(grep -m 1 '^replay: ' "$log")"
	fi
	if [ $rc -eq 1 ] && grep -q "$2" "$log"; then
		ok "$1: exit 1, '$2'"
	else
		not_ok "$1: exit $rc, not 1 with '$2':"$'\n'"$(tail -n 20 "$log")"
	fi
}

planted crash "xkv-server: exit status 139, it had died before it was stopped"
planted checker "no verdict: xkv-trace: check: .*/crashing-lincheck: Segmentation fault"

checks_done replay-faults
