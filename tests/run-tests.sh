#!/usr/bin/env bash
# Runs each test binary given, reports which failed, exits non-zero if any did.
set -uo pipefail
failed=()
for t in "$@"; do
	echo "== $t"
	"$t" || failed+=("$t")
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
