# Sourced by the test scripts that count their checks: ok NAME and not_ok NAME as
# each one ends, then checks_done LABEL, which prints the counts and returns 1 if a
# check failed.
passed=0
failed=0

ok() {
	echo "ok: $1"
	passed=$((passed + 1))
}

not_ok() {
	echo "FAIL: $1"
	failed=$((failed + 1))
}

checks_done() {
	echo "$1: $passed passed, $failed failed"
	[ $failed -eq 0 ]
}
