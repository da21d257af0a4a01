#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Latency (p50 and p99) against achieved throughput, from xkv-bench --sweep --csv files.

One line per label and percentile; a step that missed the SLO is drawn hollow. The SLO
of each label is a dotted horizontal line.

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

COLUMNS = ("label", "achieved_per_s", "p50_us", "p99_us", "meets_slo", "slo_us", "slo_percentile")


def read_steps(paths):
    """Steps per label, in the order of the files and rows."""
    steps = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            rows = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (rows.fieldnames or ())]
            if missing:
                sys.exit(f"plot_latency.py: {path}: not an xkv-bench sweep CSV "
                         f"(no {', '.join(missing)})")
            for row in rows:
                steps[row["label"]].append({
                    "achieved": float(row["achieved_per_s"]),
                    "p50": float(row["p50_us"]),
                    "p99": float(row["p99_us"]),
                    "meets": row["meets_slo"] == "1",
                    "slo": float(row["slo_us"]),
                    "slo_pct": row["slo_percentile"],
                })
    return steps


def plot(steps, out, title, log_y):
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, (label, rows) in enumerate(steps.items()):
        rows = sorted(rows, key=lambda r: r["achieved"])
        color = f"C{i}"
        x = [r["achieved"] / 1e3 for r in rows]
        for pct, style in (("p50", "--"), ("p99", "-")):
            y = [r[pct] for r in rows]
            ax.plot(x, y, style, color=color, label=f"{label} {pct}")
            for xi, yi, r in zip(x, y, rows):
                ax.plot(xi, yi, "o", color=color,
                        markerfacecolor=color if r["meets"] else "none")
        slo = rows[0]["slo"]
        if slo > 0 and math.isfinite(slo):
            ax.axhline(slo, linestyle=":", color=color,
                       label=f"{label} SLO p{rows[0]['slo_pct']} {slo:g} us")
    ax.set_xlabel("achieved throughput (thousand answers per second)")
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
    p.add_argument("csv", nargs="+", help="xkv-bench --sweep --csv output files")
    p.add_argument("-o", "--output", default="latency.png", help="PNG to write")
    p.add_argument("--title", default="xkv-bench open-loop sweep", help="plot title")
    p.add_argument("--linear", action="store_true", help="linear latency axis (default log)")
    args = p.parse_args()
    steps = read_steps(args.csv)
    if not steps:
        sys.exit("plot_latency.py: no steps in the files given")
    plot(steps, args.output, args.title, not args.linear)
    print(args.output)


if __name__ == "__main__":
    main()
