#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: test-not-root.sh SUITE TEST...
#
# A user without root, where BPF programs do not load: run as the user nobody, SUITE
# (test_server_uring, a Criterion suite that asks skip_reason_bpf) and each TEST (the
# scripts that run xkv-server on the io_uring backend, tests/skip.sh's need_bpf) skip,
# all for the same reason; none fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../skip.sh"
. "$here/../checks.sh"
suite=${1:?usage: test-not-root.sh SUITE TEST...}
shift
[ "$(id -u)" -eq 0 ] || skip "needs root, to run the tests as another user"
need_commands runuser
id nobody >/dev/null 2>&1 || skip "no user nobody to run the tests as"

# as_nobody TEST: its exit status, and its last SKIP line in $why
as_nobody() {
	local out rc=0
	out=$(cd / && runuser -u nobody -- "$1" 2>&1) || rc=$?
	why=$(sed -n 's/^SKIP: //p' <<<"$out" | tail -n 1)
	return $rc
}

as_nobody "$suite" && rc=0 || rc=$?
want=$why
if [ $rc -eq 77 ] && [ -n "$want" ]; then
	ok "$suite skips: $want"
else
	not_ok "$suite: exit $rc, not a skip with a reason"
fi
for t in "$@"; do
	as_nobody "$t" && rc=0 || rc=$?
	if [ $rc -eq 77 ] && [ "$why" = "$want" ]; then
		ok "$t skips for the same reason"
	else
		not_ok "$t: exit $rc ('$why'), not a skip for '$want'"
	fi
done

checks_done not-root
