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
unplanted=()

# planted FAULT WHY: replay.sh with FAULT exits 1 and says WHY
planted() {
	local rc=0
	echo "== XKV_REPLAY_FAULT=$1"
	XKV_REPLAY_FAULT=$1 "$here/replay.sh" "$build" >"$log" 2>&1 || rc=$?
	grep -E '^replay: ' "$log" | grep -v FAILED || true
	# a replay that fails or skips keeps its files: these are no news
	sed -n 's/.*\(kept\|files\) in \(\/tmp\/xkv-replay\.[A-Za-z0-9]*\).*/\2/p' "$log" |
		xargs -r rm -rf
	if ! grep -q '^replay: planted: ' "$log"; then
		if [ $rc -eq 0 ]; then
			not_ok "$1: the replay passed, its fault never planted"
		else
			unplanted+=("$1 ($(grep -m 1 '^replay: ' "$log"))")
			echo "$1: the replay failed before its fault was planted"
		fi
		return
	fi
	if [ $rc -eq 1 ] && grep -q "$2" "$log"; then
		ok "$1: exit 1, '$2'"
	else
		not_ok "$1: exit $rc, not 1 with '$2':"$'\n'"$(tail -n 20 "$log")"
	fi
}

planted crash "xkv-server: exit status 139, it had died before it was stopped"
planted checker "no verdict: xkv-trace: check: .*/crashing-lincheck: Segmentation fault"

# a failure stands; without one, a fault that was never planted makes a skip
[ "$failed" -gt 0 ] || [ ${#unplanted[@]} -eq 0 ] ||
	skip "the replay failed before its fault was planted: ${unplanted[*]}"
checks_done replay-faults
