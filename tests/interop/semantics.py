#!/usr/bin/python3
"""memcached's text and meta protocol, side by side: each case below is a script of raw
request bytes, run over TCP against a real memcached (the reference) and against the
server under test, on a connection of its own; the replies must be equal byte for byte
after normalizing what legitimately differs: CAS values (each distinct one mapped to its
first-seen index in the case), meta TTLs that are counting down, the version string, and
stats (only the presence of the STAT names every server must give). Where a step gives
its expected reply too, the reference must give it: the list below is the executable
spec, checked against memcached each run.

Each step's bytes are followed by "mn" (meta no-op) and its reply read up to its "MN": that
bounds every reply, quiet and noreply ones included. A step that makes the server close
reads to the end of the stream instead.

  semantics.py --reference HOST:PORT --server HOST:PORT [--server-large HOST:PORT]
               [--reference-large HOST:PORT] [--only SUBSTRING] [--list]

--reference-large is a memcached run with -I 2m, for the one case that stores a value of
exactly 1 MiB: memcached's -I counts its item header too, so its default refuses it
(docs/MEMCACHED.md); --server-large is the server under test for that case (default:
--server). Exit 0: every case equal; 1: a case differed (a diff is printed)."""
import argparse
import re
import socket
import sys
import time

MIB = 1 << 20
KEY250 = "k" * 250
KEY251 = "k" * 251
REQUIRED_STATS = (
	"pid uptime time version pointer_size curr_connections total_connections cmd_get cmd_set "
	"get_hits get_misses delete_hits delete_misses incr_hits incr_misses decr_hits "
	"decr_misses cas_hits cas_misses cas_badval touch_hits touch_misses curr_items bytes "
	"limit_maxbytes threads evictions").split()


class Step:
	"""send: request bytes ({name} fields filled from fields()); expect: the reply the
	reference must give (normalized), None: not written down; bytewise: sent one byte per
	send(); sleep: seconds waited before sending; closes: the server closes after it."""

	def __init__(self, send, expect=None, bytewise=False, sleep=0, closes=False):
		self.send, self.expect = send, expect
		self.bytewise, self.sleep, self.closes = bytewise, sleep, closes


class Case:
	def __init__(self, name, *steps, large=False):
		self.name, self.steps, self.large = name, steps, large


S = Step
now = int(time.time())
MONTH = 30 * 24 * 3600

