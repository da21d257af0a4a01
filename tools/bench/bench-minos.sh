#!/usr/bin/env bash
# make bench-minos: size-aware sharding (Minos, NSDI'19) against its baseline on one
# veth pair (a client host and a server host, two namespaces), Minos's bimodal
# workload scaled to this machine: 0.125 % of requests for 500,000-byte values, the
# rest 64 B, 95 % GET, zipf 0.99, 16 B keys, over the AF_XDP client. The server is
# xkv-server --backend xdp --workers 2: each worker pins itself to the CPU of its id
# (0 and 1), the client is pinned to CPU 1; this machine has 2 cores.
# For each policy (the baseline first), runs interleaved so that the VM's noisy
# spells (docs/BENCH.md) fall on both:
#   a. the SLO search (p99 <= SLO_US over all requests): each policy's highest rate;
#   b. a ladder of offered rates, 10 % .. 115 % of the baseline's highest: p99 of
#      small requests and of all at each (Minos Fig. 3 and 4);
#   c. the equal-load comparison at half the baseline's highest rate: a table and the
#      ratios baseline/other for small p99, other/baseline for large p99 and the
#      highest rate (the targets: small p99 5x lower, large p99 within 2x, rate no lower);
#      then the baseline's capacity (a closed loop of two threads, SAT_DEPTH outstanding
#      each, 256) and both policies at SAT_PCT % of it (85) in an open loop, where the
#      server, not the client, is the bottleneck (its workers' busy share printed):
#      the server-side small and large p99 of each policy and their ratios (issue L1's
#      targets: small 10x lower, large within 2x), beside xkv-sim's at that rate;
#   d. the dynamic workload (Minos Sec. 6.6 scaled): the large share steps through
#      0.125 0.25 0.5 0.75 0.5 0.25 0.125 % at the equal-load rate, p99 per second, and
#      under minos each worker's role once a second (xkv-loader status --json);
#   e. beside each measured figure, xkv-sim's prediction for the same workload on 2
#      cores and on 64 (docs/SIMULATION.md), calibrated as said at sim_predict below.
# Everything (CSV, JSON, PNG, logs) in BUILD_DIR/bench-minos. Everything it makes
# (namespaces, links, pins, processes) goes on every way out.
#   tools/bench/bench-minos.sh BUILD_DIR
# Environment:
#   BENCH_MINOS_POLICIES  the two policies compared, baseline first ("crew minos")
#   BENCH_MINOS_ARGS      more xkv-server options for minos, e.g. --minos-epoch-ms 500
#   XKV_BENCH_SMOKE=1     the smoke mode (bench-lib.sh): a ladder of one rate, a dynamic
#                         workload of two steps, 1,000 keys
set -euo pipefail

usage="usage: bench-minos.sh BUILD_DIR"
build=$(cd "${1:?$usage}" && pwd)
here=$(dirname "$0")
. "$here/server-host.sh"
. "$here/bench-lib.sh"
out=$(bench_out "$build" bench-minos)
# the baseline first
read -ra policies <<<"${BENCH_MINOS_POLICIES:-crew minos}"
read -ra minos_args <<<"${BENCH_MINOS_ARGS:-}"
slo_us=1000
sweep_start=250 # a large request holds its worker for milliseconds here: start low
if bench_smoke; then
	sweep_step_s=$SMOKE_S ladder_s=$SMOKE_S equal_s=$SMOKE_S dyn_step_s=$SMOKE_S
	fractions=(1.0) dyn_steps=0.125,0.75 keys=1000 sat_s=$SMOKE_S capacity_s=$SMOKE_S
else
	sweep_step_s=1 ladder_s=4 equal_s=10 dyn_step_s=5
	fractions=(0.1 0.25 0.4 0.55 0.7 0.85 1.0 1.15)
	dyn_steps=0.125,0.25,0.5,0.75,0.5,0.25,0.125 keys=20000 sat_s=10 capacity_s=3
