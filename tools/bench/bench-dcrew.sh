#!/usr/bin/env bash
# make bench-dcrew: d-CREW (C-4, ASPLOS'23) against crew on one veth pair (a client host
# and a server host, two namespaces): uniform keys, 64 B values, 50 % and 85 % writes,
# over the AF_XDP client. The server is xkv-server --backend xdp --workers 2 (each
# worker pinned to the CPU of its id), the client is pinned to CPU 1; this machine has
# 2 cores. For each write fraction:
#   a. the SLO search (p99 <= SLO_US): each policy's highest rate;
#   b. equal load at 75 % of crew's highest rate, ROUNDS rounds, the policies
#      interleaved so that the VM's noisy spells (docs/BENCH.md) fall on both: p99,
#      the ratio crew/dcrew (target >= 1.3 at 85 % writes), and the highest rates'
#      ratio dcrew/crew (target >= 1);
#   c. the EWT's occupancy: the most slots held at once (the server samples it every
#      ms) at the SLO search's peak and at equal load;
#   d. beside each, xkv-sim's prediction for the same workload (docs/SIMULATION.md) on
#      2 cores and on 64: p99 and the EWT's mean and largest occupancy.
# Everything (CSV, JSON, PNG, logs) in BUILD_DIR/bench-dcrew; everything it makes
# (namespaces, links, pins, processes) goes on every way out.
#   tools/bench/bench-dcrew.sh BUILD_DIR
# Environment:
#   XKV_BENCH_SMOKE=1     the smoke mode (bench-lib.sh): 1,000 keys, one round
set -euo pipefail

usage="usage: bench-dcrew.sh BUILD_DIR"
build=$(cd "${1:?$usage}" && pwd)
here=$(dirname "$0")
. "$here/server-host.sh"
. "$here/bench-lib.sh"
out=$(bench_out "$build" bench-dcrew)
policies=(crew dcrew) # the baseline first
write_fracs=(0.5 0.85)
slo_us=1000
if bench_smoke; then
	sweep_step_s=$SMOKE_S equal_s=$SMOKE_S rounds=1 keys=1000 capacity_s=$SMOKE_S
else
	sweep_step_s=1 equal_s=8 rounds=2 keys=100000 capacity_s=3
fi

ns_s="xkvdc-$$-s" ns_c="xkvdc-$$-c" if_s="xds$$" if_c="xdc$$" ip_s=10.208.0.1 ip_c=10.208.0.2
trap server_host_down EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