CASES = [
	Case("flags round trip 0, 1, 2^32-1",
	     S("set fl0 0 0 1\r\na\r\nset fl1 1 0 1\r\nb\r\nset flmax 4294967295 0 1\r\nc\r\n",
	       "STORED\r\nSTORED\r\nSTORED\r\n"),
	     S("get fl0 fl1 flmax\r\n", "VALUE fl0 0 1\r\na\r\nVALUE fl1 1 1\r\nb\r\n"
	       "VALUE flmax 4294967295 1\r\nc\r\nEND\r\n"),
	     S("set flover 4294967296 0 1\r\nd\r\nget flover\r\n")),
	Case("cas: a write changes the CAS, a stale CAS is EXISTS, a missing key NOT_FOUND",
	     S("set c1 5 0 2\r\nv1\r\ngets c1\r\n", "STORED\r\nVALUE c1 5 2 #0\r\nv1\r\nEND\r\n"),
	     S("cas c1 6 0 2 {cas0}\r\nv2\r\ngets c1\r\n",
	       "STORED\r\nVALUE c1 6 2 #1\r\nv2\r\nEND\r\n"),
	     S("cas c1 0 0 2 {cas0}\r\nv3\r\ngets c1\r\n",
	       "EXISTS\r\nVALUE c1 6 2 #1\r\nv2\r\nEND\r\n"),
	     S("cas c-none 0 0 1 {cas1}\r\nx\r\n", "NOT_FOUND\r\n"),
	     S("append c1 0 0 1\r\nA\r\ngets c1\r\nprepend c1 0 0 1\r\nP\r\ngets c1\r\n"
	       "incr c1 1\r\ntouch c1 0\r\ngets c1\r\nset c1 0 0 1\r\n7\r\nincr c1 1\r\ngets c1\r\n"
	       "delete c1\r\ncas c1 0 0 1 {cas1}\r\nx\r\n"),
	     S("gets c1 c-none c1\r\n")),
	Case("add, replace, append, prepend",
	     S("add ad 1 0 1\r\na\r\nadd ad 2 0 1\r\nb\r\nget ad\r\n",
	       "STORED\r\nNOT_STORED\r\nVALUE ad 1 1\r\na\r\nEND\r\n"),
	     S("replace rp 0 0 1\r\na\r\nset rp 3 0 1\r\na\r\nreplace rp 4 0 2\r\nbb\r\nget rp\r\n",
	       "NOT_STORED\r\nSTORED\r\nSTORED\r\nVALUE rp 4 2\r\nbb\r\nEND\r\n"),
	     S("append ap 0 0 1\r\nx\r\nprepend ap 0 0 1\r\nx\r\nset ap 9 0 3\r\nmid\r\n"
	       "append ap 1 0 3\r\nEND\r\nprepend ap 2 0 5\r\nBEGIN\r\nget ap\r\n",
	       "NOT_STORED\r\nNOT_STORED\r\nSTORED\r\nSTORED\r\nSTORED\r\n"
	       "VALUE ap 9 11\r\nBEGINmidEND\r\nEND\r\n")),
	Case("incr and decr",
	     S("incr in-none 1\r\nset in 0 0 1\r\n5\r\nincr in 10\r\ndecr in 3\r\ndecr in 100\r\n",
	       "NOT_FOUND\r\nSTORED\r\n15\r\n12\r\n0\r\n"),
	     S("set wrap 0 0 20\r\n18446744073709551615\r\nincr wrap 2\r\nget wrap\r\n"),
	     S("set grow 0 0 2\r\n99\r\nincr grow 1\r\nget grow\r\ndecr grow 91\r\nget grow\r\n"),
	     S("set nn 0 0 3\r\nabc\r\nincr nn 1\r\nincr in abc\r\nincr in -1\r\n"
	       "incr in 18446744073709551616\r\nget in\r\n"),
	     S("set spc 0 0 3\r\n 12\r\nincr spc 1\r\nset big 0 0 21\r\n184467440737095516150\r\n"
	       "incr big 1\r\n")),
	# Second granularity: an item of TTL 1 may be gone a microsecond later, when a second
	# begins (memcached's too), so items read at once have TTLs of 2 s or more; and the
	# sleeps are past a 2-s TTL whether an item expires at its second or after it.
	Case("expiry: relative, negative, absolute past and future",
	     S("set ex1 0 1 1\r\na\r\nset ex2 0 2 1\r\nb\r\nset exn 0 -1 1\r\nc\r\n"
	       "set expast 0 {past} 1\r\nd\r\nset exfut 0 {future} 1\r\ne\r\n"
	       "get ex2 exn expast exfut\r\n",
	       "STORED\r\n" * 5 + "VALUE ex2 0 1\r\nb\r\nVALUE exfut 0 1\r\ne\r\nEND\r\n"),
	     S("get ex1 ex2 exfut\r\n", "VALUE exfut 0 1\r\ne\r\nEND\r\n", sleep=3.1),
	     S("add ex1 0 0 1\r\nf\r\nget ex1\r\n", "STORED\r\nVALUE ex1 0 1\r\nf\r\nEND\r\n")),
	Case("touch, gat, gats",
	     S("touch to 10\r\nset to 3 100 1\r\na\r\ntouch to 2\r\ngat 0 to\r\ngats 2 to to-none\r\n",
	       "NOT_FOUND\r\nSTORED\r\nTOUCHED\r\nVALUE to 3 1\r\na\r\nEND\r\n"
	       "VALUE to 3 1 #0\r\na\r\nEND\r\n"),
	     S("get to\r\ngat 0 to\r\n", "VALUE to 3 1\r\na\r\nEND\r\nVALUE to 3 1\r\na\r\nEND\r\n"),
	     S("get to\r\ntouch to -1\r\nget to\r\n", "VALUE to 3 1\r\na\r\nEND\r\nTOUCHED\r\nEND\r\n",
	       sleep=3.1)),
	Case("noreply on every write, pipelined with a get",
	     S("set nr 1 0 1 noreply\r\na\r\nadd nr 0 0 1 noreply\r\nb\r\n"
	       "replace nr 2 0 1 noreply\r\nc\r\nappend nr 0 0 1 noreply\r\nd\r\n"
	       "prepend nr 0 0 1 noreply\r\ne\r\nget nr\r\n", "VALUE nr 2 3\r\necd\r\nEND\r\n"),
	     S("gets nr\r\n", "VALUE nr 2 3 #0\r\necd\r\nEND\r\n"),
	     S("cas nr 0 0 1 {cas0} noreply\r\nf\r\ncas nr 0 0 1 {cas0} noreply\r\ng\r\nget nr\r\n",
	       "VALUE nr 0 1\r\nf\r\nEND\r\n"),
	     S("set nrn 0 0 1 noreply\r\n1\r\nincr nrn 5 noreply\r\ndecr nrn 2 noreply\r\n"
	       "touch nrn 100 noreply\r\nget nrn\r\ndelete nrn noreply\r\nget nrn\r\n"
	       "flush_all noreply\r\nget nr\r\n",
	       "VALUE nrn 0 1\r\n4\r\nEND\r\nEND\r\nEND\r\n")),
	Case("pipelining: 100 sets then 100 gets in one send",
	     S("".join(f"set pl{i} {i} 0 {len(str(i))}\r\n{i}\r\n" for i in range(100)) +
	       "".join(f"get pl{i}\r\n" for i in range(100)),
	       "STORED\r\n" * 100 + "".join(f"VALUE pl{i} {i} {len(str(i))}\r\n{i}\r\nEND\r\n"
					    for i in range(100))),
	     S("get " + " ".join(f"pl{i}" for i in range(0, 100, 7)) + "\r\n")),
	Case("partial sends: one byte per send",
	     S("set pb 7 0 5\r\nhello\r\nget pb\r\ngets pb\r\nms pm 2 c\r\nhi\r\nmg pm v\r\n",
	       "STORED\r\nVALUE pb 7 5\r\nhello\r\nEND\r\nVALUE pb 7 5 #0\r\nhello\r\nEND\r\n"
	       "HD c#1\r\nVA 2\r\nhi\r\n", bytewise=True)),
	Case("errors: the connection survives where memcached's does",
	     S("bogus\r\n", "ERROR\r\n"),
	     S("set e1 abc 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n"),
	     S("set e2 0 0 3\r\nabcde\r\nget e2\r\n",
	       "CLIENT_ERROR bad data chunk\r\nERROR\r\nEND\r\n"),
	     S(f"get {KEY251}\r\nset {KEY251} 0 0 1\r\nx\r\n",
	       "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n"
	       "ERROR\r\n"),
	     S(f"set {KEY250} 1 0 1\r\nx\r\nget {KEY250}\r\n",
	       f"STORED\r\nVALUE {KEY250} 1 1\r\nx\r\nEND\r\n"),
	     S(f"set tl 0 0 {MIB + 1}\r\n" + "v" * (MIB + 1) + "\r\nget tl\r\n",
	       "SERVER_ERROR object too large for cache\r\nEND\r\n"),
	     S("get\r\nincr\r\ndelete\r\ntouch e1\r\nset e3 0 0\r\ncas e3 0 0 1\r\nx\r\n"),
	     S("set e4 0 0 1\r\nx\r\nget e4\r\n", "STORED\r\nVALUE e4 0 1\r\nx\r\nEND\r\n"),
	     S("quit\r\n", "", closes=True)),
	Case("a value of exactly 1 MiB, byte-exact",
	     S(f"set mib 3 0 {MIB}\r\n" + "".join(chr(65 + i % 26) for i in range(MIB)) +
	       "\r\nget mib\r\n", "STORED\r\nVALUE mib 3 1048576\r\n" +
	       "".join(chr(65 + i % 26) for i in range(MIB)) + "\r\nEND\r\n"),
	     large=True),
	Case("meta: mg, ms, md, ma, mn and their flags",
	     S("mg mm v\r\nmg mm v q\r\nms mm 2 F7 T0 c\r\nhi\r\n"
	       "mg mm k v c f s t O42\r\n", "EN\r\nHD c#0\r\nVA 2 kmm c#0 f7 s2 t-1 O42\r\nhi\r\n"),
	     S("ms mm 2 C{cas0} c\r\nho\r\nms mm 2 C{cas0}\r\nhu\r\nmg mm v c\r\n",
	       "HD c#1\r\nEX\r\nVA 2 c#1\r\nho\r\n"),
	     S("ms mm 1 MA\r\n!\r\nms mm 1 MP\r\n<\r\nms mm2 1 ME\r\nx\r\nms mm2 1 ME\r\ny\r\n"
	       "ms mm3 1 MR\r\nz\r\nms mm 1 MS q\r\n=\r\nmg mm v\r\nmg mm2 v\r\n",
	       "HD\r\nHD\r\nHD\r\nNS\r\nNS\r\nVA 1\r\n=\r\nVA 1\r\nx\r\n"),
	     S("ms mt 1 T100\r\nt\r\nmg mt t v\r\nmg mt T0\r\nmg mt t\r\nmg mn-none v q k O1\r\n"
	       "mg mt s q\r\n", "HD\r\nVA 1 t#ttl\r\nt\r\nHD\r\nHD t-1\r\nHD s1\r\n"),
	     S("md mm\r\nmd mm\r\nmd mm q\r\nmd mm2 q\r\nmg mm2 v\r\nmd mm3 C1 q\r\n",
	       "HD\r\nNF\r\nNF\r\nEN\r\nNF\r\n"),
	     S("ma cnt\r\nma cnt N0 J13 v\r\nma cnt v\r\nma cnt MD D20 v\r\nma cnt D5 v c t\r\n"
	       "ma cnt q\r\nmg cnt v\r\n",
	       "NF\r\nVA 2\r\n13\r\nVA 2\r\n14\r\nVA 1\r\n0\r\nVA 1 c#2 t-1\r\n5\r\nVA 2\r\n6 \r\n"),
	     S("ms mv 1\r\nx\r\nma mv\r\nmg mm v\r\nmg\r\nms mm\r\nmx foo\r\n"),
	     S("mn\r\n", "MN\r\n")),
	Case("meta: base64 keys (b), whether an item was read before (h), me",
	     # "bin\x00key \r\n" and "ctr" in base64: any bytes make a key
	     S("ms YmluAGtleSANCg== 2 b T0\r\nhi\r\nmg YmluAGtleSANCg== b v k h c\r\n"
	       "mg YmluAGtleSANCg== b k h\r\nget bin\r\n",
	       "HD\r\nVA 2 kYmluAGtleSANCg== b h0 c#0\r\nhi\r\nHD kYmluAGtleSANCg== b h1\r\nEND\r\n"),
	     S("ma Y3Ry b N0 J5 v k\r\nma Y3Ry b MD q\r\nmg Y3Ry b v\r\nmd Y3Ry b k q\r\n"
	       "md Y3Ry b k\r\n", "VA 1 kY3Ry b\r\n5\r\nVA 1\r\n4\r\nNF kY3Ry b\r\n"),
	     S("mg !!!! b v\r\nms !!!! 1 b\r\nx\r\nmd !!!! b\r\nma !!!! b\r\nme !!!! b\r\n",
	       "CLIENT_ERROR error decoding key\r\nCLIENT_ERROR error decoding key\r\n"
	       "CLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\n"
	       "CLIENT_ERROR bad command line format\r\n"),
	     S("set plain 3 100 3\r\nabc\r\nme plain\r\nmg plain h v\r\nmg plain h\r\n"
	       "me plain\r\nme YmluAGtleSANCg== b\r\nme none\r\nme\r\n",
	       "STORED\r\nME plain exp=-100 cas=#1 fetch=no\r\nVA 3 h0\r\nabc\r\nHD h1\r\n"
	       "ME plain exp=-100 cas=#1 fetch=yes\r\nME YmluAGtleSANCg== exp=-1 cas=#0 fetch=yes\r\n"
	       "EN\r\nCLIENT_ERROR bad command line format\r\n"),
	     S("set new 0 0 1\r\nx\r\nmg new h\r\nmg new h\r\nset new 0 0 1\r\ny\r\nmg new h\r\n",
	       "STORED\r\nHD h0\r\nHD h1\r\nSTORED\r\nHD h0\r\n"),
	     S("mg plain E5\r\nmd plain x\r\n",
	       "CLIENT_ERROR invalid flag\r\nCLIENT_ERROR invalid or duplicate flag\r\n")),
	Case("delete and flush_all",
	     S("set d1 0 0 1\r\na\r\ndelete d1\r\ndelete d1\r\nget d1\r\n",
	       "STORED\r\nDELETED\r\nNOT_FOUND\r\nEND\r\n"),
	     S("delete d1 0\r\ndelete d1 5\r\n"),
	     S("set d2 0 0 1\r\nb\r\nflush_all\r\nget d2\r\nadd d2 0 0 1\r\nc\r\nget d2\r\n",
	       "STORED\r\nOK\r\nEND\r\nSTORED\r\nVALUE d2 0 1\r\nc\r\nEND\r\n")),
	Case("cache_memlimit (memcached -m 64, xkv --memory 256M: both left at 256 MiB)",
	     S("cache_memlimit\r\ncache_memlimit abc\r\ncache_memlimit 7\r\n"
	       "cache_memlimit 2000000000\r\ncache_memlimit 64\r\ncache_memlimit 256 noreply\r\n",
	       "ERROR\r\nERROR\r\nMEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n"
	       "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\nOK\r\n")),
	Case("refresh_certs without TLS",
	     S("refresh_certs\r\nrefresh_certs noreply\r\n",
	       "Error TLS not enabled\r\nError TLS not enabled\r\n")),
	Case("flush_all with a delay: gone once it has passed, what is set after kept",
	     S("set fd 0 0 1\r\na\r\nflush_all 2\r\nget fd\r\n",
	       "STORED\r\nOK\r\nVALUE fd 0 1\r\na\r\nEND\r\n"),
	     S("get fd\r\nset fd 0 0 1\r\nb\r\nget fd\r\n",
	       "END\r\nSTORED\r\nVALUE fd 0 1\r\nb\r\nEND\r\n", sleep=3)),
	Case("stats groups",
	     S("stats reset\r\nstats detail dump\r\nstats detail off\r\nstats detail\r\n"
	       "stats foo\r\n",
	       "RESET\r\nEND\r\nOK\r\nCLIENT_ERROR usage: stats detail on|off|dump\r\nERROR\r\n")),
	Case("version, verbosity, stats",
	     S("version\r\nverbosity 1\r\nverbosity 0 noreply\r\nstats\r\n",
	       "VERSION <version>\r\nOK\r\nSTAT <required names>\r\nEND\r\n")),
]


