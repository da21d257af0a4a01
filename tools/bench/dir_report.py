#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The coherence directory's load balance (make bench-dir, tools/bench/bench-dir.sh):
the busiest server's share of requests over the mean, measured with ketama alone and
with the directory, beside what a placement model predicts for the same keys on this
pool and on 64 servers.

The model (the cluster model [D2] will replace): key k of N is asked with probability
(k + 1)^-s / H(N, s), zipf with exponent s, key 0 the hottest; a key not replicated
loads its ketama home alone; a replicated one loads every server alike, since its
writes go round the servers and its reads follow its last write (docs/DIRECTORY.md).

    dir_report.py --runs RUNS.jsonl --keys N --replicated R --homes HOMES.txt
                  [--homes64 HOMES64.txt --replicated64 R64] --json OUT.json --png OUT.png

RUNS.jsonl: one object a run, {"zipf", "mode", "requests": [per server]}; HOMES.txt:
each key's server ("KEY<TAB>NAME", xkv-cli where's lines), names s0..sN-1.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)


def homes(path):
	"""Each key's server index, in key order, from xkv-cli where's lines."""
	out = []
	with open(path) as f:
		for line in f:
			_, name = line.split()
			out.append(int(name.lstrip("s")))
	return out


def imbalance(load):
	mean = sum(load) / len(load)
	return max(load) / mean if mean else 0.0


def predict(home, nservers, zipf, replicated):
	"""The model's max/mean for ketama alone and with the first `replicated` keys spread."""
	weights = [(k + 1) ** -zipf for k in range(len(home))]
	total = sum(weights)
	alone, spread = [0.0] * nservers, [0.0] * nservers
	for k, w in enumerate(weights):
		alone[home[k]] += w / total
		if k < replicated:
			for s in range(nservers):
				spread[s] += w / total / nservers
		else:
			spread[home[k]] += w / total
	return imbalance(alone), imbalance(spread)


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	ap.add_argument("--runs", required=True)
	ap.add_argument("--keys", type=int, required=True)
	ap.add_argument("--replicated", type=int, required=True)
	ap.add_argument("--homes", required=True)
	ap.add_argument("--homes64")
	ap.add_argument("--replicated64", type=int, default=0)
	ap.add_argument("--json", required=True)
	ap.add_argument("--png", required=True)
	a = ap.parse_args()

	with open(a.runs) as f:
		runs = [json.loads(line) for line in f if line.strip()]
	home = homes(a.homes)[:a.keys]
	home64 = homes(a.homes64)[:a.keys] if a.homes64 else None
	nservers = max(home) + 1
	rows = []
	print(f"{'zipf':>5} {'mode':<10} {'requests per server':<36} {'max/mean':>8} "
	      f"{'model':>6} {'model, 64 servers':>18}")
	for r in runs:
		load = r["requests"]
		alone, spread = predict(home, nservers, r["zipf"], a.replicated)
		model = spread if r["mode"] == "directory" else alone
		row = {**r, "max_over_mean": imbalance(load), "model": model}
		model64 = "-"
		if home64:
			a64, s64 = predict(home64, max(home64) + 1, r["zipf"], a.replicated64)
			row["model_64"] = s64 if r["mode"] == "directory" else a64
			model64 = f"{row['model_64']:.2f}"
		rows.append(row)
		print(f"{r['zipf']:>5} {r['mode']:<10} {' '.join(str(n) for n in load):<36} "
		      f"{row['max_over_mean']:>8.2f} {model:>6.2f} {model64:>18}")
	with open(a.json, "w") as f:
		json.dump({"keys": a.keys, "replicated": a.replicated,
			   "replicated_64": a.replicated64, "runs": rows}, f, indent=1)

	fig, axes = plt.subplots(1, len({r["zipf"] for r in rows}), figsize=(10, 4),
				 squeeze=False)
	for ax, zipf in zip(axes[0], sorted({r["zipf"] for r in rows})):
		for shift, r in enumerate(x for x in rows if x["zipf"] == zipf):
			total = sum(r["requests"]) or 1
			xs = [s + 0.4 * shift for s in range(len(r["requests"]))]
			ax.bar(xs, [n / total for n in r["requests"]], width=0.4,
			       label=f"{r['mode']} (max/mean {r['max_over_mean']:.2f})")
		ax.axhline(1 / nservers, color="grey", linestyle=":", label="the mean")
		ax.set_xticks([s + 0.2 for s in range(nservers)], [f"s{s}" for s in range(nservers)])
		ax.set_title(f"zipf {zipf}")
		ax.set_xlabel("server")
		ax.set_ylabel("share of requests")
		ax.legend(fontsize=8, loc="lower right")
	fig.suptitle(f"{a.keys} keys, the {a.replicated} hottest replicated by the directory")
	fig.tight_layout()
	fig.savefig(a.png)
	return 0


if __name__ == "__main__":
	sys.exit(main())