fi
large_pct=0.125 large_size=500000
ns_s="xkvmin-$$-s" ns_c="xkvmin-$$-c" if_s="xms$$" if_c="xmc$$" ip_s=10.207.0.1 ip_c=10.207.0.2
poll_pid=
cleanup() {
	if [ -n "$poll_pid" ]; then
		kill "$poll_pid" 2>/dev/null || true
		wait "$poll_pid" 2>/dev/null || true
	fi
	server_host_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap, and no further

if [ "${#policies[@]}" -ne 2 ]; then
	echo "bench-minos.sh: BENCH_MINOS_POLICIES: two policies, the baseline first" >&2
	exit 1
fi
# labels name files and lines: the same policy twice (a check of the script) gets a suffix
labels=("${policies[0]}" "${policies[1]}")
if [ "${labels[0]}" = "${labels[1]}" ]; then labels[1]=${labels[1]}-2; fi
sat_depth=${SAT_DEPTH:-256} sat_pct=${SAT_PCT:-85}
steps=$((2 * (1 + ${#fractions[@]} + 1 + 1 + 1) + 2))
bench_start bench-minos.sh

workload=(--keys "$keys" --key-size 16 --value-size 64 --value-profile bimodal
	--large-size "$large_size" --get-ratio 0.95 --zipf 0.99 --transport xdp --iface "$if_c")
bench() {
	in_client taskset -c 1 "$build/xkv-bench" --server "$ip_s:7411" "${workload[@]}" "$@"
}

# server_up I: the server with policy I (0 or 1), its log in $out/server-LABEL.log
server_up() {
	local i=$1 extra=()
	if [ "${policies[$i]}" = minos ]; then extra=("${minos_args[@]}"); fi
	# its workers pin themselves to the CPU of their id; its 500 KB values need room
	server_run "server-${labels[$i]}" xkv "$build/xkv-server" --backend xdp --iface "$if_s" \
		--workers 2 --memory 256M --allow "$ip_c/32" --policy "${policies[$i]}" \
		"${extra[@]}"
}

# Where each thread of the server and the client may run, as the kernel says.
show_pinning() {
	local task
	echo "pinning (this machine has $(nproc) cores):"
	for task in /proc/"$server_pid"/task/*; do
		printf '  server thread %-16s CPUs %s\n' "$(cat "$task/comm")" \
			"$(awk '/^Cpus_allowed_list/ {print $2}' "$task/status")"
	done
	echo "  client xkv-bench       CPUs 1 (taskset -c 1)"
}

# --- a. the SLO search, each policy --------------------------------------------------
rate_found=()
for i in 0 1; do
	server_up "$i"
	if [ "$i" = 0 ]; then show_pinning | tee "$out/pinning.txt"; fi
	progress "${labels[$i]}: sweep, SLO p99 <= $slo_us us"
	# shellcheck disable=SC2046 # sweep_max's options are words
	bench --sweep --slo-us "$slo_us" --rate "$sweep_start" $(sweep_max "$sweep_start") \
		--duration "$sweep_step_s" --label "${labels[$i]}" \
		--csv "$out/sweep-${labels[$i]}.csv" \
		--json >"$out/sweep-${labels[$i]}.json" 2>"$out/sweep-${labels[$i]}.log"
	server_stop
	rate_found[i]=$(sweep_rate "$out/sweep-${labels[$i]}.json")
	echo "   ${labels[$i]}: highest rate under the SLO ${rate_found[i]}/s"
done
base=${rate_found[0]}
if [ "$base" -le 0 ]; then
	# a busy machine: still compare, from the rate the search started at
	base=$sweep_start
	echo "   ${labels[0]} met the SLO at no rate (a busy machine?): the ladder is of $base/s"
fi
equal_rate=$((base / 2))

# run I NAME RATE SECONDS [OPTIONS...]: one open-loop run, JSON in $out/NAME-LABEL.json
run() {
	local i=$1 name=$2 rate=$3 seconds=$4
	shift 4
	server_up "$i"
	measure_begin "$name-${labels[$i]}"
	bench --rate "$rate" --duration "$seconds" --label "${labels[$i]}" --json "$@" \
		>"$out/$name-${labels[$i]}.json" 2>"$out/$name-${labels[$i]}.log"
	measure_end "$name-${labels[$i]}"
	server_stop
}

# --- b. the ladder: each rate on both policies before the next --------------------------
for f in "${fractions[@]}"; do
	rate=$(/usr/bin/python3 -c "print(max(1, round($base * $f)))")
	for i in 0 1; do
		progress "${labels[$i]}: ladder, $rate/s ($f x ${labels[0]}'s highest)"
		run "$i" "ladder-$f" "$rate" "$ladder_s" --large-pct "$large_pct"
	done
done

# --- c. equal load ----------------------------------------------------------------------
for i in 0 1; do
	progress "${labels[$i]}: equal load, $equal_rate/s for $equal_s s"
	run "$i" equal "$equal_rate" "$equal_s" --large-pct "$large_pct"
done
# the server the bottleneck: the baseline's capacity in a closed loop, then both policies
# in an open loop at SAT_PCT % of it (a closed loop's latency is its window over its
# rate, whatever the policy: Little's law)
progress "${labels[0]}: capacity, closed loop, 2 x $sat_depth outstanding"
server_up 0
bench --depth "$sat_depth" --threads 2 --duration "$capacity_s" --label "${labels[0]}" --json \
	--large-pct "$large_pct" >"$out/capacity-${labels[0]}.json" 2>"$out/capacity-${labels[0]}.log"
server_stop
sat_rate=$(/usr/bin/python3 -c "import json, sys; print(max(1000, round(json.load(open(sys.argv[1]))['all']['ops_per_s'] * $sat_pct / 100)))" "$out/capacity-${labels[0]}.json")
for i in 0 1; do
	progress "${labels[$i]}: $sat_rate/s ($sat_pct % of ${labels[0]}'s capacity) for $sat_s s"
	server_up "$i"
	measure_begin "saturated-${labels[$i]}"
	bench --rate "$sat_rate" --threads 2 --duration "$sat_s" --label "${labels[$i]}" --json \
		--large-pct "$large_pct" >"$out/saturated-${labels[$i]}.json" \
		2>"$out/saturated-${labels[$i]}.log"
	measure_end "saturated-${labels[$i]}"
	server_stop
done

# --- d. the dynamic workload, with the workers' roles once a second ---------------------
# poll_roles FILE: a line per second, "UNIX_TIME STATUS_JSON", until killed
poll_roles() {
	while :; do
		printf '%s %s\n' "$(date +%s.%N)" \
			"$(in_server "$build/xkv-loader" status --iface "$if_s" --json 2>/dev/null |
				tr -d '\n' || true)"
		sleep 1
	done >"$1"
}
for i in 0 1; do
	progress "${labels[$i]}: dynamic, $equal_rate/s, large % $dyn_steps, $dyn_step_s s each"
	server_up "$i"
	poll_roles "$out/roles-${labels[$i]}.jsonl" &
	poll_pid=$!
	bench --rate "$equal_rate" --large-pct-steps "$dyn_steps" --step-seconds "$dyn_step_s" \
		--label "${labels[$i]}" --interval-csv "$out/dynamic-${labels[$i]}.csv" --json \
		>"$out/dynamic-${labels[$i]}.json" 2>"$out/dynamic-${labels[$i]}.log"
	kill "$poll_pid" 2>/dev/null || true
	wait "$poll_pid" 2>/dev/null || true
	poll_pid=
	server_stop
done

# --- e. the simulator's predictions, the table, the plots -------------------------------
progress "xkv-sim predictions, table and plots"
{
PYTHONPATH="$here" /usr/bin/python3 - "$out" "$build/xkv-sim" "$slo_us" "$equal_rate" "$large_pct" "$dyn_steps" \
	"${policies[@]}" "${labels[@]}" "${fractions[@]}" "$sat_depth" <<'PY'
import csv, json, subprocess, sys
import sides
out, sim, slo, equal_rate, large_pct, dyn_steps = sys.argv[1:7]
slo, equal_rate, large_pct = float(slo), int(equal_rate), float(large_pct)
policies, labels, fractions = sys.argv[7:9], sys.argv[9:11], sys.argv[11:-1]

def load(name, label):
    return json.load(open(f"{out}/{name}-{label}.json"))

def cls(run, name):
    """A size class's row (or all's); zeros when the class had no request."""
    return run.get(name, {"ops_per_s": 0, "p50_us": 0, "p99_us": 0, "mean_us": 0, "lost": 0})

# Calibration of the simulator (docs/SIMULATION.md, bimodal service): a small request
# takes unit-ns of a worker, a large one K units. unit: one worker answers at most
# 436 K requests/s through AF_XDP in copy mode (the echo ceiling, docs/BENCH.md), so a
# small request costs it at most 2.3 us. K: a large value goes in K datagrams of
# XKV_MINOS_PIECE_BYTES, each about a small request's work. Latencies measured here
# include the veth round trip and the client, which the simulator does not model: its
# figures say how the server's queues behave at the same rates (who wins, by how much),
# not what the client sees.
PIECE_BYTES, ECHO_CEILING = 1400, 436000
low = load(f"ladder-{fractions[0]}", labels[0])
unit_ns = 1e9 / ECHO_CEILING
k = -(-low["large_size"] // PIECE_BYTES)
keys, p_large = low["keys"], large_pct / 100

def sim_predict(policy, cores, rate, p=p_large):
    """p99 of small, large and all (us) on `cores` at the per-core rate of 2 workers."""
    cmd = [sim, "--policy", policy, "--cores", str(cores), "--service", "bimodal",
           "--p-large", f"{p:g}", "--K", f"{k:.3f}", "--unit-ns", f"{unit_ns:.1f}",
           "--rate", f"{rate * cores / 2 / 1e6:.6f}", "--items", str(keys), "--zipf", "0.99",
           "--write-frac", "0.05", "--json"]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    lat = r["result"]["latency_ns"]
    # p99_small and p99_large come with the simulator's size classes; p99 before them
    return {c: lat.get(f"p99_{c}", lat["p99"]) / 1e3 for c in ("small", "large")} | \
        {"all": lat["p99"] / 1e3}

predictions = {"unit_ns": unit_ns, "K": k, "ladder": [], "equal": {}, "dynamic": {}}

# b. the ladder as CSVs plot_latency.py reads, one per class, and the predictions
ladder_csv = {c: open(f"{out}/ladder-{c}.csv", "w", newline="") for c in ("small", "all")}
writers = {c: csv.writer(f) for c, f in ladder_csv.items()}
for w in writers.values():
    w.writerow(["label", "offered_per_s", "achieved_per_s", "p50_us", "p99_us", "slo_us",
                "slo_percentile", "sim2_p99_us", "sim64_p99_us"])
print(f"\nladder: p99 (us) of small requests and of all, measured | xkv-sim on 2 and 64 cores")
print(f"{'policy':<10}{'offered/s':>10}{'achieved/s':>11}{'small':>9}{'sim2':>8}{'sim64':>8}"
      f"{'all':>9}{'sim2':>8}{'sim64':>8}{'lost':>6}")
for f in fractions:
    for policy, label in zip(policies, labels):
        r = load(f"ladder-{f}", label)
        s2, s64 = sim_predict(policy, 2, r["rate"]), sim_predict(policy, 64, r["rate"])
        predictions["ladder"].append({"label": label, "rate": r["rate"], "sim2": s2,
                                      "sim64": s64})
        for c in ("small", "all"):
            row = cls(r, c)
            writers[c].writerow([label, r["rate"], r["all"]["ops_per_s"], row["p50_us"],
                                 row["p99_us"], slo, 99, s2[c], s64[c]])
        print(f"{label:<10}{r['rate']:>10.0f}{r['all']['ops_per_s']:>11.0f}"
              f"{cls(r, 'small')['p99_us']:>9.0f}{s2['small']:>8.0f}{s64['small']:>8.0f}"
              f"{r['all']['p99_us']:>9.0f}{s2['all']:>8.0f}{s64['all']:>8.0f}"
              f"{r['all']['lost']:>6}")
for f in ladder_csv.values():
    f.close()

# c. the equal-load table and the ratios
sweeps = [load("sweep", label) for label in labels]
eq = [load("equal", label) for label in labels]
print(f"\nequal load: {equal_rate}/s offered (half of {labels[0]}'s highest rate under "
      f"p99 <= {slo:g} us); latencies in us; sim2/sim64: xkv-sim's p99")
print(f"{'policy':<10}{'max ops/s':>10}{'ops/s':>9}{'small p50':>10}{'p99':>8}{'sim2':>8}"
      f"{'sim64':>8}{'large p50':>10}{'p99':>8}{'sim2':>8}{'sim64':>8}{'all p50':>8}"
      f"{'p99':>8}{'sim2':>8}{'sim64':>8}{'lost':>6}")
for policy, label, sw, r in zip(policies, labels, sweeps, eq):
    s2, s64 = sim_predict(policy, 2, equal_rate), sim_predict(policy, 64, equal_rate)
    predictions["equal"][label] = {"sim2": s2, "sim64": s64}
    line = f"{label:<10}{sw['rate_found']:>10.0f}{r['all']['ops_per_s']:>9.0f}"
    for c, width in (("small", 10), ("large", 10), ("all", 8)):
        row = cls(r, c)
        line += f"{row['p50_us']:>{width}.0f}{row['p99_us']:>8.0f}{s2[c]:>8.0f}{s64[c]:>8.0f}"
    print(line + f"{r['all']['lost']:>6}")

print(f"\nthe same runs inside the server (GETs, from arrival in XDP to the reply on the "
      f"TX ring; us, p50/p99/p99.9), the workers' busy time and the machine's stalls")
side_rows = []
for label, r in zip(labels, eq):
    st = sides.load(out, f"equal-{label}")
    srv = {c: sides.percentiles(st, small=(c == "small")) for c in ("small", "large")}
    print(f"{label:<10} small {sides.fmt(srv['small']):>16}  large {sides.fmt(srv['large']):>18}"
          f"  {sides.describe(out, f'equal-{label}', st)}")
    for c in ("small", "large"):
        row = cls(r, c)
        client = {0.5: row["p50_us"], 0.99: row["p99_us"], 0.999: row.get("p999_us", 0)}
        side_rows.append((f"{label} {c}", client, srv[c]))
sides.plot(side_rows, f"{out}/sides.png",
           f"equal load {equal_rate}/s: client side (plain) and server side (hatched)")

def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"
a, b = eq
srv_small = [sides.percentiles(sides.load(out, f"equal-{label}"), small=True) for label in labels]
if all(srv_small):
    print(f"\nserver side, {labels[0]}/{labels[1]} small GET p99: "
          f"{ratio(srv_small[0][0.99], srv_small[1][0.99])}")
print(f"\n{labels[0]}/{labels[1]} small p99: "
      f"{ratio(cls(a, 'small')['p99_us'], cls(b, 'small')['p99_us'])} (target >= 5)")
print(f"{labels[1]}/{labels[0]} large p99: "
      f"{ratio(cls(b, 'large')['p99_us'], cls(a, 'large')['p99_us'])} (target <= 2)")
print(f"{labels[1]}/{labels[0]} highest rate: "
      f"{ratio(sweeps[1]['rate_found'], sweeps[0]['rate_found'])} (target >= 1)")

# c, closed loop: the server the bottleneck; its side against the simulator's queues
cap = load("capacity", labels[0])["all"]["ops_per_s"]
print(f"\n{labels[0]}'s capacity {cap:.0f}/s (closed loop, 2 x {sys.argv[-1]} outstanding); "
      f"both at {load('saturated', labels[0])['rate']:.0f}/s, open loop: server side (us, "
      f"p50/p99/p99.9), busy share; sim2: xkv-sim's p99 on 2 cores at that rate")
sat = {}
for policy, label in zip(policies, labels):
    r, st = load("saturated", label), sides.load(out, f"saturated-{label}")
    srv = {c: sides.percentiles(st, small=(c == "small")) for c in ("small", "large")}
    s2 = sim_predict(policy, 2, r["all"]["ops_per_s"])
    sat[label] = (srv, s2)
    predictions["saturated"] = predictions.get("saturated", {}) | {label: s2}
    print(f"{label:<10}{r['all']['ops_per_s']:>9.0f}/s small {sides.fmt(srv['small']):>16} "
          f"(sim2 {s2['small']:.0f}) large {sides.fmt(srv['large']):>18} "
          f"(sim2 {s2['large']:.0f})  {sides.describe(out, f'saturated-{label}', st)}")
(sa, _), (sb, _) = sat[labels[0]], sat[labels[1]]
if sa["small"] and sb["small"]:
    print(f"server side, {labels[0]}/{labels[1]} small p99: "
          f"{ratio(sa['small'][0.99], sb['small'][0.99])} (target >= 10)")
if sa["large"] and sb["large"]:
    print(f"server side, {labels[1]}/{labels[0]} large p99: "
          f"{ratio(sb['large'][0.99], sa['large'][0.99])} (target <= 2)")

# d. the dynamic run's predictions: one per step of the large share
for policy, label in zip(policies, labels):
    predictions["dynamic"][label] = [
        {"large_pct": float(p), "sim2": sim_predict(policy, 2, equal_rate, float(p) / 100)}
        for p in dyn_steps.split(",")]
json.dump(predictions, open(f"{out}/sim-predictions.json", "w"), indent=1)
PY
} | tee "$out/summary.txt"

/usr/bin/python3 "$here/plot_latency.py" --x offered --slo-us "$slo_us" -o "$out/sweep.png" \
	--title "SLO search, p99 of all requests" "$out"/sweep-*.csv >/dev/null
for c in small all; do
	/usr/bin/python3 "$here/plot_latency.py" --x offered --slo-us "$slo_us" -o "$out/ladder-$c.png" \
		--title "p99 of $c requests against offered load (Minos Fig. 3, 4)" \
		"$out/ladder-$c.csv" >/dev/null
done
/usr/bin/python3 "$here/plot_minos_dynamic.py" -o "$out/dynamic.png" --slo-us "$slo_us" \
	--predictions "$out/sim-predictions.json" \
	"${labels[0]}=$out/dynamic-${labels[0]}.csv" "${labels[1]}=$out/dynamic-${labels[1]}.csv" \
	--roles "$out/roles-${labels[0]}.jsonl" --roles "$out/roles-${labels[1]}.jsonl" >/dev/null
echo
cat "$out/pinning.txt"
echo "CSVs, JSON, logs and plots (sweep.png, ladder-small.png, ladder-all.png, dynamic.png,"
echo "sides.png: the equal load's client and server sides)"
echo "in $out; $((SECONDS - start)) s"
