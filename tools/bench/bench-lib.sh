# Sourced by the benchmark scripts: the smoke mode every one has. The namespace benchmarks
# (bench-all.sh, bench-dcrew.sh, bench-minos.sh, bench-compaction.sh,
# bench-memcached-proto.sh) source it after server-host.sh, for how each begins, its
# progress lines, and what a sweep found; they set out (their results' folder) and steps
# (how many progress lines).

# The smoke mode, XKV_BENCH_SMOKE=1, in which make test runs every benchmark
# (tests/bench/bench_smoke.sh): each script's steps last SMOKE_S seconds, it runs once,
# one or two rates, few keys, and each SLO search runs its first rate only. The script
# runs to its table in seconds, and checks no more than that: its numbers mean nothing.
SMOKE_S=0.2
bench_smoke() { [ "${XKV_BENCH_SMOKE:-0}" != 0 ]; }

# bench_out BUILD_DIR NAME: the results' folder, BUILD_DIR/NAME; the smoke mode's is
# BUILD_DIR/smoke/NAME, so that it never clears a real run's results
bench_out() { if bench_smoke; then echo "$1/smoke/$2"; else echo "$1/$2"; fi; }

# sweep_max RATE: xkv-bench's options that end a sweep from RATE after its first rate in
# the smoke mode (none otherwise): words, for an unquoted $(sweep_max RATE)
sweep_max() { if bench_smoke; then echo --sweep-max "$1"; fi; }

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
