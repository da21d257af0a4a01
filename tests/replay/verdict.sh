# Sourced by tests/replay/replay.sh: the verdict on one replay (and by its test,
# verdict_test.sh, on reports written by hand).

# check_verdict RC DROPS REPORT: from xkv-trace check's exit status RC, its output in
# REPORT (docs/TRACE.md), and the requests and replies the server said it dropped,
# prints "pass", "retry: WHY" or "fail: WHY". Only a machine too busy for the rate is
# tried again: a history the checker could not decide in time, and GETs left without a
# reply by a server that counted drops. Anything else is a failure: a wrong reply or
# value (drops excuse none), a check that crashed or was killed, a checker that gave
# no verdict, a capture that lost frames.
check_verdict() {
	local rc=$1 drops=$2 report=$3 wrong missing
	case $rc in
	0)
		echo pass
		return
		;;
	1 | 2) ;;
	*)
		echo "fail: xkv-trace check exited $rc: $(tail -n 1 "$report")"
		return
		;;
	esac
	# the structure's problems, each "NAME: COUNT" alone on its line
	wrong=$(grep -E '^(duplicate|unexpected|wrong status|wrong value|malformed): [0-9]+$' \
		"$report" | paste -sd, -)
	if [ -n "$wrong" ]; then
		echo "fail: the replies are wrong ($wrong)"
		return
	fi
	if grep -q '^not linearizable: ' "$report"; then
		echo "fail: the values are not linearizable"
		return
	fi
	missing=$(sed -n 's/^missing: \([0-9]*\)$/\1/p' "$report")
	if [ -n "$missing" ] && [ "$drops" -eq 0 ]; then
		echo "fail: $missing GETs got no reply from a server that dropped nothing"
		return
	fi
	# xkv-lincheck's own line: "unknown: K of N keys not decided within T"
	if grep -qE '^unknown: [0-9]+ of [0-9]+ keys not decided within ' "$report"; then
		echo "retry: the checker did not decide in time${missing:+ ($missing GETs unanswered)}"
	elif [ -n "$missing" ] && grep -q '^linearizable: ' "$report"; then
		echo "retry: $missing GETs unanswered, the server dropped $drops"
	else
		# what it said went wrong: its own line, else its last
		echo "fail: xkv-trace check exited $rc with no verdict:" \
			"$(grep -m 1 '^xkv-trace: ' "$report" || tail -n 1 "$report")"
	fi
}
