#!/usr/bin/python3
"""Whether a worker's longest gap between two rounds (round_gap_max_ns) is the server's
doing or the machine's (tests/soak/soak.sh), from xkv-stall's log.

Time in the gap is the machine's when, then, the worker waited on the run
queue (its run_delay grew), or its CPU stalled (a SCHED_FIFO sleeper woke late). A
wait inside sched_yield is the worker waiting for the others to adopt new roles
(engine/roles_adopt.c, the server's only sched_yield): that time is the machine's
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
		if f.readline().strip() != "# xkv-stall 1":
			sys.exit(f"gaps.py: {path}: not an xkv-stall log")
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


def union(intervals):
	"""Sorted, disjoint."""
	out = []
	for a, b in sorted(intervals):
		if out and a <= out[-1][1]:
			out[-1][1] = max(out[-1][1], b)
		elif a < b:
			out.append([a, b])
	return out


def intersect(xs, ys):
	"""Two sorted disjoint lists: where both are."""
	out, i, j = [], 0, 0
	while i < len(xs) and j < len(ys):
		a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
		if a < b:
			out.append([a, b])
		if xs[i][1] < ys[j][1]:
			i += 1
		else:
			j += 1
	return out


class Measure:
	"""How much of [s, e] a sorted disjoint list of intervals covers."""

	def __init__(self, intervals):
		self.iv = intervals
		self.starts = [a for a, _ in intervals]
		self.sums = [0]
		for a, b in intervals:
			self.sums.append(self.sums[-1] + b - a)

	def upto(self, t):
		i = bisect.bisect_right(self.starts, t)
		if not i:
			return 0
		a, b = self.iv[i - 1]
		return self.sums[i - 1] + min(b, t) - a

	def within(self, s, e):
		return self.upto(e) - self.upto(s)

	def most(self, length, lo, hi):
		"""The most a window [s, s + length] covers, s in [lo, hi]: at its best a
		window begins where an interval does or ends where one does."""
		if hi < lo:
			return 0
		starts = {lo, hi}
		for a, b in self.iv:
			for s in (a, b - length):
				if lo <= s <= hi:
					starts.add(s)
		return max(self.within(s, s + length) for s in starts)


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
	stalls = {cpu: union((t - d, t) for t, d in ev) for cpu, ev in late.items()}
	checks = []
	for check in sys.argv[3:]:
		parts = check.split(":")
		if len(parts) < 4 or parts[0] != "W" or int(parts[1]) not in samples:
			print(f"gaps.py: bad check {check} (or no samples of its thread)",
			      file=sys.stderr)
			return 2
		checks.append((int(parts[1]), int(parts[2]), int(parts[3]), parts[4:]))
	cpu_of = {tid: cpu for tid, cpu, _, _ in checks}
	split = {tid: [union(x) for x in waits(s)] for tid, s in samples.items()}
	failed = False
	for tid, cpu, gap, more in checks:
		plain, yielding = split[tid]
		# what keeps the workers it waits for from running: their waits and stalls
		held_up = union([iv for p in samples if p != tid for iv in
				 split[p][0] + split[p][1] + stalls.get(cpu_of.get(p), [])])
		mine = stalls.get(cpu, [])
		excused = Measure(union(plain + mine + intersect(yielding, held_up)))
		yield_ms = sum(b - a for a, b in yielding) / MS
		stop = 0
		what = "the whole run"
		lo, hi = t_first - gap, t_last
		if more and more[0].startswith("until="):
			lo, hi = t_first - gap, int(more[0][6:]) - gap
			what = "before the stop"
		elif more and more[0].startswith("stopped="):
			a, b = (int(x) for x in more[0][8:].split("-"))
			stop = b - a
			lo, hi = b - gap, a  # the window holds the stop
			what = "stopped, the whole run"
		took = min(excused.most(gap, lo, hi), max(0, gap - stop))
		own = gap - stop - took
		ok = own <= bound and gap >= stop
		failed |= not ok
		stopped = f", {stop / 1e6:.1f} ms of it stopped" if stop else ""
		print(f"{'ok' if ok else 'FAIL'}: worker thread {tid} (CPU {cpu}), {what}: longest "
		      f"gap {gap / 1e6:.1f} ms{stopped}; the machine took up to "
		      f"{took / 1e6:.1f} ms of it: {own / 1e6:.1f} ms the server's, bound "
		      f"{bound / 1e6:.0f} ms (waiting for new roles {yield_ms:.0f} ms in all)"
		      + ("" if gap >= stop else "; the stop is not in it"))
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main())
