#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Popularity that moves (make bench-dir, tools/bench/bench-dir.sh): each second, the
busiest server's requests over the mean, with ketama alone and with the directory's
controller (xkv-dir run) under each replica selection strategy.

A run's seconds are xkv-bench's (--interval-csv: each second's start on the Unix clock);
a server's requests in a second come from its live counters as tools/bench/server_load.py
polled them, interpolated at the second's ends. The popularity changes at every multiple
of --shuffle and at --hot-in; a second is "settled" when it starts two controller epochs
or more after the last change (and after the run's start), which is where the target,
at most 1.15, applies.

    dir_dynamic.py --runs RUNS.jsonl --epoch-ms MS --shuffle S --hot-in S
                   --json OUT.json --png OUT.png

RUNS.jsonl: one object a run, {"zipf", "mode", "seconds": CSV, "load": JSONL}.
"""
import argparse
import bisect
import csv
import json

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

TARGET = 1.15


def server_series(path):
	"""Per server, its (published, requests) points in time order, each once."""
	series = None
	with open(path) as f:
		for line in f:
			row = json.loads(line)
			if series is None:
				series = [[] for _ in row["requests"]]
			for s, (t, n) in enumerate(zip(row["published"], row["requests"])):
				if not series[s] or t > series[s][-1][0]:
					series[s].append((t, n))
	return series or []


def at(points, t):
	"""Requests done by time t, linear between published points, flat outside them."""
	times = [p[0] for p in points]
	i = bisect.bisect_right(times, t)
	if i == 0:
		return points[0][1]
	if i == len(points):
		return points[-1][1]
	(t0, n0), (t1, n1) = points[i - 1], points[i]
	return n0 + (n1 - n0) * (t - t0) / (t1 - t0)


def seconds(path):
	"""xkv-bench's seconds: (second, its start on the Unix clock)."""
	with open(path) as f:
		return [(int(r["second"]), float(r["unix_s"])) for r in csv.DictReader(f)]


def changes(duration, shuffle, hot_in):
	out = [k * shuffle for k in range(1, int(duration / shuffle) + 1)] if shuffle else []
	if hot_in:
		out.append(hot_in)
	return sorted(c for c in out if c < duration)


def settled(second, moves, wait):
	"""Whether a second starts `wait` seconds or more after the last change before its end."""
	last = max([0.0] + [c for c in moves if c < second + 1])
	return second >= last + wait


def analyse(run, shuffle, hot_in, wait):
	secs = seconds(run["seconds"])
	series = server_series(run["load"])
	ratios = []
	for i, (second, start) in enumerate(secs):
		end = secs[i + 1][1] if i + 1 < len(secs) else start + 1
		load = [at(p, end) - at(p, start) for p in series]
		mean = sum(load) / len(load) if load else 0
		ratios.append(max(load) / mean if mean > 0 else 0.0)
	moves = changes(len(secs), shuffle, hot_in)
	calm = [r for s, r in zip(range(len(secs)), ratios) if settled(s, moves, wait) and r > 0]
	return {"zipf": run["zipf"], "mode": run["mode"], "ratios": ratios, "changes": moves,
		"settled_mean": sum(calm) / len(calm) if calm else None,
		"settled_max": max(calm) if calm else None,
		"settled_seconds": len(calm),
		"settled_over_target": sum(r > TARGET for r in calm)}


def fmt(x):
	return "-" if x is None else f"{x:.2f}"


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	ap.add_argument("--runs", required=True)
	ap.add_argument("--epoch-ms", type=float, required=True)
	ap.add_argument("--shuffle", type=float, required=True)
	ap.add_argument("--hot-in", type=float, required=True)
	ap.add_argument("--json", required=True)
	ap.add_argument("--png", required=True)
	a = ap.parse_args()
	wait = 2 * a.epoch_ms / 1000
	with open(a.runs) as f:
		runs = [analyse(json.loads(line), a.shuffle, a.hot_in, wait) for line in f if line.strip()]

	print(f"changes: shuffled every {a.shuffle:g} s, the coldest key hot at {a.hot_in:g} s; "
	      f"settled: {wait:g} s (2 epochs) after each")
	print(f"{'zipf':>5} {'mode':<13} {'all seconds':>11} {'settled':>8} {'settled max':>11} "
	      f"{'over ' + str(TARGET):>9}")
	for r in runs:
		every = [x for x in r["ratios"] if x > 0]
		print(f"{r['zipf']:>5} {r['mode']:<13} {fmt(sum(every) / len(every) if every else None):>11}"
		      f" {fmt(r['settled_mean']):>8} {fmt(r['settled_max']):>11}"
		      f" {r['settled_over_target']:>4}/{r['settled_seconds']:<4}")
	with open(a.json, "w") as f:
		json.dump({"target": TARGET, "settle_s": wait, "runs": runs}, f, indent=1)

	zipfs = sorted({r["zipf"] for r in runs})
	fig, axes = plt.subplots(len(zipfs), 1, figsize=(9, 3.2 * len(zipfs)), squeeze=False)
	for ax, zipf in zip(axes[:, 0], zipfs):
		for r in (r for r in runs if r["zipf"] == zipf):
			ax.plot(range(len(r["ratios"])), r["ratios"], marker=".",
				label=r["mode"], linewidth=2 if r["mode"] == "ketama" else 1)
			moves = r["changes"]
		for c in moves:
			ax.axvline(c, color="grey", linestyle=":")
		ax.axhline(TARGET, color="red", linestyle="--", linewidth=0.8, label=f"target {TARGET}")
		ax.set_title(f"zipf {zipf}: the hot set shuffled every {a.shuffle:g} s, "
			     f"a cold key hot at {a.hot_in:g} s")
		ax.set_xlabel("second")
		ax.set_ylabel("busiest server / mean")
		ax.legend(fontsize=7, ncol=3)
	fig.tight_layout()
	fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
	main()
