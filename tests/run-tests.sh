#!/usr/bin/env bash
# Runs each test given and counts it: exit 0 passed, 77 skipped (automake's skip
# code: the machine lacks what the test needs, and the test said why on a line
# "SKIP: <why>", tests/skip.sh and tests/skip.h), anything else failed. Tests that a
# Criterion suite skipped alone (cr_skip_test) are named from its TAP report.
# With XKV_NO_SKIP set (to anything but 0) a skip is a failure: where everything
# should run (CI, as root), a missing capability must not pass unseen.
# Ends with the slowest tests' seconds (the suite must stay under 15 minutes on 2 cores)
# and "N passed, N skipped, N failed"; exits 1 only if one failed.
#   [XKV_NO_SKIP=1] run-tests.sh TEST...
set -uo pipefail

strict=
[ "${XKV_NO_SKIP:-0}" = 0 ] || strict=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Criterion 2.4 leaks its copy of CRITERION_OUTPUTS: LeakSanitizer, in the ASan
# run, would fail every suite for it
echo 'leak:criterion_handle_args' >"$work/lsan.supp"
export LSAN_OPTIONS="suppressions=$work/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
npassed=0 start=$SECONDS
skipped=() failed=() skipped_tests=()

for t in "$@"; do
	echo "== $t"
	began=$SECONDS
	rm -f "$work/report.tap"
	# a pipe, not a file, so the output still shows as it comes
	CRITERION_OUTPUTS="tap:$work/report.tap" "$t" 2>&1 | tee "$work/output"
	rc=${PIPESTATUS[0]}
	# Criterion writes "ok - suite::test  # SKIP why" for each test it skipped
	nskipped=0
	if [ -f "$work/report.tap" ]; then
		while IFS= read -r line; do
			skipped_tests+=("$t: $line")
			nskipped=$((nskipped + 1))
		done < <(sed -n 's/^ok - \(.*\)  # SKIP \(.*\)$/\1: \2/p' "$work/report.tap")
	fi
	why=$(sed -n 's/^SKIP: //p' "$work/output" | tail -n 1)
	case $rc in
	0)
		if [ -n "$strict" ] && [ "$nskipped" -gt 0 ]; then
			failed+=("$t ($nskipped of its tests skipped, under XKV_NO_SKIP)")
		else
			npassed=$((npassed + 1))
		fi
		;;
	77)
		if [ -n "$strict" ]; then
			failed+=("$t (skipped under XKV_NO_SKIP: $why)")
		else
			skipped+=("$t: $why")
		fi
		;;
	*) failed+=("$t (exit $rc)") ;;
	esac
	echo "$((SECONDS - began)) $t" >>"$work/seconds"
done

echo "== summary"
if [ -s "$work/seconds" ]; then
	echo "slowest, of $((SECONDS - start)) s:"
	sort -rn "$work/seconds" | head -n 10 | sed 's/^\([0-9]*\) /  \1 s  /'
fi
for s in "${skipped[@]}"; do echo "skipped: $s"; done
for s in "${skipped_tests[@]}"; do echo "skipped test: $s"; done
for f in "${failed[@]}"; do echo "failed: $f"; done
echo "$npassed passed, ${#skipped[@]} skipped, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
