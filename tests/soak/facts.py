#!/usr/bin/python3
"""What tests/soak/soak.sh reads out of the JSON it kept: xkv-loader stats --json,
bpftool's dump of xkv_ewt, mc_load.py's and xkv-bench's results. Each command prints
one line: the figures the script checks, then "|" and the words it says.

  facts.py progress STATS              requests, EWT slots held, longest gaps
  facts.py gap STATS WORKER            the worker's round_gap_max_ns
  facts.py ewt EWT_DUMP STATS          slots held; XDP's taken + joined + ewt_joined;
                                       ewt_released + ewt_healed
  facts.py malformed BEFORE AFTER MC   those XDP drops: sent, counted; the workers'
                                       protocol drops; errors: sent, answered, counted
                                       (mc_errors); those the worker drops: sent,
                                       counted (mc_dropped), the least that must be;
                                       datagrams the kernel dropped on RX rings or the
                                       workers on TX; replies not as they must be
  facts.py client MC NAME              wrong reads; when the last answer came (s)
  facts.py bench AFTER BENCH_JSON...   errors, invalid; the server's non-OK replies
  facts.py store STATS                 the store's bytes, KiB
  facts.py tx_dropped BEFORE AFTER W   worker W's tx_dropped in each
"""
import json
import sys

PROTO = ("truncated bad_magic bad_version bad_flags bad_op bad_status bad_key_len too_large "
	 "bad_length bad_fragment").split()


def load(path):
	with open(path) as f:
		return json.load(f)


def out(figures, words):
	print(" ".join(str(x) for x in figures) + "|" + words)


def progress(stats):
	j = load(stats)
	gaps = ", ".join("%.0f" % (w["round_gap_max_ns"] / 1e6) for w in j["workers"])
	out([], f"requests {sum(w['datagrams'] for w in j['workers'])}, EWT slots held "
	    f"{j['ewt']['active']}, longest gaps {gaps} ms")


def ewt(dump, stats):
	held = sum(1 for e in load(dump) if any(e["formatted"]["value"].values()))
	j = load(stats)
	ws = j["workers"]
	held_in = j["ewt"]["taken"] + j["ewt"]["conflicts"] + sum(w["ewt_joined"] for w in ws)
	held_out = sum(w["ewt_released"] + w["ewt_healed"] for w in ws)
	out([held, held_in, held_out], f"heals {sum(w['ewt_heals'] for w in ws)}, healed "
	    f"{sum(w['ewt_healed'] for w in ws)}, ewt_busy drops {j['drops']['ewt_busy']}")


def malformed(before, after, mc):
	"""What XDP must drop it counts, each one: exactly. What reaches a worker the kernel
	may drop on a full RX ring, so: every error answered was counted; and of the kind the
	worker drops without a word, as many counted as the errors' share that arrived
	says, less 3 (a binomial's 2.5 standard deviations at 14 sent a minute)."""
	b, a, m = load(before), load(after), load(mc)
	bad = m["bad"]

	def grew(f):
		return f(a) - f(b)

	def workers(name):
		return grew(lambda j: sum(w[name] for w in j["workers"]))

	xdp_sent = sum(c for k, c in bad["by_kind"].items() if not bad["to_worker"][k])
	xdp_counted = grew(lambda j: sum(j["drops"][r] for r in PROTO))
	protocol = grew(lambda j: sum(sum(w["dropped"].values()) for w in j["workers"]))
	err_sent = bad["want_answered"]
	err_answered = err_sent - bad["unanswered"]
	err_counted = workers("mc_errors")
	quiet_sent = sum(c for k, c in bad["by_kind"].items()
			 if bad["to_worker"][k] and bad["want"][k] == "drop")
	quiet_counted = workers("mc_dropped")
	quiet_least = quiet_sent * min(err_counted, err_sent) // max(1, err_sent) - 3
	lost = grew(lambda j: sum(w["kernel"]["rx_dropped"] + w["kernel"]["rx_ring_full"] +
				  w["tx_dropped"] for w in j["workers"]))
	out([xdp_sent, xdp_counted, protocol, err_sent, err_answered, err_counted, quiet_sent,
	     quiet_counted, quiet_least, lost, bad["unexpected_count"]],
	    f"replies {bad['replies']}, errors unanswered {bad['unanswered_first'] or 'none'}, "
	    f"not as they must be {bad['unexpected'] or 'none'}")


def client(mc, name):
	c = load(mc)[name]
	out([c["wrong"], int(c["last_answer_s"] or 0)],
	    f"{c['ops']} ops, {c['wrong']} wrong, {c['timeouts']} unanswered, "
	    f"{c['server_errors']} SERVER_ERROR {c['server_error_texts'] or ''}, longest wait "
	    f"{c['longest_wait_s']} s, last answer at {c['last_answer_s']} s "
	    f"{c['wrong_first'] or ''}")


def bench(after, *runs):
	j = load(after)
	not_ok = sum(v for w in j["workers"] for k, v in w["status"].items()
		     if k not in ("ok", "not_found"))
	rs = [load(p) for p in runs]
	tot = {k: sum(r["all"][k] for r in rs) for k in ("ops", "lost", "errors")}
	invalid = sum(r["invalid"] for r in rs)
	out([tot["errors"], invalid, not_ok],
	    f"{len(rs)} runs, {tot['ops']} ops, {tot['lost']} lost, {tot['errors']} errors, "
	    f"{invalid} invalid, p99 up to {max(r['all']['p99_us'] for r in rs):.0f} us")


def main():
	cmds = {"progress": progress, "ewt": ewt, "malformed": malformed, "client": client,
		"bench": bench,
		"tx_dropped": lambda b, a, w: out([load(x)["workers"][int(w)]["tx_dropped"]
						  for x in (b, a)], ""),
		"gap": lambda s, w: out([load(s)["workers"][int(w)]["round_gap_max_ns"]], ""),
		"store": lambda s: out([load(s)["server"]["store"]["bytes_used"] >> 10], "")}
	if len(sys.argv) < 2 or sys.argv[1] not in cmds:
		print(__doc__, file=sys.stderr)
		return 2
	cmds[sys.argv[1]](*sys.argv[2:])
	return 0


if __name__ == "__main__":
	sys.exit(main())