def fields(cas_seen):
	f = {f"cas{i}": str(c) for i, c in enumerate(cas_seen)}
	f.update(past=str(now - 3600), future=str(now + MONTH + 3600))
	return f


def fill(text, cas_seen):
	f = fields(cas_seen)
	# a CAS the server never gave (an earlier step differed already): one no item has
	return re.sub(r"\{(\w+)\}", lambda m: f.get(m.group(1), "0"), text).encode("latin-1")


def normalize(reply, cas_seen):
	"""The reply as text with CAS values as #index (first seen first, appended to
	cas_seen), positive meta TTLs as t#ttl, VERSION and STAT blocks reduced."""
	def cas(value):
		if value not in cas_seen:
			cas_seen.append(value)
		return f"#{cas_seen.index(value)}"

	out, lines, i = [], reply.split(b"\r\n"), 0
	while i < len(lines):
		line = lines[i].decode("latin-1")
		words = line.split(" ")
		if words[0] == "VALUE" and len(words) >= 4:
			if len(words) == 5:
				words[4] = cas(words[4])
			out.append(" ".join(words))
			# the data block as is, whatever it holds
			n, data = int(words[3]), b""
			while len(data) < n and i + 1 < len(lines):
				i += 1
				data += (b"\r\n" if data else b"") + lines[i]
			out.append(data.decode("latin-1"))
		elif words[0] in ("HD", "VA", "EN", "NF", "NS", "EX", "MN"):
			flags = [(f"c{cas(w[1:])}" if re.fullmatch(r"c\d+", w) else
				  "t#ttl" if re.fullmatch(r"t\d+", w) else w) for w in words[1:]]
			out.append(" ".join([words[0]] + flags))
			if words[0] == "VA" and i + 1 < len(lines):
				n, data = int(words[1]), b""
				while len(data) < n and i + 1 < len(lines):
					i += 1
					data += (b"\r\n" if data else b"") + lines[i]
				out.append(data.decode("latin-1"))
		elif words[0] == "ME" and len(words) > 2:
			# la=, cls= and size= are the store's own (docs/MEMCACHED.md)
			fields = [(f"cas={cas(w[4:])}" if w.startswith("cas=") else w) for w in words[2:]
				  if not w.startswith(("la=", "cls=", "size="))]
			out.append(" ".join(words[:2] + fields))
		elif words[0] == "VERSION":
			out.append("VERSION <version>" if len(words) == 2 else line)
		elif words[0] == "STAT":
			names = set()
			while i < len(lines) and lines[i].startswith(b"STAT "):
				names.add(lines[i].split(b" ")[1].decode("latin-1"))
				i += 1
			missing = [n for n in REQUIRED_STATS if n not in names]
			out.append("STAT <required names>" if not missing else
				   "STAT <missing: " + " ".join(missing) + ">")
			continue
		else:
			out.append(line)
		i += 1
	return "\r\n".join(out)


