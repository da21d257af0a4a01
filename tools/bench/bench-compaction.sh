#!/usr/bin/env bash
# make bench-compaction: write compaction (C-4, ASPLOS'23; docs/DESIGN.md, "Write
# compaction") on and off under crew (C-4's "Comp" is CREW with compaction), on one veth
# pair (a client host and a server host, two namespaces), over the AF_XDP client, 16 B
# keys, 64 B values. Three workloads: a hot-key storm (8 keys, 90 % PUTs) and C-4's
# zipf 1.25 over 100,000 keys with 5 % and with 50 % PUTs. The server is xkv-server
# --backend xdp --workers 2 (each worker pinned to the CPU of its id), the client is
# pinned to CPU 1; this machine has 2 cores. For each workload:
#   a. the SLO search (p99 <= SLO_US): each setting's highest rate;
#   b. ROUNDS rounds, the settings interleaved so that the VM's noisy spells
#      (docs/BENCH.md) fall on both: both at equal load (75 % of the off setting's
#      highest rate), then each at its own highest rate: throughput, p50, p99;
#   c. from the server's counters over each run of b: write requests per store write
#      (all workers, and the hot worker: the one with the most writes), the hot
#      worker's busy time per request, the windows' mean and largest size;
#   c'. the storm also in a closed loop (32 outstanding), where the hot worker is busy
#      and its rings seldom run dry: the mechanism's own compaction factor, which the
#      open loop's highest rate under the SLO (client-bound here) cannot show;
#   d. beside them, xkv-sim's prediction for the same workload under crew and comp on 2
#      and on 64 cores: the highest load under its SLO and the ratio (C-4 Fig. 4).
# Then the table, the targets met or missed, and sweep-WORKLOAD.png (p99 against the
# offered rate, off and on). Everything (CSV, JSON, PNG, logs) in
# BUILD_DIR/bench-compaction; everything it makes (namespaces, links, pins, processes)
# goes on every way out.
#   tools/bench/bench-compaction.sh BUILD_DIR
# Environment:
#   XKV_BENCH_SMOKE=1  the smoke mode (bench-lib.sh): the storm and zipf50 only, one round,
#                      1,000 keys
set -euo pipefail

usage="usage: bench-compaction.sh BUILD_DIR"
build=$(cd "${1:?$usage}" && pwd)
here=$(dirname "$0")
. "$here/server-host.sh"
. "$here/bench-lib.sh"
out=$(bench_out "$build" bench-compaction)
settings=(off on) # the baseline first
slo_us=1000
if bench_smoke; then
	# each run takes a server of its own (~1.3 s here): the storm and one zipf
	workloads=(storm zipf50)
	sweep_step_s=$SMOKE_S run_s=$SMOKE_S rounds=1 zipf_keys=1000
else
	workloads=(storm zipf5 zipf50)
	sweep_step_s=1 run_s=6 rounds=2 zipf_keys=100000
fi
# each workload's xkv-bench options: keys, popularity, GET share
declare -A mix=(
	[storm]="--keys 8 --zipf 0 --get-ratio 0.1"
	[zipf5]="--keys $zipf_keys --zipf 1.25 --get-ratio 0.95"
	[zipf50]="--keys $zipf_keys --zipf 1.25 --get-ratio 0.5"
)
ns_s="xkvcp-$$-s" ns_c="xkvcp-$$-c" if_s="xcs$$" if_c="xcc$$" ip_s=10.209.0.1 ip_c=10.209.0.2
trap server_host_down EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

