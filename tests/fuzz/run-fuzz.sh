#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs each libFuzzer harness for SECONDS from its seed corpus. New inputs go to
# FUZZ_BUILD/corpus/NAME (the seeds in tests/fuzz/corpus are only read), crashes to
# FUZZ_BUILD/crashes/NAME-*. Prints each harness's last status line (cov:, exec/s);
# exits 1 if one found something.
#   run-fuzz.sh FUZZ_BUILD SECONDS NAME...
set -uo pipefail
build=${1:?usage: run-fuzz.sh FUZZ_BUILD SECONDS NAME...}
seconds=${2:?usage: run-fuzz.sh FUZZ_BUILD SECONDS NAME...}
shift 2
src=$(dirname "$0")
failed=()

mkdir -p "$build/crashes"
for name in "$@"; do
	mkdir -p "$build/corpus/$name"
	echo "== fuzz-$name for ${seconds}s"
	"$build/tests/fuzz/fuzz-$name" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$build/crashes/$name-" "$build/corpus/$name" "$src/corpus/$name" \
		2>"$build/$name.log"
	rc=$?
	grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$build/$name.log" | tail -n 1
	grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$build/$name.log"
	if [ $rc -ne 0 ]; then
		failed+=("$name")
		grep -E 'ERROR|check failed|Test unit written' "$build/$name.log"
		echo "fuzz-$name failed (exit $rc): $build/$name.log"
	fi
done
echo "== ${#failed[@]} of $# harnesses found something${failed[*]:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
