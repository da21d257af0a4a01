#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tail latency against throughput, from xkv-bench --sweep --csv files or rate ladders.

One line per label through its steps sorted by offered rate (a sweep tries rates in
the search's order; joined in that order the line zigzags). A rate tried more than
once (a sweep's retry) is drawn by its best try, as the search counts it. A step over
the SLO is drawn hollow. One dotted horizontal line per distinct SLO.

A CSV needs the columns label, achieved_per_s and p99_us; offered_per_s, p50_us,
meets_slo, slo_us and slo_percentile are used when present (tools/bench/bench-minos.sh
writes its ladders in the same columns), and so are predictions beside the measured
p99, sim2_p99_us and sim64_p99_us (xkv-sim on 2 and 64 cores), drawn dotted and
dash-dotted.

    tools/bench/plot_latency.py -o latency.png udp.csv xdp.csv
"""
import argparse
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

REQUIRED = ("label", "achieved_per_s", "p99_us")
SIMULATED = {"sim2": (":", "xkv-sim p99, 2 cores"), "sim64": ("-.", "xkv-sim p99, 64 cores")}


def number(row, column, default=math.nan):
    value = row.get(column)
    return float(value) if value not in (None, "") else default


def read_steps(paths):
    """Steps per label, in the order of the files and rows."""
    steps = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            rows = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (rows.fieldnames or ())]
            if missing:
                sys.exit(f"plot_latency.py: {path}: not an xkv-bench sweep or ladder CSV "
                         f"(no {', '.join(missing)})")
            for row in rows:
                achieved = number(row, "achieved_per_s")
                step = {
                    "achieved": achieved,
                    "offered": number(row, "offered_per_s", achieved),
                    "p50": number(row, "p50_us"),
                    "p99": number(row, "p99_us"),
                    "slo": number(row, "slo_us"),
                    "slo_pct": row.get("slo_percentile") or "99",
                }
                for sim in SIMULATED:
                    step[sim] = number(row, f"{sim}_p99_us")
                meets = row.get("meets_slo")
                step["meets"] = (meets == "1" if meets not in (None, "")
                                 else not step["p99"] > step["slo"])
                steps[row["label"]].append(step)
    return steps


def by_rate(rows):
    """One step per offered rate (the best of its tries), sorted by that rate."""
    best = {}
    for r in rows:
        kept = best.get(r["offered"])
        if kept is None or (r["meets"], -r["p99"]) > (kept["meets"], -kept["p99"]):
            best[r["offered"]] = r
    return [best[rate] for rate in sorted(best)]


def plot(steps, out, title, log_y, x_key, p50, slo_override):
    fig, ax = plt.subplots(figsize=(8, 5))
    slos = {}
    for i, (label, rows) in enumerate(steps.items()):
        rows = by_rate(rows)
        color = f"C{i}"
        x = [r[x_key] / 1e3 for r in rows]
        for pct, style in (("p50", "--"), ("p99", "-")) if p50 else (("p99", "-"),):
            y = [r[pct] for r in rows]
            ax.plot(x, y, style, color=color, label=f"{label} {pct}")
            for xi, yi, r in zip(x, y, rows):
                ax.plot(xi, yi, "o", color=color,
                        markerfacecolor=color if r["meets"] else "none")
        for sim, (style, name) in SIMULATED.items():
            y = [r[sim] for r in rows]
            if any(math.isfinite(v) for v in y):
                ax.plot(x, y, style, color=color, label=f"{label} {name}")
        for r in rows:
            if r["slo"] > 0 and math.isfinite(r["slo"]):
                slos[r["slo"]] = r["slo_pct"]
    if slo_override:
        slos = {slo_override: "99"}
    for slo, pct in sorted(slos.items()):
        ax.axhline(slo, linestyle=":", color="black", label=f"SLO p{pct} {slo:g} us")
    what = "offered load (thousand requests" if x_key == "offered" else \
        "achieved throughput (thousand answers"
    ax.set_xlabel(f"{what} per second)")
    ax.set_ylabel("latency from intended send (us)")
    if log_y:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", nargs="+", help="xkv-bench --sweep --csv output files, or ladders")
    p.add_argument("-o", "--output", default="latency.png", help="PNG to write")
    p.add_argument("--title", default="xkv-bench open-loop sweep", help="plot title")
    p.add_argument("--x", choices=("achieved", "offered"), default="achieved",
                   help="x axis: achieved throughput (default) or offered rate")
    p.add_argument("--p50", action="store_true", help="draw p50 too (dashed)")
    p.add_argument("--slo-us", type=float, help="the SLO line, instead of the CSVs'")
    p.add_argument("--linear", action="store_true", help="linear latency axis (default log)")
    args = p.parse_args()
    steps = read_steps(args.csv)
    if not steps:
        sys.exit("plot_latency.py: no steps in the files given")
    plot(steps, args.output, args.title, not args.linear, args.x, args.p50, args.slo_us)
    print(args.output)


if __name__ == "__main__":
    main()
