"""Each run's client side beside its server side, a line each, and both on one figure:
  sides_report.py OUT PNG TITLE NAME...
NAME.json is xkv-bench's (all requests), NAME.server.json and NAME.stall what
measure_begin and measure_end saved (tools/bench/server-host.sh). Server side: every
request of the run, GETs and PUTs (a run's server served nothing else), from XDP's
arrival stamp to the reply on the TX ring; queued: to the worker starting it."""

import json
import sys

import sides

out, png, title, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ops = ("get", "put", "delete")
print(f"{'run':<22}{'client p50/p99/p99.9':>22}{'server':>18}{'queued':>18}  busy, stalls (us)")
rows = []
for name in names:
    client = json.load(open(f"{out}/{name}.json"))["all"]
    stats = sides.load(out, name)
    c = {0.5: client["p50_us"], 0.99: client["p99_us"], 0.999: client["p999_us"]}
    s = sides.percentiles(stats, ops=ops)
    q = sides.percentiles(stats, ops=ops, interval="queued")
    print(f"{name:<22}{sides.fmt(c):>22}{sides.fmt(s):>18}{sides.fmt(q):>18}  "
          f"{sides.describe(out, name, stats)}")
    rows.append((name, c, s))
sides.plot(rows, png, title)
