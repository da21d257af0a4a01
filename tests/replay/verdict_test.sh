#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: verdict_test.sh
#
# tests/replay/verdict.sh's check_verdict on reports of xkv-trace check written by hand
# in its format (docs/TRACE.md): only an undecided history, and GETs unanswered by a
# server that counted drops, are tried again; a wrong reply or value fails whatever
# the drops, and so does a check or checker that crashed or gave no verdict.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../checks.sh"
. "$here/verdict.sh"

head='requests: 20000 in 23689 datagrams; replies: 34129 datagrams; answered: 19990
unknown: 4 PUTs or DELETEs without a reply (either outcome allowed)'
values='values: /b/xkv-lincheck /tmp/r/erew.history'
decided='linearizable: 19986 operations on 200 keys'
undecided='unknown: 2 of 200 keys not decided within 20s (19986 operations)
UNKNOWN: the history could not be judged (kept in /tmp/r/erew.history)'
missing='missing: 6
  GET k00000000000017 (id 912 from 10.203.0.2:40000, request frame 1001): no reply'

# verdict NAME RC DROPS WANT REPORT: check_verdict's first word is WANT
verdict() {
	local got
	printf '%s\n' "$5" >"$tmp/report"
	got=$(check_verdict "$2" "$3" "$tmp/report")
	if [ "${got%%:*}" = "$4" ]; then
		ok "$1: $got"
	else
		not_ok "$1: '$got', expected $4"
	fi
}

verdict "passed" 0 0 pass "$head"$'\n'"$values"$'\n'"$decided"$'\nPASS'
verdict "GETs unanswered, drops counted" 1 12 retry \
	"$head"$'\n'"$missing"$'\n'"$values"$'\n'"$decided"$'\nFAIL'
verdict "GETs unanswered, nothing dropped" 1 0 fail \
	"$head"$'\n'"$missing"$'\n'"$values"$'\n'"$decided"$'\nFAIL'
verdict "undecided" 2 0 retry "$head"$'\n'"$values"$'\n'"$undecided"
verdict "undecided, GETs unanswered, drops counted" 1 3 retry \
	"$head"$'\n'"$missing"$'\n'"$values"$'\n'"$undecided"$'\nFAIL'
verdict "a wrong value, drops counted" 1 12 fail \
	"$head"$'\nwrong value: 1\n  GET k00000000000003 (id 77 from 10.203.0.2:40000, request frame 90): pieces disagree\n'"$values"$'\n'"$decided"$'\nFAIL'
verdict "a wrong status among missing ones, drops counted" 1 12 fail \
	"$head"$'\n'"$missing"$'\nwrong status: 2\n'"$values"$'\n'"$decided"$'\nFAIL'
verdict "unexpected replies, drops counted" 1 12 fail \
	"$head"$'\nunexpected: 3\n'"$values"$'\n'"$decided"$'\nFAIL'
verdict "not linearizable, drops counted" 1 12 fail \
	"$head"$'\n'"$missing"$'\n'"$values"$'\nkey 6b31 (k1): not linearizable, 9 operations\nnot linearizable: 1 of 200 keys (19986 operations)\nFAIL'
verdict "check crashed" 139 12 fail "$head"
verdict "check killed" 137 0 fail ""
verdict "the checker crashed" 2 12 fail \
	"$head"$'\n'"$values"$'\nxkv-trace: check: /b/xkv-lincheck: Segmentation fault\nUNKNOWN: the history could not be judged (kept in /tmp/r/erew.history)'
verdict "the checker crashed, GETs unanswered, drops counted" 1 1407 fail \
	"$head"$'\n'"$missing"$'\n'"$values"$'\nxkv-trace: check: /b/xkv-lincheck: Segmentation fault\nUNKNOWN: the history could not be judged (kept in /tmp/r/erew.history)\nFAIL'
verdict "bad usage" 2 0 fail "xkv-trace: check: give a requests capture and a replies capture"
verdict "a capture that lost frames" 2 12 fail \
	"xkv-trace: /tmp/r/erew.pcapng: the capture lost 3 frames (isb_ifdrop): it cannot be checked"
verdict "only the note of unknown writes" 2 12 fail "$head"$'\n'"$values"

checks_done replay-verdict
