#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The table of tools/bench/bench-compaction.sh, from the files it leaves in OUT.

For each workload: each setting's highest rate under the SLO (sweep-SETTING-WL.json),
then the rounds at equal load (equal-SETTING-WL-R.json) and at each setting's highest
rate (peak-SETTING-WL-R.json); beside each run the server's counters over it, exactly:
the workers' counters at exit (server-NAME.log) less those before the run
(server-NAME-before.json, read once they stopped moving after the keys were loaded).
Counters are summed over the rounds, worker by worker, before any ratio is taken.
xkv-sim's prediction for the same workload (read from the runs' JSON: keys, zipf, GET
share) comes beside, under crew and comp on 2 and 64 cores (C-4 Fig. 4), with xkv's
256 partitions. The targets (issue 18) are marked met or missed; summary.json keeps
every figure.

    compaction_report.py --sim build/xkv-sim OUT storm zipf5 zipf50
"""
import argparse
import json
import re
import statistics
import subprocess
import sys

SETTINGS = ("off", "on")
COUNTERS = ("get", "put", "delete", "datagrams", "store_writes", "compact_windows",
            "compact_writes", "compact_window_max", "busy_ns")
STORM_WRITES_PER_STORE_WRITE = 3  # the target on the hot-key storm, compaction on


def exit_counters(text):
    """Per worker, the counters xkv-server printed when it stopped ("worker N name: V")."""
    workers = {}
    for m in re.finditer(r"^worker (\d+) (\w+): (\d+)$", text, re.M):
        if m.group(2) in COUNTERS:
            workers.setdefault(int(m.group(1)), {})[m.group(2)] = int(m.group(3))
    return [workers[w] for w in sorted(workers)]


def run_counters(out, name):
    """What one run added to each worker's counters; the largest window is the
    exit's (the load before opens none: its PUTs are of distinct keys)."""
    after = exit_counters(open(f"{out}/server-{name}.log").read())
    before = json.load(open(f"{out}/server-{name}-before.json"))["workers"]
    if len(before) != len(after):
        sys.exit(f"compaction_report.py: {name}: {len(before)} workers before, {len(after)} after")
    delta = []
    for b, a in zip(before, after):
        d = {k: a[k] - b[k] for k in COUNTERS if k != "compact_window_max"}
        d["compact_window_max"] = a["compact_window_max"]
        delta.append(d)
    return delta


def summed(runs):
    """Several runs' counters added worker by worker (the largest window: the largest)."""
    total = [dict.fromkeys(COUNTERS, 0) for _ in runs[0]]
    for run in runs:
        for t, w in zip(total, run):
            for k in COUNTERS:
                t[k] = max(t[k], w[k]) if k == "compact_window_max" else t[k] + w[k]
    return total


def ratio(a, b):
    return a / b if b else float("nan")


def figures(workers):
    """The run's compaction figures from its per-worker counters."""
    writes = [w["put"] + w["delete"] for w in workers]
    hot = max(range(len(workers)), key=lambda i: writes[i])
    h = workers[hot]
    windows = sum(w["compact_windows"] for w in workers)
    return {
        "writes_per_store_write": ratio(sum(writes), sum(w["store_writes"] for w in workers)),
        "hot_worker": hot,
        "hot_writes_per_store_write": ratio(writes[hot], h["store_writes"]),
        "hot_busy_ns_per_request": ratio(h["busy_ns"], h["datagrams"]),
        "hot_share_of_writes": ratio(writes[hot], sum(writes)),
        "window_mean": ratio(sum(w["compact_writes"] for w in workers), windows),
        "window_max": max(w["compact_window_max"] for w in workers),
        "windows": windows,
        "workers": workers,
    }


def measured(out, kind, setting, wl, rounds):
    """A setting's runs of one kind (equal, peak): medians over rounds, counters summed."""
    names = [f"{kind}-{setting}-{wl}-{r}" for r in range(1, rounds + 1)]
    runs = [json.load(open(f"{out}/{n}.json")) for n in names]
    row = figures(summed([run_counters(out, n) for n in names]))
    for k in ("ops_per_s", "p50_us", "p99_us"):
        row[k] = statistics.median(r["all"][k] for r in runs)
    row["p99_rounds"] = [r["all"]["p99_us"] for r in runs]
    row["rate"] = runs[0]["rate"]
    row["lost"] = sum(r["all"]["lost"] for r in runs)
    return row, runs[0]


def sim_sweep(sim, policy, cores, bench):
    """xkv-sim's highest load under its SLO for bench's workload (its C-4 model)."""
    cmd = [sim, "--policy", policy, "--cores", str(cores), "--items", str(bench["keys"]),
           "--zipf", str(bench["zipf"]), "--write-frac", f"{1 - bench['get_ratio']:.4f}",
           "--partitions", "256", "--sweep", "--json"]
    sweep = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout)["sweep"]
    c = sweep["at_max"]["counters"]
    return {"max_load": sweep["max_load"], "max_mrps": sweep["max_mrps"],
            "window_mean": ratio(c["compacted"], c["windows"]), "window_max": c["window_max"]}


def describe(bench):
    keys = bench["keys"]
    pop = f"zipf {bench['zipf']:g}" if bench["zipf"] else "uniform"
    return (f"{keys:,} keys ({pop}), {(1 - bench['get_ratio']) * 100:.0f} % PUTs, "
            f"{bench['value_size']} B values")


def number(x, fmt):
    return "-" if x != x else format(x, fmt)  # NaN: no write, no window


