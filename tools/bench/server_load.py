#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every xkv-server's requests over time, from its live counters (make bench-dir).

Each server publishes its workers' counters every 100 ms into its xkv_wstats map, and
its pid into xkv_sstats (include/xkv/stats.h); the two maps of one server come from one
BPF object, so they share a BTF id. A server's maps are kernel objects, seen from any
network namespace. Every --period seconds, one bpftool batch reads each server's
worker 0 slot; a line of OUT (JSON) holds, per server in --pids order, the requests its
worker executed so far and when it published them, on the Unix clock:

    {"published": [UNIX_S, ...], "requests": [N, ...]}

Stops at SIGINT or SIGTERM.

    server_load.py --pids PID,PID,... --out OUT.jsonl [--period S]
"""
import argparse
import json
import signal
import subprocess
import sys
import time


def bpftool(*args, stdin=None):
	return json.loads(subprocess.run(["bpftool", "-j", *args], input=stdin,
					 capture_output=True, text=True, check=True).stdout)


def lookups(map_ids):
	"""Each map's slot 0, as BTF formats it, by one bpftool."""
	cmds = "".join(f"map lookup id {i} key 0 0 0 0\n" for i in map_ids)
	return [r["output"]["formatted"]["value"] for r in bpftool("batch", "file", "-", stdin=cmds)]


def find_slots(pids, wait_s=5.0):
	"""Each pid's xkv_wstats map id, paired with its xkv_sstats by BTF id; a server that
	has not published its pid yet is waited for, up to wait_s."""
	deadline = time.time() + wait_s
	while True:
		slots, missing = try_slots(pids)
		if not missing:
			return slots
		if time.time() > deadline:
			sys.exit(f"server_load.py: no live counters for pids {missing}")
		time.sleep(0.1)


def try_slots(pids):
	maps = bpftool("map", "show")
	stats = [m for m in maps if m.get("name") == "xkv_sstats"]
	workers = {m["btf_id"]: m["id"] for m in maps if m.get("name") == "xkv_wstats"}
	found = {}
	for value, m in zip(lookups(m["id"] for m in stats), stats):
		pid = value["pid"]
		if pid in pids and m["btf_id"] in workers:
			found[pid] = workers[m["btf_id"]]
	missing = [p for p in pids if p not in found]
	return [found.get(p) for p in pids], missing


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	ap.add_argument("--pids", required=True)
	ap.add_argument("--out", required=True)
	ap.add_argument("--period", type=float, default=0.25)
	a = ap.parse_args()
	pids = [int(p) for p in a.pids.split(",")]
	stop = []
	signal.signal(signal.SIGINT, lambda *_: stop.append(1))
	signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
	slots = find_slots(pids)
	with open(a.out, "w") as out:
		while not stop:
			values = lookups(slots)
			# the counters' clock is CLOCK_MONOTONIC: shifted onto the Unix clock
			shift = time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)
			out.write(json.dumps({
				"published": [v["published_ns"] / 1e9 + shift for v in values],
				"requests": [sum(v["req"]["requests"]) for v in values],
			}) + "\n")
			out.flush()
			time.sleep(a.period)


if __name__ == "__main__":
	main()