sat_depth=${SAT_DEPTH:-256} sat_pct=${SAT_PCT:-85}
steps=$((${#write_fracs[@]} * (2 * (1 + rounds + 1) + 1) + 1))
bench_start bench-dcrew.sh

# bench WRITE_FRAC [OPTIONS...]: a measured run, on keys load_keys put there
bench() {
	local wf=$1
	shift
	in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:7411" --keys "$keys" \
		--key-size 16 --value-size 64 --zipf 0 \
		--get-ratio "$(/usr/bin/python3 -c "print(round(1 - $wf, 4))")" \
		--transport xdp --iface "$if_c" --no-load "$@"
}

# load_keys: every key PUT, 8 at a time. xkv-bench's own load phase keeps 1024 PUTs
# outstanding, which would hold every EWT slot and make the most seen meaningless.
load_keys() {
	in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:7411" --keys "$keys" \
		--key-size 16 --value-size 64 --transport xdp --iface "$if_c" --depth 8 \
		--duration 0.1 >/dev/null 2>&1
}

# server_up POLICY NAME: 2 workers, log in $out/NAME.log (its counters at the end)
server_up() {
	server_run "$2" xkv "$build/xkv-server" --backend xdp --iface "$if_s" --workers 2 \
		--memory 256M --allow "$ip_c/32" --policy "$1"
	load_keys
}

for wf in "${write_fracs[@]}"; do
	# --- a. the SLO search ------------------------------------------------------------
	declare -A found=()
	for p in "${policies[@]}"; do
		progress "$p, $wf writes: sweep, SLO p99 <= $slo_us us"
		server_up "$p" "server-sweep-$p-$wf"
		# shellcheck disable=SC2046 # sweep_max's options are words
		bench "$wf" --sweep --slo-us "$slo_us" --rate 20000 $(sweep_max 20000) \
			--duration "$sweep_step_s" --label "$p-$wf" --csv "$out/sweep-$p-$wf.csv" \
			--json >"$out/sweep-$p-$wf.json" 2>"$out/sweep-$p-$wf.log"
		server_stop
		found[$p]=$(sweep_rate "$out/sweep-$p-$wf.json")
		echo "   $p: highest rate under the SLO ${found[$p]}/s"
	done
	equal=$(equal_load crew "${found[crew]}")
	echo "$equal" >"$out/equal-rate-$wf.txt"
	# --- b. equal load, interleaved ---------------------------------------------------
	for r in $(seq "$rounds"); do
		for p in "${policies[@]}"; do
			progress "$p, $wf writes: equal load $equal/s for $equal_s s (round $r)"
			server_up "$p" "server-equal-$p-$wf-$r"
			measure_begin "equal-$p-$wf-$r"
			bench "$wf" --rate "$equal" --duration "$equal_s" --label "$p" --json \
				>"$out/equal-$p-$wf-$r.json" 2>"$out/equal-$p-$wf-$r.log"
			measure_end "equal-$p-$wf-$r"
			server_stop
		done
	done
	# --- b2. the server, not the client, the bottleneck: crew's capacity in a closed
	# loop, then both at SAT_PCT % of it in an open loop (a closed loop's latency is its
	# window over its rate, whatever the policy)
	progress "crew, $wf writes: capacity, closed loop, 2 x $sat_depth outstanding"
	server_up crew "server-capacity-$wf"
	bench "$wf" --depth "$sat_depth" --threads 2 --duration "$capacity_s" --label crew --json \
		>"$out/capacity-$wf.json" 2>"$out/capacity-$wf.log"
	server_stop
	sat_rate=$(/usr/bin/python3 -c "import json, sys; print(max(1000, round(json.load(open(sys.argv[1]))['all']['ops_per_s'] * $sat_pct / 100)))" "$out/capacity-$wf.json")
	for p in "${policies[@]}"; do
		progress "$p, $wf writes: $sat_rate/s ($sat_pct % of crew's capacity) for $equal_s s"
		server_up "$p" "server-saturated-$p-$wf"
		measure_begin "saturated-$p-$wf"
		bench "$wf" --rate "$sat_rate" --threads 2 --duration "$equal_s" --label "$p" --json \
			>"$out/saturated-$p-$wf.json" 2>"$out/saturated-$p-$wf.log"
		measure_end "saturated-$p-$wf"
		server_stop
	done
done

# --- c, d. the table, xkv-sim beside it, the plot ----------------------------------------
progress "xkv-sim predictions, table and plot"
PYTHONPATH="$here" /usr/bin/python3 - "$out" "$build/xkv-sim" "$slo_us" "$keys" "$rounds" \
	"${write_fracs[@]}" <<'PY' |
import json, re, statistics, subprocess, sys
import sides
out, sim_bin, slo, keys, rounds = sys.argv[1:6]
slo, keys, rounds, fracs = float(slo), int(keys), int(rounds), sys.argv[6:]

def load(name):
    return json.load(open(f"{out}/{name}.json"))

def active_max(log):
    """The EWT's most held slots, from the counters the server printed when it stopped."""
    m = re.search(r"^ewt active_max: (\d+)$", open(f"{out}/{log}.log").read(), re.M)
    return int(m.group(1)) if m else 0

# The simulator (docs/SIMULATION.md) in its C-4 model (service U[400, 800] ns + 100 ns,
# SLO 10 x the mean service), with xkv's 256 partitions, the bench's keys, and the
# bench's procedure: crew's highest load under the SLO, then both policies at 75 % of
# it, on 2 cores and on 64. Its figures say how the server's queues behave, not what
# this client sees through veth (which it does not model): compare ratios, not
# microseconds. C-4's own figure (1 M partitions, load 0.75) comes on the last line.
def sim(args):
    cmd = [sim_bin, "--items", str(keys), "--zipf", "0", "--json"] + args
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

def sim_at(policy, cores, load, wf, partitions=256):
    r = sim(["--policy", policy, "--cores", str(cores), "--load", f"{load:.4f}",
             "--write-frac", wf, "--partitions", str(partitions)])["result"]
    return {"p99_us": r["latency_ns"]["p99"] / 1e3, "ewt_mean": r.get("ewt_mean", 0),
            "ewt_max": r.get("ewt_max", 0), "load": load}

def sim_equal(cores, wf):
    top = sim(["--policy", "crew", "--cores", str(cores), "--write-frac", wf,
               "--partitions", "256", "--sweep"])["sweep"]["max_load"]
    return {p: sim_at(p, cores, 0.75 * top, wf) for p in ("crew", "dcrew")}

summary = {}
print(f"\nd-CREW against crew: uniform keys, 64 B values, 2 workers, AF_XDP client; "
      f"p99 in us; sim2/sim64: xkv-sim's p99 on 2 and 64 cores at 75 % of its crew's "
      f"highest load (its C-4 model, 256 partitions)")
for wf in fracs:
    equal = int(open(f"{out}/equal-rate-{wf}.txt").read())
    print(f"\n{float(wf) * 100:.0f} % writes: highest rate under p99 <= {slo:g} us, and equal "
          f"load at {equal}/s (75 % of crew's highest), {rounds} round(s)")
    print(f"{'policy':<8}{'max ops/s':>10}{'ewt@max':>8}{'ops/s':>9}{'p50':>7}{'p99':>8}"
          f"{'sim2':>7}{'sim64':>7}{'ewt':>5}{'sim2 ewt':>10}{'sim64 ewt':>11}{'lost':>6}")
    row = {}
    predicted = {2: sim_equal(2, wf), 64: sim_equal(64, wf)}
    for p in ("crew", "dcrew"):
        sw = load(f"sweep-{p}-{wf}")
        runs = [load(f"equal-{p}-{wf}-{r}") for r in range(1, rounds + 1)]
        p99 = statistics.median(r["all"]["p99_us"] for r in runs)
        s2, s64 = predicted[2][p], predicted[64][p]
        ewt_peak = active_max(f"server-sweep-{p}-{wf}")
        ewt_eq = max(active_max(f"server-equal-{p}-{wf}-{r}") for r in range(1, rounds + 1))
        row[p] = {"rate_found": sw["rate_found"], "p99_us": p99,
                  "p99_rounds": [r["all"]["p99_us"] for r in runs], "sim2": s2, "sim64": s64,
                  "ewt_active_max_peak": ewt_peak, "ewt_active_max_equal": ewt_eq}
        ewt2 = f"{s2['ewt_mean']:.1f}/{s2['ewt_max']}" if p == "dcrew" else "-"
        ewt64 = f"{s64['ewt_mean']:.1f}/{s64['ewt_max']}" if p == "dcrew" else "-"
        print(f"{p:<8}{sw['rate_found']:>10.0f}{ewt_peak if p == 'dcrew' else '-':>8}"
              f"{statistics.median(r['all']['ops_per_s'] for r in runs):>9.0f}"
              f"{statistics.median(r['all']['p50_us'] for r in runs):>7.0f}{p99:>8.0f}"
              f"{s2['p99_us']:>7.1f}{s64['p99_us']:>7.1f}{ewt_eq if p == 'dcrew' else '-':>5}"
              f"{ewt2:>10}{ewt64:>11}{sum(r['all']['lost'] for r in runs):>6}")
    c, d = row["crew"], row["dcrew"]
    ratio = lambda a, b: a / b if b else float("nan")
    row["p99_ratio"] = ratio(c["p99_us"], d["p99_us"])
    row["rate_ratio"] = ratio(d["rate_found"], c["rate_found"])
    row["sim2_ratio"] = ratio(c["sim2"]["p99_us"], d["sim2"]["p99_us"])
    row["sim64_ratio"] = ratio(c["sim64"]["p99_us"], d["sim64"]["p99_us"])
    target = " (target >= 1.3)" if float(wf) >= 0.85 else ""
    print(f"crew/dcrew p99 at equal load: {row['p99_ratio']:.2f}{target}; xkv-sim "
          f"{row['sim2_ratio']:.2f} on 2 cores, {row['sim64_ratio']:.2f} on 64")
    print(f"dcrew/crew highest rate: {row['rate_ratio']:.2f} (target >= 1)")
    c4 = {n: {p: sim_at(p, n, 0.75, wf, 1 << 20) for p in ("crew", "dcrew")} for n in (2, 64)}
    row["c4_model"] = c4
    # the closed loop: server side, at the busy share it reached, beside xkv-sim's queues
    # at that utilisation (its load) on 2 and 64 cores
    sat = {}
    for p in ("crew", "dcrew"):
        st = sides.load(out, f"saturated-{p}-{wf}")
        srv = sides.percentiles(st, ops=("get", "put"))
        util = statistics.mean(sides.busy(st)) if st else 0
        sim2 = sim_at(p, 2, min(max(util, 0.05), 0.95), wf)["p99_us"]
        sim64 = sim_at(p, 64, min(max(util, 0.05), 0.95), wf)["p99_us"]
        sat[p] = {"server": srv, "busy": util, "sim2": sim2, "sim64": sim64}
        print(f"at {load(f'saturated-{p}-{wf}')['rate']:.0f}/s ({load(f'capacity-{wf}')['all']['ops_per_s']:.0f}/s: crew's capacity), "
              f"{p}: server side {sides.fmt(srv)} us (p50/p99/p99.9), "
              f"sim2 {sim2:.1f} sim64 {sim64:.1f} at load {util:.2f}; "
              f"{sides.describe(out, f'saturated-{p}-{wf}', st)}")
    if sat["crew"]["server"] and sat["dcrew"]["server"]:
        print(f"server side, crew/dcrew p99 near capacity: "
              f"{ratio(sat['crew']['server'][0.99], sat['dcrew']['server'][0.99]):.2f}"
              f"{' (target >= 1.5)' if float(wf) >= 0.85 else ''}; xkv-sim "
              f"{ratio(sat['crew']['sim2'], sat['dcrew']['sim2']):.2f} on 2 cores, "
              f"{ratio(sat['crew']['sim64'], sat['dcrew']['sim64']):.2f} on 64")
    row["saturated"] = {p: {k: v for k, v in s.items() if k != "server"} |
                        {"server_p99_us": (s["server"] or {}).get(0.99)} for p, s in sat.items()}
    print("C-4's model (1 M partitions, load 0.75): crew/dcrew p99 " + ", ".join(
        f"{c4[n]['crew']['p99_us']:.1f}/{c4[n]['dcrew']['p99_us']:.1f} us = "
        f"{ratio(c4[n]['crew']['p99_us'], c4[n]['dcrew']['p99_us']):.2f} on {n} cores"
        for n in (2, 64)))
    summary[wf] = row
print("\newt@max: the most EWT slots held at once during the SLO search (its peak); ewt: at "
      "equal load; xkv-sim's: mean/largest entries")
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
PY
	tee "$out/summary.txt"
echo
echo "the equal-load runs inside the server (us; sides.png)" | tee -a "$out/summary.txt"
# shellcheck disable=SC2046 # the runs' names are words
PYTHONPATH="$here" /usr/bin/python3 "$here/sides_report.py" "$out" "$out/sides.png" \
	"d-CREW against crew at equal load: client side (plain), server side (hatched)" \
	$(cd "$out" && ls equal-*.server.json | sed 's/\.server\.json$//') | tee -a "$out/summary.txt"
/usr/bin/python3 "$here/plot_latency.py" --x offered --slo-us "$slo_us" -o "$out/sweep.png" \
	--title "d-CREW against crew: SLO search, p99" "$out"/sweep-*.csv >/dev/null
echo "CSVs, JSON, logs and the plots (sweep.png, sides.png) in $out; $((SECONDS - start)) s"