def exchange(sock, step, cas_seen, timeout):
	"""Sends one step (and mn unless the server closes after it) and returns its raw
	reply, without MN, or with <timeout>/<closed> marking how it ended."""
	time.sleep(step.sleep)
	data = fill(step.send, cas_seen) + (b"" if step.closes else b"mn\r\n")
	if step.bytewise:
		for b in data:
			sock.sendall(bytes([b]))
			time.sleep(0.001)
	else:
		sock.sendall(data)
	# the step's own mn commands answer MN too; whole lines only (the last piece of a
	# split is one still coming)
	mns = data.split(b"\r\n").count(b"mn")
	reply, deadline = b"", time.monotonic() + timeout
	while step.closes or reply.split(b"\r\n")[:-1].count(b"MN") < mns:
		sock.settimeout(max(deadline - time.monotonic(), 0.001))
		try:
			got = sock.recv(1 << 20)
		except (socket.timeout, ConnectionError):
			return reply + b"<timeout>" if not step.closes else reply + b"<not closed>"
		if not got:
			return reply if step.closes else reply + b"<closed>"
		reply += got
	return reply[:-4]


def run(address, case, timeout):
	host, port = address.rsplit(":", 1)
	cas_seen, replies = [], []
	with socket.create_connection((host, int(port)), timeout=timeout) as sock:
		sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
		for step in case.steps:
			replies.append(normalize(exchange(sock, step, cas_seen, timeout), cas_seen))
	return replies


