#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""p99 per second of a run whose large share changes, and Minos's worker roles below it.

Top: p99 of all requests (solid) and of small ones (dashed) each second, from
xkv-bench --interval-csv files, one colour per policy; the large share of the schedule
on the right axis; xkv-sim's predicted p99 for each step (dotted, when --predictions
names it). Below, for each policy whose status carries Minos's roles, each worker's
role once a second, from tools/bench/bench-minos.sh's polls of
`xkv-loader status --json` (a line "UNIX_TIME JSON"); a policy without roles (crew)
has no row.

    tools/bench/plot_minos_dynamic.py -o dynamic.png crew=crew.csv minos=minos.csv \\
        --roles roles-crew.jsonl --roles roles-minos.jsonl
"""
import argparse
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

ROLE_COLORS = {"small": "C0", "large": "C3", "standby": "0.7"}


def read_intervals(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "p99_us" not in rows[0]:
        sys.exit(f"plot_minos_dynamic.py: {path}: not an xkv-bench --interval-csv file")
    return rows


def number(value):
    return float(value) if value not in (None, "") else float("nan")


def read_roles(path):
    """[(unix time, {worker id: role})], the polls whose status has a "minos" object."""
    polls = []
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return polls
    for line in lines:
        when, _, text = line.partition(" ")
        try:
            status = json.loads(text)
        except ValueError:
            continue  # the server was not up, or went away
        for st in status if isinstance(status, list) else [status]:
            minos = st.get("minos") if isinstance(st, dict) else None
            if minos:
                polls.append((float(when), {w["id"]: w["role"] for w in minos["workers"]}))
    return polls


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", metavar="LABEL=CSV", help="--interval-csv of each policy")
    p.add_argument("--roles", action="append", default=[],
                   help="the polls of each run, in the order of the runs")
    p.add_argument("--predictions", help="bench-minos.sh's sim-predictions.json")
    p.add_argument("--slo-us", type=float, help="draw the SLO")
    p.add_argument("-o", "--output", default="dynamic.png", help="PNG to write")
    args = p.parse_args()

    runs = []
    for i, spec in enumerate(args.runs):
        label, _, path = spec.partition("=")
        roles = read_roles(args.roles[i]) if i < len(args.roles) else []
        runs.append((label, read_intervals(path), roles))
    with_roles = [r for r in runs if r[2]]
    predictions = json.load(open(args.predictions)) if args.predictions else {}

    fig, axes = plt.subplots(1 + len(with_roles), 1, sharex=True, squeeze=False,
                             figsize=(9, 5 + 1.2 * len(with_roles)),
                             gridspec_kw={"height_ratios": [4] + [1] * len(with_roles)})
    ax = axes[0][0]
    share = ax.twinx()
    for i, (label, rows, _) in enumerate(runs):
        color = f"C{i}"
        t = [int(r["second"]) + 0.5 for r in rows]
        ax.plot(t, [number(r["p99_us"]) for r in rows], "-o", ms=3, color=color,
                label=f"{label} p99 all")
        ax.plot(t, [number(r["p99_small_us"]) for r in rows], "--", color=color,
                label=f"{label} p99 small")
        steps = predictions.get("dynamic", {}).get(label)
        if steps:
            step_s = len(rows) / len(steps)
            ax.step([k * step_s for k in range(len(steps) + 1)],
                    [s["sim2"]["all"] for s in steps] + [steps[-1]["sim2"]["all"]],
                    ":", where="post", color=color, label=f"{label} xkv-sim p99, 2 cores")
        if i == 0:
            share.step([int(r["second"]) for r in rows] + [len(rows)],
                       [number(r["large_pct"]) for r in rows] + [number(rows[-1]["large_pct"])],
                       where="post", color="0.5", alpha=0.6)
    if args.slo_us:
        ax.axhline(args.slo_us, linestyle=":", color="black", label=f"SLO {args.slo_us:g} us")
    ax.set_yscale("log")
    ax.set_ylabel("p99 latency per second (us)")
    share.set_ylabel("large requests (%)", color="0.4")
    ax.set_title("dynamic workload: the large share changes every step (Minos Sec. 6.6)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left")

    for row, (label, rows, polls) in enumerate(with_roles, start=1):
        rax = axes[row][0]
        t0 = float(rows[0]["unix_s"])
        workers = sorted({w for _, roles in polls for w in roles})
        for k, (when, roles) in enumerate(polls):
            end = polls[k + 1][0] if k + 1 < len(polls) else when + 1
            for w, role in roles.items():
                rax.broken_barh([(when - t0, end - when)], (workers.index(w) - 0.4, 0.8),
                                color=ROLE_COLORS.get(role, "k"))
        rax.set_yticks(range(len(workers)), [f"worker {w}" for w in workers])
        rax.set_ylabel(label, rotation=0, ha="right")
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ROLE_COLORS.values()]
        rax.legend(handles, ROLE_COLORS.keys(), fontsize="x-small", loc="upper right",
                   ncol=3)
    axes[-1][0].set_xlabel("seconds into the measured run")
    axes[-1][0].set_xlim(0, max(len(r[1]) for r in runs))
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
