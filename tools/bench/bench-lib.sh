# Sourced by the policy benchmarks (bench-dcrew.sh, bench-minos.sh, bench-compaction.sh)
# after server-host.sh: how each begins, its progress lines, and what a sweep found.
# The caller sets out (its results' folder) and steps (how many progress lines).

# bench_start SCRIPT: refuses to run without root, clears $out of a previous run's
# results, makes the two hosts, and starts the clock the progress lines show
bench_start() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$1: needs root (namespaces, XDP, AF_XDP)" >&2
		exit 1
	fi
	mkdir -p "$out"
	rm -f "$out"/*.csv "$out"/*.json "$out"/*.jsonl "$out"/*.png "$out"/*.log "$out"/*.txt
	netns_pair_up
	start=$SECONDS
	step=0
}

# progress TEXT: "== [step/steps, seconds] TEXT"
progress() {
	step=$((step + 1))
	printf '== [%2d/%d, %3d s] %s\n' "$step" "$steps" $((SECONDS - start)) "$*"
}

# sweep_rate SWEEP_JSON: the highest rate per second whose p99 met the SLO (0: none)
sweep_rate() {
	/usr/bin/python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["rate_found"]))' "$1"
}

# equal_load BASELINE RATE: the equal load, 75 % of RATE, BASELINE's highest rate under
# the SLO; 15000/s when it met the SLO at no rate (a busy machine), and says so
equal_load() {
	local equal=$(($2 * 3 / 4))
	if [ "$equal" -le 0 ]; then
		equal=15000
		echo "   $1 met the SLO at no rate (a busy machine?): equal load at $equal/s" >&2
	fi
	echo "$equal"
}