def table(title, rows):
    print(f"{title}")
    print(f"{'setting':<8}{'offered':>9}{'ops/s':>9}{'p50':>7}{'p99':>8}{'w/sw':>7}"
          f"{'hot':>8}{'hot w/sw':>10}{'hot ns/req':>11}{'win mean':>9}{'win max':>8}{'lost':>7}")
    for s, r in rows.items():
        print(f"{s:<8}{r['rate']:>9.0f}{r['ops_per_s']:>9.0f}{r['p50_us']:>7.0f}"
              f"{r['p99_us']:>8.0f}{number(r['writes_per_store_write'], '.2f'):>7}"
              f"{'w%d %.0f%%' % (r['hot_worker'], 100 * r['hot_share_of_writes']):>8}"
              f"{number(r['hot_writes_per_store_write'], '.2f'):>10}"
              f"{number(r['hot_busy_ns_per_request'], '.0f'):>11}"
              f"{number(r['window_mean'], '.1f'):>9}{r['window_max']:>8}{r['lost']:>7}")


def mark(ok):
    return "met" if ok else "MISSED"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sim", required=True, help="the xkv-sim binary")
    p.add_argument("--slo-us", type=float, default=1000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("out")
    p.add_argument("workloads", nargs="+")
    a = p.parse_args()

    summary, targets = {}, []
    print("\nWrite compaction off and on under crew, 2 workers, AF_XDP client. p50, p99 in us; "
          "w/sw: write requests per store write; hot: the worker with the most writes, its "
          "share of them; ns/req: its busy time per request; win: PUTs per window")
    for wl in a.workloads:
        equal = int(open(f"{a.out}/equal-rate-{wl}.txt").read())
        found = {s: json.load(open(f"{a.out}/sweep-{s}-{wl}.json"))["rate_found"]
                 for s in SETTINGS}
        eq, peak = {}, {}
        for s in SETTINGS:
            eq[s], bench = measured(a.out, "equal", s, wl, a.rounds)
            peak[s], _ = measured(a.out, "peak", s, wl, a.rounds)
        sim = {n: {p: sim_sweep(a.sim, p, n, bench) for p in ("crew", "comp")} for n in (2, 64)}
        print(f"\n{wl}: {describe(bench)}; highest rate under p99 <= {a.slo_us:g} us: off "
              f"{found['off']:.0f}/s, on {found['on']:.0f}/s")
        table(f"each at its own highest rate, {a.rounds} round(s):", peak)
        table(f"equal load, {equal}/s (75 % of off's highest), {a.rounds} round(s):", eq)
        gain = {n: ratio(sim[n]["comp"]["max_load"], sim[n]["crew"]["max_load"]) for n in sim}
        print("xkv-sim, highest load under its SLO, crew -> comp: " + "; ".join(
            f"{n} cores {sim[n]['crew']['max_load']:.3f} -> {sim[n]['comp']['max_load']:.3f} "
            f"= {gain[n]:.2f}x (comp's windows {number(sim[n]['comp']['window_mean'], '.1f')}"
            f"/{sim[n]['comp']['window_max']})" for n in sim))
        rate_ratio = ratio(found["on"], found["off"])
        p99_ratio = ratio(eq["on"]["p99_us"], eq["off"]["p99_us"])
        closed = None
        if wl == "storm":
            w = peak["on"]["writes_per_store_write"]
            targets.append((f"{wl}: write requests per store write at the highest rate, on: "
                            f"{w:.2f} (>= {STORM_WRITES_PER_STORE_WRITE})",
                            w >= STORM_WRITES_PER_STORE_WRITE))
            closed = {s: measured(a.out, "closed", s, wl, a.rounds)[0] for s in SETTINGS}
            table(f"closed loop, 32 outstanding (the hot worker busy), {a.rounds} round(s):",
                  closed)
            print("the mechanism with the hot worker busy (not a target): write requests per "
                  f"store write {closed['on']['writes_per_store_write']:.2f} in all, "
                  f"{closed['on']['hot_writes_per_store_write']:.2f} on the hot worker; its "
                  "busy time per request on/off "
                  f"{number(ratio(closed['on']['hot_busy_ns_per_request'], closed['off']['hot_busy_ns_per_request']), '.2f')}"
                  f"; ops/s on/off "
                  f"{number(ratio(closed['on']['ops_per_s'], closed['off']['ops_per_s']), '.2f')}")
        targets.append((f"{wl}: highest rate under the SLO on/off: {number(rate_ratio, '.2f')} (>= 1)",
                        rate_ratio >= 1))
        targets.append((f"{wl}: p99 at equal load on/off: {number(p99_ratio, '.2f')} (<= 1; rounds off "
                        + "/".join(f"{x:.0f}" for x in eq["off"]["p99_rounds"]) + ", on "
                        + "/".join(f"{x:.0f}" for x in eq["on"]["p99_rounds"]) + " us)",
                        p99_ratio <= 1))
        summary[wl] = {"workload": describe(bench), "rate_found": found, "equal_rate": equal,
                       "equal": eq, "peak": peak, "closed": closed, "sim": sim,
                       "sim_gain": gain,
                       "rate_ratio": rate_ratio, "p99_ratio": p99_ratio}
    print("\ntargets (issue 18):")
    for text, ok in targets:
        print(f"  {mark(ok):<7}{text}")
    print("  xkv-sim's gain from compaction at 64 cores (2 cores): " + ", ".join(
        f"{wl} {s['sim_gain'][64]:.2f}x ({s['sim_gain'][2]:.2f}x)" for wl, s in summary.items()))
    summary["targets"] = [{"target": t, "met": ok} for t, ok in targets]
    json.dump(summary, open(f"{a.out}/summary.json", "w"), indent=1)


if __name__ == "__main__":
    main()
