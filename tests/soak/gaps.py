#!/usr/bin/python3
"""Whether a worker's longest gap between two rounds (round_gap_max_ns) is the server's
doing or the machine's (tests/soak/soak.sh), from xkv-soak-stall's log.

A millisecond of the gap is the machine's when, in it, the worker waited on the run
queue (its run_delay grew), or its CPU stalled (a SCHED_FIFO sleeper woke late). A
wait inside sched_yield is the worker waiting for the others to adopt new roles
(engine/roles.c, the server's only sched_yield): that millisecond is the machine's
only if another worker, which it waits for, was itself waiting for a CPU or stalled
then; a worker stopped (the soak's ptrace) or busy is the server's. The server gives
the longest gap's length, not when it was, so the window of that length where the
machine took most is taken: a failure means the worker spent over BOUND of that gap
neither kept from a CPU by the machine nor stopped, so running without beginning a
round, waiting for another worker that ran, or blocked.

  gaps.py LOG BOUND_MS CHECK...
CHECK, one per worker and moment (TID: the worker's thread, CPU: the one it is pinned to):
  W:TID:CPU:GAP_NS                 the whole run: any window
  W:TID:CPU:GAP_NS:until=T_NS      a sample taken at T_NS: windows before it
  W:TID:CPU:GAP_NS:stopped=A_NS-B_NS
                                   the worker was stopped from A to B: its gap must
                                   hold the stop (G >= B - A) and the window holds it
The log's other threads are the worker's peers. Prints a line per check; exit 0 if
every one passes, 1 if one fails, 2 bad input.
"""
import bisect
import sys

MS = 1_000_000


def read_log(path):
	samples, late = {}, {}
	with open(path) as f:
		if f.readline().strip() != "# xkv-soak-stall 1":
			sys.exit(f"gaps.py: {path}: not an xkv-soak-stall log")
		for line in f:
			w = line.split()
			if w[0] == "s":
				sample = (int(w[1]), int(w[4]), w[5] == "1")
				samples.setdefault(int(w[2]), []).append(sample)
			elif w[0] == "l":
				late.setdefault(int(w[2]), []).append((int(w[1]), int(w[3])))
			elif line.startswith("# incomplete"):
				sys.exit(f"gaps.py: {path}: the log is incomplete")
	return samples, late


class Grid:
	"""Milliseconds from t_first on, each marked or not; intervals round outwards."""

	def __init__(self, t_first, t_last):
		self.t0 = t_first
		self.n = (t_last - t_first) // MS + 2

	def mask(self, intervals):
		diff = [0] * (self.n + 1)
		for s, e in intervals:
			a = max(0, (s - self.t0) // MS)
			b = min(self.n, -(-(e - self.t0) // MS))
			if a < b:
				diff[a] += 1
				diff[b] -= 1
		out, run = [False] * self.n, 0
		for k in range(self.n):
			run += diff[k]
			out[k] = run > 0
		return out

	def index(self, t):
		return max(0, min(self.n, (t - self.t0) // MS))


def waits(samples):
	"""Each run_delay increase as the wait it was (ending at the sample that saw it),
	and whether the thread was in sched_yield during it."""
	yields = [t for t, _, y in samples if y]
	state = [(t, y) for t, _, y in samples]
	plain, yielding = [], []
	for (t0, d0, y0), (t1, d1, _) in zip(samples, samples[1:]):
		if d1 <= d0:
			continue
		s = t1 - (d1 - d0)
		i = bisect.bisect_right(state, (s, True)) - 1
		in_yield = (i >= 0 and state[i][1]) or \
			bisect.bisect_left(yields, s) < bisect.bisect_right(yields, t1)
		(yielding if in_yield else plain).append((s, t1))
	return plain, yielding


def main():
	if len(sys.argv) < 4:
		print(__doc__, file=sys.stderr)
		return 2
	samples, late = read_log(sys.argv[1])
	bound = float(sys.argv[2]) * 1e6
	if not samples:
		print("gaps.py: no samples", file=sys.stderr)
		return 2
	t_first = min(s[0][0] for s in samples.values())
	t_last = max(s[-1][0] for s in samples.values())
	grid = Grid(t_first, t_last)
	stalls = {cpu: grid.mask((t - d, t) for t, d in ev) for cpu, ev in late.items()}
	nostall = [False] * grid.n
	checks = []
	for check in sys.argv[3:]:
		parts = check.split(":")
		if len(parts) < 4 or parts[0] != "W" or int(parts[1]) not in samples:
			print(f"gaps.py: bad check {check} (or no samples of its thread)",
			      file=sys.stderr)
			return 2
		checks.append((int(parts[1]), int(parts[2]), int(parts[3]), parts[4:]))
	cpu_of = {tid: cpu for tid, cpu, _, _ in checks}
	split = {tid: waits(s) for tid, s in samples.items()}
	failed = False
	for tid, cpu, gap, more in checks:
		plain, yielding = (grid.mask(x) for x in split[tid])
		# what keeps the workers it waits for from running: their waits and stalls
		peers = [t for t in samples if t != tid]
		peer_waits = [grid.mask(split[p][0] + split[p][1]) for p in peers]
		peer_stalls = [stalls.get(cpu_of.get(p), nostall) for p in peers]
		mine = stalls.get(cpu, nostall)
		excused = [0]
		for k in range(grid.n):
			m = plain[k] or mine[k] or (yielding[k] and any(
				w[k] or s[k] for w, s in zip(peer_waits, peer_stalls)))
			excused.append(excused[-1] + m)
		yield_ms = sum(yielding)
		g = -(-gap // MS)  # the gap in whole milliseconds, rounded up
		stop = 0
		what = "the whole run"
		lo, hi = 0, grid.n - g
		if more and more[0].startswith("until="):
			lo, hi = 0, grid.index(int(more[0][6:])) - g
			what = "before the stop"
		elif more and more[0].startswith("stopped="):
			a, b = (int(x) for x in more[0][8:].split("-"))
			stop = b - a
			lo, hi = grid.index(b) - g, grid.index(a)  # the window holds the stop
			what = "stopped, the whole run"
		lo, hi = max(0, lo), max(0, min(hi, grid.n - g))
		took = max((excused[s + g] - excused[s] for s in range(lo, hi + 1)
			    if s + g < len(excused)), default=0) * MS
		took = min(took, max(0, gap - stop))
		own = gap - stop - took
		ok = own <= bound and gap >= stop
		failed |= not ok
		stopped = f", {stop / 1e6:.1f} ms of it stopped" if stop else ""
		print(f"{'ok' if ok else 'FAIL'}: worker thread {tid} (CPU {cpu}), {what}: longest "
		      f"gap {gap / 1e6:.1f} ms{stopped}; the machine took up to "
		      f"{took / 1e6:.0f} ms of it: {own / 1e6:.1f} ms the server's, bound "
		      f"{bound / 1e6:.0f} ms (waiting for new roles {yield_ms} ms in all)"
		      + ("" if gap >= stop else "; the stop is not in it"))
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main())
