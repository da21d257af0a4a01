#!/usr/bin/env bash
# make bench-order: a worker's local order (engine/order.h), fifo against rml (Hector's
# Random Multi-Level, ICPP'23 Sec. 3.2), under crew on Minos's bimodal load scaled to
# this machine as bench-minos's is: 0.5 % of GETs for 500,000-byte values (20 keys),
# the rest 64 B, 95 % GET, over the AF_XDP client, xkv-server --backend xdp --workers
# 2 (each pinned to the CPU of its id), the client pinned to CPU 1.
# ROUNDS rounds (3), the two orders interleaved in each so that the VM's noisy spells
# (docs/BENCH.md) fall on both, each a closed loop of THREADS x DEPTH outstanding
# (2 x 32: the server, not the client, is the bottleneck, so batches hold several
# requests to order) for SECONDS (5) after a warm-up. Per run, server side
# (measure_begin/measure_end, tools/bench/sides.py): small and large GETs' p50/p99/
# p99.9 from arrival to reply and queued before the worker started them, the workers'
# busy share and the machine's stalls; per order, the median over rounds; the ratios
# fifo/rml of small p99 (the order's point) and rml/fifo of large p99 (its price).
# xkv-sim does not model a worker's batches, so there is no prediction beside it.
# Everything (JSON, logs, sides.png) in BUILD_DIR/bench-order; everything it makes
# (namespaces, links, pins, processes) goes on every way out.
#   tools/bench/bench-order.sh BUILD_DIR
# Environment: ROUNDS, SECONDS_EACH, THREADS, DEPTH, LARGE_PCT (0.5); XKV_BENCH_SMOKE=1, the smoke mode
# (bench-lib.sh): one round of SMOKE_S seconds each
set -euo pipefail

usage="usage: bench-order.sh BUILD_DIR"
build=$(cd "${1:?$usage}" && pwd)
here=$(dirname "$0")
. "$here/server-host.sh"
. "$here/bench-lib.sh"
rounds=${ROUNDS:-3} seconds=${SECONDS_EACH:-5} threads=${THREADS:-2} depth=${DEPTH:-32} warm=1
large_pct=${LARGE_PCT:-0.5}
if bench_smoke; then
	rounds=1 seconds=$SMOKE_S warm=$SMOKE_S
fi
ns_s="xkvbo-$$-s" ns_c="xkvbo-$$-c" if_s="xbo$$" if_c="xboc$$" ip_s=10.207.0.1 ip_c=10.207.0.2
out=$(bench_out "$build" bench-order)
rm -rf "$out"
mkdir -p "$out"
trap server_host_down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

progress() { printf '[bench-order %4ds] %s\n' "$SECONDS" "$*" >&2; }

client_cpu=$(($(nproc) - 1))
load=(--transport xdp --iface "$if_c" --threads "$threads" --depth "$depth" --keys 2000
      --value-profile bimodal --large-pct "$large_pct" --large-size 500000 --large-keys 20
      --get-ratio 0.95)
netns_pair_up
runs=()
for r in $(seq "$rounds"); do
	for order in fifo rml; do
		name="$order-$r"
		progress "round $r of $rounds: $order"
		server_start "$name" --memory 256M --workers 2 --policy crew --local-order "$order" \
			--trust "$ip_c/32"
		in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" --json \
			"${load[@]}" --duration "$warm" >/dev/null 2>"$out/$name.warm.err"
		measure_begin "$name"
		in_client taskset -c "$client_cpu" "$build/xkv-bench" --server "$ip_s" --json \
			--label "$name" "${load[@]}" --duration "$seconds" --no-load \
			>"$out/$name.json" 2>"$out/$name.err"
		measure_end "$name"
		server_stop
		runs+=("$name")
	done
done

progress "table and plot"
PYTHONPATH="$here" /usr/bin/python3 - "$out" "${runs[@]}" <<'PY' | tee "$out/summary.txt"
import statistics, sys
import sides

out, runs = sys.argv[1], sys.argv[2:]
print(f"{'run':<8}{'small total':>20}{'small queued':>20}{'large total':>20}  busy, stalls (us)")
p99 = {}
for name in runs:
    st = sides.load(out, name)
    row = [sides.percentiles(st, small=s, interval=i) for s, i in
           ((True, "total"), (True, "queued"), (False, "total"))]
    print(f"{name:<8}{sides.fmt(row[0]):>20}{sides.fmt(row[1]):>20}{sides.fmt(row[2]):>20}  "
          f"{sides.describe(out, name, st)}")
    order = name.split("-")[0]
    p99.setdefault(order, []).append((row[0][0.99], row[2][0.99]))
med = {o: [statistics.median(v[i] for v in p99[o]) for i in (0, 1)] for o in p99}
print(f"\nmedian p99 over {len(p99['fifo'])} rounds (us): small fifo {med['fifo'][0]:.0f}, "
      f"rml {med['rml'][0]:.0f}: fifo/rml {med['fifo'][0] / med['rml'][0]:.2f}; "
      f"large fifo {med['fifo'][1]:.0f}, rml {med['rml'][1]:.0f}: "
      f"rml/fifo {med['rml'][1] / med['fifo'][1]:.2f}")
print("server side: arrival (XDP's stamp) to the reply on the TX ring; p50/p99/p99.9")
PY
# shellcheck disable=SC2046 # the runs' names are words
PYTHONPATH="$here" /usr/bin/python3 "$here/sides_report.py" "$out" "$out/sides.png" \
	"local order under crew, bimodal: fifo against rml, client side (plain), server side (hatched)" \
	"${runs[@]}" | tee -a "$out/summary.txt"
echo "JSON, logs and sides.png in $out; $SECONDS s"