steps=$((${#workloads[@]} * 2 * (1 + 2 * rounds) + 2 * rounds + 1))
bench_start bench-compaction.sh
# a measurement on a busy machine is not one: the load average goes with the figures
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt"

# bench WORKLOAD [OPTIONS...]: xkv-bench with WORKLOAD's mix, on its keys as loaded
bench() {
	local -a wl
	read -ra wl <<<"${mix[$1]}"
	shift
	in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:7411" "${wl[@]}" \
		--key-size 16 --value-size 64 --transport xdp --iface "$if_c" "$@"
}

# worker_counters FILE: the workers' live counters once they stop moving (a worker
# publishes every 100 ms), so that what a run adds is exactly the run's
worker_counters() {
	local prev= cur
	for _ in $(seq 50); do
		sleep 0.2
		in_server "$build/xkv-loader" stats --iface "$if_s" --json >"$1"
		cur=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["workers"])' "$1")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
	done
	echo "bench-compaction.sh: the server's counters do not settle" >&2
	return 1
}

# server_up SETTING WORKLOAD NAME: 2 workers under crew with compaction SETTING, log (and
# its counters at exit) in $out/NAME.log, WORKLOAD's keys PUT (then GETs only, which
# open no window), the counters before the run in $out/NAME-before.json
server_up() {
	server_run "$3" xkv "$build/xkv-server" --backend xdp --iface "$if_s" --workers 2 \
		--memory 256M --allow "$ip_c/32" --policy crew --compaction "$1"
	bench "$2" --depth 64 --duration 0.1 --get-ratio 1 >/dev/null 2>&1
	worker_counters "$out/$3-before.json"
}

# run SETTING WORKLOAD NAME [OPTIONS...]: one measured run on a fresh server, its JSON
# in $out/NAME.json, the server's log in $out/server-NAME.log
run() {
	local setting=$1 wl=$2 name=$3
	shift 3
	server_up "$setting" "$wl" "server-$name"
	measure_begin "$name"
	bench "$wl" --no-load --label "$setting" "$@" --json >"$out/$name.json" 2>"$out/$name.log"
	measure_end "$name"
	server_stop
}

for wl in "${workloads[@]}"; do
	# --- a. the SLO search ------------------------------------------------------------
	declare -A found=()
	for s in "${settings[@]}"; do
		progress "$wl, compaction $s: sweep, SLO p99 <= $slo_us us"
		# shellcheck disable=SC2046 # sweep_max's options are words
		run "$s" "$wl" "sweep-$s-$wl" --sweep --slo-us "$slo_us" --rate 20000 \
			$(sweep_max 20000) --duration "$sweep_step_s" --csv "$out/sweep-$s-$wl.csv"
		found[$s]=$(sweep_rate "$out/sweep-$s-$wl.json")
		echo "   compaction $s: highest rate under the SLO ${found[$s]}/s"
	done
	equal=$(equal_load "compaction off" "${found[off]}")
	echo "$equal" >"$out/equal-rate-$wl.txt"
	# --- b. equal load, then each at its highest rate, interleaved --------------------------
	for r in $(seq "$rounds"); do
		for s in "${settings[@]}"; do
			progress "$wl, compaction $s: equal load $equal/s for $run_s s (round $r)"
			run "$s" "$wl" "equal-$s-$wl-$r" --rate "$equal" --duration "$run_s"
		done
		for s in "${settings[@]}"; do
			rate=${found[$s]}
			if [ "$rate" -le 0 ]; then rate=$equal; fi
			progress "$wl, compaction $s: its highest rate $rate/s for $run_s s (round $r)"
			run "$s" "$wl" "peak-$s-$wl-$r" --rate "$rate" --duration "$run_s"
		done
	done
done

# --- c'. the storm with the hot worker busy: a closed loop ---------------------------------
for r in $(seq "$rounds"); do
	for s in "${settings[@]}"; do
		progress "storm, compaction $s: closed loop, 32 outstanding, $run_s s (round $r)"
		run "$s" storm "closed-$s-storm-$r" --depth 32 --duration "$run_s"
	done
done

# --- c, d. the table, xkv-sim beside it, the plots ------------------------------------------
progress "xkv-sim predictions, table and plots"
/usr/bin/python3 "$here/compaction_report.py" --sim "$build/xkv-sim" --slo-us "$slo_us" \
	--rounds "$rounds" "$out" "${workloads[@]}" | tee "$out/summary.txt"
echo
echo "the equal-load and closed-loop runs inside the server (us; sides.png)" | tee -a "$out/summary.txt"
# shellcheck disable=SC2046 # the runs' names are words
PYTHONPATH="$here" /usr/bin/python3 "$here/sides_report.py" "$out" "$out/sides.png" \
	"compaction off and on: client side (plain), server side (hatched)" \
	$(cd "$out" && ls equal-*.server.json closed-*.server.json | sed 's/\.server\.json$//') |
	tee -a "$out/summary.txt"
for wl in "${workloads[@]}"; do
	/usr/bin/python3 "$here/plot_latency.py" --x offered --slo-us "$slo_us" \
		-o "$out/sweep-$wl.png" --title "compaction off and on, $wl: SLO search, p99" \
		"$out/sweep-off-$wl.csv" "$out/sweep-on-$wl.csv" >/dev/null
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"
echo "CSVs, JSON, logs and the plots (sweep-*.png, sides.png) in $out; $((SECONDS - start)) s"