def show(text, limit=400):
	text = repr(text)
	return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def first_difference(a, b):
	i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
	return f"first difference at character {i}: {show(a[i:i + 60])} vs {show(b[i:i + 60])}"


def main():
	p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	p.add_argument("--reference", required=True)
	p.add_argument("--reference-large")
	p.add_argument("--server", required=True)
	p.add_argument("--server-large")
	p.add_argument("--only", default="")
	p.add_argument("--timeout", type=float, default=5)
	p.add_argument("--list", action="store_true")
	a = p.parse_args()
	failed = 0
	for case in CASES:
		if a.only not in case.name:
			continue
		if a.list:
			print(case.name)
			continue
		ref = a.reference_large if case.large else a.reference
		sut = (a.server_large or a.server) if case.large else a.server
		if ref is None:
			sys.exit(f"{case.name}: needs --reference-large (memcached -I 2m)")
		want, got = run(ref, case, a.timeout), run(sut, case, a.timeout)
		bad = []
		for n, (step, w, g) in enumerate(zip(case.steps, want, got)):
			where = f"step {n + 1}: {show(step.send, 200)}"
			if step.expect is not None and w != step.expect:
				bad.append(f"{where}\n    the reference (memcached) is not the spec:\n"
					   f"    spec:      {show(step.expect)}\n    memcached: {show(w)}")
			if w != g:
				bad.append(f"{where}\n    memcached:    {show(w)}\n"
					   f"    under test:   {show(g)}\n    {first_difference(w, g)}")
		print(f"{'ok  ' if not bad else 'FAIL'} {case.name}")
		for b in bad:
			print("  " + b)
		failed += bool(bad)
	if not a.list:
		print(f"{len([c for c in CASES if a.only in c.name]) - failed} cases equal, "
		      f"{failed} differ")
	sys.exit(1 if failed else 0)


if __name__ == "__main__":
	main()
