#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: test-runner.sh RUN_TESTS FAKE_SUITE
#
# tests/run-tests.sh counts right: fake tests that pass (exit 0), skip (exit 77
# after "SKIP: <why>") and fail (exit 1, or killed), and a Criterion suite that
# skips one test (cr_skip_test) or skips whole (tests/skip_main.c). Each skip is
# named with its reason, each failure with its exit status, and the runner exits
# non-zero only when a test failed; under XKV_NO_SKIP=1 every kind of skip fails.
set -uo pipefail
# the lenient runs must be lenient however this test is run (XKV_NO_SKIP=1 make test)
unset XKV_NO_SKIP
runner=${1:?usage: test-runner.sh RUN_TESTS FAKE_SUITE}
suite=${2:?usage: test-runner.sh RUN_TESTS FAKE_SUITE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

# fake NAME BODY: an executable test script that runs BODY
fake() {
	printf '#!/bin/sh\n%s\n' "$2" >"$tmp/$1"
	chmod +x "$tmp/$1"
}
fake pass 'echo fine; exit 0'
fake skip 'echo "SKIP: needs a unicorn"; exit 77'
fake fail 'echo broken; exit 1'
fake crash 'kill -KILL $$'
fake suite-skips "FAKE_SUITE_SKIP='needs root: a test of the runner' exec $suite"
fake slow 'sleep 2'

# expect NAME FAILS LINE... -- TEST...: the runner on TESTS exits non-zero if and
# only if FAILS is 1, and prints each LINE as a whole line
expect() {
	local name=$1 want=$2 lines=() out got=0 line
	shift 2
	while [ "$1" != -- ]; do
		lines+=("$1")
		shift
	done
	shift
	out=$("$runner" "$@" 2>&1) || got=1
	if [ $got -ne "$want" ]; then
		not_ok "$name: exit status says failed=$got, expected $want; output:"$'\n'"$out"
		return
	fi
	for line in "${lines[@]}"; do
		if ! grep -qxF -- "$line" <<<"$out"; then
			not_ok "$name: no line '$line' in:"$'\n'"$out"
			return
		fi
	done
	ok "$name"
}

expect "every kind at once" 1 \
	"skipped: $tmp/skip: needs a unicorn" \
	"skipped: $tmp/suite-skips: needs root: a test of the runner" \
	"skipped test: $suite: fake::skips: needs nothing: skips for the runner's test" \
	"failed: $tmp/fail (exit 1)" \
	"failed: $tmp/crash (exit 137)" \
	"2 passed, 2 skipped, 2 failed" \
	-- "$tmp/pass" "$tmp/skip" "$tmp/fail" "$suite" "$tmp/suite-skips" "$tmp/crash"
expect "skips are no failure" 0 \
	"skipped: $tmp/skip: needs a unicorn" \
	"2 passed, 2 skipped, 0 failed" \
	-- "$tmp/pass" "$tmp/skip" "$suite" "$tmp/suite-skips"
expect "one failure is enough" 1 "0 passed, 0 skipped, 1 failed" -- "$tmp/fail"
expect "nothing to run" 0 "0 passed, 0 skipped, 0 failed" --
XKV_NO_SKIP=1 expect "strict: a skip fails" 1 \
	"failed: $tmp/skip (skipped under XKV_NO_SKIP: needs a unicorn)" \
	"failed: $tmp/suite-skips (skipped under XKV_NO_SKIP: needs root: a test of the runner)" \
	"skipped test: $suite: fake::skips: needs nothing: skips for the runner's test" \
	"failed: $suite (1 of its tests skipped, under XKV_NO_SKIP)" \
	"1 passed, 0 skipped, 3 failed" \
	-- "$tmp/pass" "$tmp/skip" "$suite" "$tmp/suite-skips"
XKV_NO_SKIP=1 expect "strict: passes still pass" 0 "1 passed, 0 skipped, 0 failed" -- "$tmp/pass"
XKV_NO_SKIP=0 expect "XKV_NO_SKIP=0 is lenient" 0 "0 passed, 1 skipped, 0 failed" -- "$tmp/skip"

# the summary lists the slowest first, with their seconds
out=$("$runner" "$tmp/pass" "$tmp/slow" 2>&1)
first=$(grep -A1 -xE 'slowest, of [0-9]+ s:' <<<"$out" | tail -n 1)
if grep -qxE "  [23] s  $tmp/slow" <<<"$first"; then
	ok "the slowest test first, with its seconds"
else
	not_ok "the slowest test first: got '$first' in:"$'\n'"$out"
fi

checks_done runner
