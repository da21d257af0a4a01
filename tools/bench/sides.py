"""A run's server side beside its client side (docs/BENCH.md, "Server side and client
side"): the percentiles of the server's own latency histograms, its workers' busy
time and the machine's stalls, from what tools/bench/server-host.sh's measure_begin and
measure_end saved (NAME.server.json: xkv-loader stats --json; NAME.stall: xkv-stall).
The benchmark scripts import it (PYTHONPATH=tools/bench)."""

import json
import math

# Size classes (include/xkv/hash.h) of values that fit one datagram: a benchmark's
# "small" requests; the rest are its "large" ones.
SMALL = ("0", "lt2", "lt4", "lt8", "lt16", "lt32", "lt64", "lt128", "lt256", "lt512", "lt1k",
         "lt2k")


def load(out, name):
    """The server's stats at the run's end, its histograms the run's alone, and under
    "begin" those at its start; None when the run saved none."""
    try:
        stats = json.load(open(f"{out}/{name}.server.json"))
        stats["begin"] = json.load(open(f"{out}/{name}.begin.json"))
        return stats
    except FileNotFoundError:
        return None


def _middle(low):
    """What a percentile reports for the bucket starting at low (include/xkv/latency.h)."""
    if low < 64:
        return low
    return low + (1 << (int(math.log2(low)) - 6)) // 2


def percentiles(stats, ops=("get",), small=None, interval="total", qs=(0.5, 0.99, 0.999)):
    """{q: microseconds} over every worker's requests of ops, small (True), large
    (False) or all (None), from the merged histograms; None when there was none."""
    counts = {}
    for h in (stats or {}).get("latency", []):
        if "worker" in h or h["interval"] != interval or h["op"] not in ops:
            continue
        if small is not None and (h["class"] in SMALL) != small:
            continue
        for low, n in h["buckets"]:
            counts[low] = counts.get(low, 0) + n
    total = sum(counts.values())
    if not total:
        return None
    result, seen, lows = {}, 0, sorted(counts)
    for q in qs:
        rank, seen, i = max(1, math.ceil(q * total)), 0, 0
        while seen + counts[lows[i]] < rank:
            seen += counts[lows[i]]
            i += 1
        result[q] = _middle(lows[i]) / 1e3
    return result


def busy(stats):
    """Each worker's share of the run spent serving: busy_ns over the time between the
    counters at its start and at its end (each published every 100 ms)."""
    if not stats:
        return []
    begin = stats["begin"]
    span = stats["server"]["uptime_s"] - begin["server"]["uptime_s"]
    return [(w["busy_ns"] - b["busy_ns"]) / (span * 1e9) if span > 0 else 0
            for w, b in zip(stats["workers"], begin["workers"])]


def stalls(out, name):
    """xkv-stall's summary: late wake-ups over 50 us (count, total_us) and the worst."""
    s = {"count": 0, "total_us": 0, "max_us": 0}
    try:
        for line in open(f"{out}/{name}.stall"):
            key, _, value = line.rpartition(": ")
            if key.endswith("stalls_over_50us"):
                s["count"] += int(value)
            elif key.endswith("stall_total_us"):
                s["total_us"] += int(value)
            elif key == "stall_max_us":
                s["max_us"] = int(value)
    except FileNotFoundError:
        pass
    return s


def fmt(p):
    """"p50/p99/p99.9" in us, or "-" """
    return "/".join(f"{p[q]:.0f}" for q in sorted(p)) if p else "-"


def describe(out, name, stats=None):
    """One line: the workers' busy % and the machine's stalls during the run."""
    stats = stats if stats is not None else load(out, name)
    s = stalls(out, name)
    return (f"busy {'/'.join(f'{b * 100:.0f}' for b in busy(stats)) or '-'} %, stalls over "
            f"50 us {s['count']} ({s['total_us'] / 1e3:.1f} ms, largest {s['max_us']} us)")


def plot(rows, path, title):
    """Client-side and server-side p50, p99 and p99.9 of each row on one figure: rows
    are (label, client {q: us}, server {q: us})."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    qs = (0.5, 0.99, 0.999)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4.5))
    width = 0.13
    for k, (side, hatch) in enumerate((("client", ""), ("server", "//"))):
        for j, q in enumerate(qs):
            xs = [i + (k * 3 + j - 2.5) * width for i in range(len(rows))]
            ys = [(r[1 + k] or {}).get(q, 0) for r in rows]
            ax.bar(xs, ys, width, hatch=hatch, color=f"C{j}",
                   label=f"{side} p{q * 100:g}", edgecolor="black", linewidth=0.4)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r[0] for r in rows], rotation=15, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("latency (us)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
