#!/usr/bin/python3
"""memcached clients for the soak (tests/soak/soak.sh), all at once for SECONDS:

- tcp0, tcp1: pymemcache's Client, text protocol: set, get, gets + cas, delete;
- meta0, meta1: the meta commands (ms, mg, md) on a socket (pymemcache 3.5 has none);
- udp: memcached's UDP frame, ASCII get, set and delete; a reply over several
  datagrams is put together by its sequence numbers;
- bad: malformed datagrams to the same UDP port, a few a second (kinds below).

Each client writes keys of its own, one request at a time, so it knows what each key
may hold: a read that returns anything else is wrong. A write whose outcome is unknown
(no reply in time) leaves both the old and the new value possible until a read says
which; one answered SERVER_ERROR had no effect (docs/MEMCACHED.md: a full hand-off ring
or a contended slot writes nothing), and a later read checks that too.

  mc_load.py fill HOST PORT             the keys' first values, over TCP; exit 0 or 1
  mc_load.py run HOST PORT SECONDS [--quiet FROM-TO] [--trace FILE]
                                        prints one JSON object: per client, ops, wrong
                                        (with the first few), timeouts, server_errors,
                                        longest wait for an answer; for bad, what was
                                        sent and what came back. --quiet: no malformed
                                        datagram between FROM and TO seconds (the
                                        soak's stopped worker: the kernel may drop what
                                        reaches it, and the counts would not add up).
                                        --trace: the last operations of each client.
Values are 0 B to 300 KB over TCP and 0 to 1200 B over UDP (a request is one datagram).
"""
import collections
import json
import random
import socket
import struct
import sys
import threading
import time

from pymemcache.client.base import Client
from pymemcache.exceptions import (MemcacheError, MemcacheServerError,
				   MemcacheUnexpectedCloseError)

KEYS = 40  # per client
UDP_TIMEOUT = 0.25  # a datagram lost (a stopped worker) is asked again
GIVE_UP = 10.0  # an operation unanswered this long is a stuck server
# two connections of each kind over TCP: the kernel spreads them over the workers, and
# a worker whose only traffic is TCP is one the soak must see go on (roles, windows)
CLIENTS = ("tcp0", "tcp1", "meta0", "meta1", "udp")
TRACE = 20000  # operations of each client kept for --trace
TRACES = {}
WRONG = []  # for each wrong read, the client's operations before it


def key(client, i):
	return f"soak-{client}-{i:03d}"


def value(client, i, version, size):
	"""Unique per write: its key and version, then filler."""
	head = f"{client}{i}v{version}:".encode()
	if size <= len(head):
		return head[:size] if size else b""
	return head + bytes((version * 7 + j) % 251 for j in range(size - len(head)))


def tcp_size(rng):
	r = rng.random()
	if r < 0.05:
		return 0
	if r < 0.95:
		return rng.randrange(1, 4096)
	return rng.randrange(4096, 300 * 1024)


def udp_size(rng):
	return 0 if rng.random() < 0.05 else rng.randrange(1, 1200)


def first_values(client):
	"""What fill writes: key i of client holds version 0 of size i * 37 (0 for i = 0)."""
	return {key(client, i): value(client, i, 0, i * 37) for i in range(KEYS)}


class Stats:
	def __init__(self):
		self.ops = 0
		self.wrong = 0
		self.wrong_first = []
		self.timeouts = 0
		self.server_errors = 0
		self.server_error_texts = {}
		self.longest_s = 0.0
		self.last_ok = 0.0

	def server_error(self, text):
		self.server_errors += 1
		text = str(text)[:60]
		self.server_error_texts[text] = self.server_error_texts.get(text, 0) + 1

	def bad(self, what):
		self.wrong += 1
		if len(self.wrong_first) < 5:
			self.wrong_first.append(what)

	def done(self, started):
		self.ops += 1
		self.longest_s = max(self.longest_s, time.monotonic() - started)
		self.last_ok = time.monotonic()

	def json(self, t0):
		return {"ops": self.ops, "wrong": self.wrong, "wrong_first": self.wrong_first,
			"timeouts": self.timeouts, "server_errors": self.server_errors,
			"server_error_texts": self.server_error_texts,
			"longest_wait_s": round(self.longest_s, 3),
			"last_answer_s": round(self.last_ok - t0, 3) if self.last_ok else None}


class Model:
	"""What each key may hold: a set of values, None for absent."""

	def __init__(self, client):
		self.may = {k: {v} for k, v in first_values(client).items()}
		self.t0 = time.monotonic()
		self.past = {k: collections.deque(maxlen=6) for k in self.may}
		self.trace = collections.deque(maxlen=TRACE)
		TRACES[client] = self.trace

	def note(self, k, what):
		"""The key's last operations, for a wrong read to show, and the client's."""
		line = f"{time.monotonic() - self.t0:.3f} {what}"
		self.past[k].append(line)
		self.trace.append(f"{line} {k}")

	def check(self, st, k, got):
		if got not in self.may[k]:
			may = [preview(v) for v in self.may[k]]
			before = list(self.past[k])
			st.bad(f"{k}: read {preview(got)}, may hold {may}; before: {before}")
			# what the client did just before, whatever the key, for --trace
			WRONG.append(f"{k}: read {preview(got)}")
			WRONG.extend("  " + line for line in list(self.trace)[-60:])
		self.may[k] = {got}

	def known(self, k, v):
		self.may[k] = {v}

	def unknown(self, k, v):
		self.may[k].add(v)


def preview(v):
	return None if v is None else f"{len(v)}B:{v[:24]!r}"


def steps(rng, model, name, until):
	"""A client's draws until the end: key index, key, op draw, the outcomes the model
	allows before the op, and its start."""
	while time.monotonic() < until:
		i = rng.randrange(KEYS)
		k = key(name, i)
		yield i, k, rng.random(), set(model.may[k]), time.monotonic()


# -- tcp: pymemcache ------------------------------------------------------------------

def run_tcp(host, port, until, st, seed, name):
	rng = random.Random(seed)
	model = Model(name)
	c = Client((host, port), connect_timeout=2, timeout=GIVE_UP, default_noreply=False)
	versions = [0] * KEYS
	for i, k, op, before, started in steps(rng, model, name, until):
		try:
			if op < 0.45:
				got = c.get(k)
				model.check(st, k, got)
				model.note(k, f"get -> {preview(got)}")
			elif op < 0.85:
				versions[i] += 1
				v = value(name, i, versions[i], tcp_size(rng))
				model.unknown(k, v)
				model.note(k, f"set {preview(v)} ...")
				if c.set(k, v) is not True:
					st.bad(f"{k}: set not STORED")
				model.known(k, v)
			elif op < 0.93:
				got, cas = c.gets(k)
				model.check(st, k, got)
				model.note(k, f"gets -> {preview(got)}")
				if got is not None:
					before = {got}
					versions[i] += 1
					v = value(name, i, versions[i], tcp_size(rng))
					model.unknown(k, v)
					model.note(k, f"cas {preview(v)} ...")
					# nobody else writes the key: the CAS just read matches
					if c.cas(k, v, cas) is not True:
						st.bad(f"{k}: cas with the CAS just read refused")
					model.known(k, v)
			else:
				model.unknown(k, None)
				model.note(k, "delete ...")
				existed = c.delete(k)
				if existed and before == {None}:
					st.bad(f"{k}: delete found a value that was not there")
				if not existed and None not in before:
					st.bad(f"{k}: delete found nothing where a value must be")
				model.known(k, None)
			st.done(started)
		except MemcacheServerError as e:
			# nothing written: the key holds what it may have held before
			st.server_error(e)
			model.may[k] = before
			model.note(k, f"... {e!r}")
		except (socket.timeout, MemcacheUnexpectedCloseError, OSError) as e:
			st.timeouts += 1
			model.note(k, f"... {e!r}")
			c.close()
		except MemcacheError as e:
			st.bad(f"{k}: {e!r}")
	c.close()


# -- meta: ms, mg, md on a socket -------------------------------------------------------

class Lines:
	def __init__(self, host, port):
		self.s = socket.create_connection((host, port), timeout=GIVE_UP)
		self.buf = b""

	def line(self):
		while b"\r\n" not in self.buf:
			more = self.s.recv(65536)
			if not more:
				raise MemcacheUnexpectedCloseError()
			self.buf += more
		line, self.buf = self.buf.split(b"\r\n", 1)
		return line

	def exactly(self, n):
		while len(self.buf) < n + 2:
			more = self.s.recv(max(65536, n + 2 - len(self.buf)))
			if not more:
				raise MemcacheUnexpectedCloseError()
			self.buf += more
		data, self.buf = self.buf[:n], self.buf[n + 2:]
		return data

	def close(self):
		self.s.close()


class Refused(Exception):
	"""A reply other than the command's own: SERVER_ERROR (no effect) or worse."""


def run_meta(host, port, until, st, seed, name):
	rng = random.Random(seed)
	model = Model(name)
	versions = [0] * KEYS
	conn = None
	for i, k, op, before, started in steps(rng, model, name, until):
		try:
			if conn is None:
				conn = Lines(host, port)
			if op < 0.5:
				conn.s.sendall(f"mg {k} s v\r\n".encode())
				reply = conn.line()
				if reply == b"EN":
					got = None
				elif reply.startswith(b"VA "):
					n = int(reply.split()[1])
					got = conn.exactly(n)
					if reply.split()[2:] != [b"s" + str(n).encode()]:
						st.bad(f"{k}: mg answered {reply!r}")
				else:
					raise Refused(reply)
				model.check(st, k, got)
				model.note(k, f"mg -> {preview(got)}")
			elif op < 0.75:  # a quarter md: a delete refused must say so
				versions[i] += 1
				v = value(name, i, versions[i], tcp_size(rng))
				model.unknown(k, v)
				conn.s.sendall(f"ms {k} {len(v)} T0\r\n".encode() + v + b"\r\n")
				reply = conn.line()
				model.note(k, f"ms {preview(v)} -> {reply!r}")
				if reply != b"HD":
					raise Refused(reply)
				model.known(k, v)
			else:
				model.unknown(k, None)
				conn.s.sendall(f"md {k}\r\n".encode())
				reply = conn.line()
				model.note(k, f"md -> {reply!r}")
				if reply not in (b"HD", b"NF"):
					raise Refused(reply)
				if reply == b"NF" and None not in before:
					st.bad(f"{k}: md found nothing where a value must be")
				if reply == b"HD" and before == {None}:
					st.bad(f"{k}: md deleted a value that was not there")
				model.known(k, None)
			st.done(started)
		except Refused as e:
			reply = e.args[0]
			if not reply.startswith(b"SERVER_ERROR"):
				st.bad(f"{k}: answered {reply!r}")
			st.server_error(reply)
			model.may[k] = before
		except (socket.timeout, MemcacheUnexpectedCloseError, OSError) as e:
			st.timeouts += 1
			model.note(k, f"op {op:.2f}: {e!r}")
			if conn:
				conn.close()
			conn = None
	if conn:
		conn.close()


# -- udp: memcached's frame ---------------------------------------------------------------

def frame(rid, seq=0, total=1):
	return struct.pack(">HHHH", rid, seq, total, 0)


class Udp:
	def __init__(self, host, port):
		self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		self.s.connect((host, port))
		self.rid = 0

	def ask(self, request):
		"""The whole reply to request, asked again each UDP_TIMEOUT; None after GIVE_UP."""
		started = time.monotonic()
		while time.monotonic() - started < GIVE_UP:
			self.rid = (self.rid + 1) & 0xFFFF
			self.s.sendall(frame(self.rid) + request)
			parts, total = {}, None
			deadline = time.monotonic() + UDP_TIMEOUT
			while time.monotonic() < deadline:
				self.s.settimeout(max(0.001, deadline - time.monotonic()))
				try:
					d = self.s.recv(2048)
				except socket.timeout:
					break
				rid, seq, n, _ = struct.unpack(">HHHH", d[:8])
				if rid != self.rid:
					continue  # an answer to an earlier try
				parts[seq], total = d[8:], n
				if len(parts) == total:
					whole = b"".join(parts[j] for j in range(total))
					return whole, time.monotonic() - started
		return None, GIVE_UP


def run_udp(host, port, until, st, seed, name):
	rng = random.Random(seed)
	model = Model(name)
	versions = [0] * KEYS
	u = Udp(host, port)

	def answered(k, reply, before):
		"""Whether a write's reply says what it did: none (a timeout), or refused, no."""
		if reply is None:
			st.timeouts += 1
			return False
		if reply.startswith(b"SERVER_ERROR"):
			model.may[k] = before
			st.server_error(reply)
			return False
		return True

	for i, k, op, before, started in steps(rng, model, name, until):
		if op < 0.5:
			reply, waited = u.ask(f"get {k}\r\n".encode())
			if reply is None:
				st.timeouts += 1
				continue
			if reply == b"END\r\n":
				got = None
			else:
				head, rest = reply.split(b"\r\n", 1)
				n = int(head.split()[3])
				got = rest[:n]
				if head.split()[1] != k.encode() or rest[n:] != b"\r\nEND\r\n":
					st.bad(f"{k}: get answered {preview(reply)}")
			model.check(st, k, got)
			model.note(k, f"get -> {preview(got)}")
		elif op < 0.9:
			versions[i] += 1
			v = value(name, i, versions[i], udp_size(rng))
			model.unknown(k, v)
			reply, waited = u.ask(f"set {k} 0 0 {len(v)}\r\n".encode() + v + b"\r\n")
			model.note(k, f"set {preview(v)} -> {reply!r}")
			if not answered(k, reply, before):
				continue
			if reply != b"STORED\r\n":
				st.bad(f"{k}: set answered {reply!r}")
			model.known(k, v)
		else:
			model.unknown(k, None)
			reply, waited = u.ask(f"delete {k}\r\n".encode())
			model.note(k, f"delete -> {reply!r}")
			if not answered(k, reply, before):
				continue
			# NOT_FOUND after a lost reply is the first try's doing: DELETED is checked
			if reply == b"DELETED\r\n" and before == {None}:
				st.bad(f"{k}: delete found a value that was not there")
			elif reply not in (b"DELETED\r\n", b"NOT_FOUND\r\n"):
				st.bad(f"{k}: delete answered {reply!r}")
			model.known(k, None)
		st.done(started)
		st.longest_s = max(st.longest_s, waited)


# -- bad: malformed datagrams ---------------------------------------------------------------
# kind: (the datagram, what the server must do: "drop" counted without a reply, or the
# reply's first word; whether XDP steers it to a worker, where the kernel may drop it)
BAD = {
	# dropped by XDP, counted under a protocol reason (docs/PROTOCOL.md)
	"no-line-end": (frame(1) + b"get soak-bad", "drop", False),  # truncated
	"short-frame": (b"\x00\x01\x00", "drop", False),  # truncated
	"frame-only": (frame(1), "drop", False),  # truncated
	"frame-seq-1":  # bad_fragment
		(frame(1, seq=1, total=2) + b"get soak-bad\r\n", "drop", False),
	"reserved":  # bad_flags
		(struct.pack(">HHHH", 1, 0, 1, 7) + b"get soak-bad\r\n", "drop", False),
	"garbage": (frame(1) + bytes(range(200, 256)) * 3, "drop", False),  # bad_op
	"binary-cut": (frame(1) + b"\x80\x00\x00\x05" + bytes(8), "drop", False),  # truncated
	"binary-incr":  # bad_op
		(frame(1) + bytes([0x80, 0x05, 0, 4]) + bytes(4) + struct.pack(">I", 4) + bytes(12)
		 + b"abcd", "drop", False),
	"unknown-command": (frame(1) + b"frobnicate soak-bad\r\n", "drop", False),  # bad_op
	"set-no-data": (frame(1) + b"set soak-bad 0 0 abc\r\n", "drop", False),  # bad_length
	"long-key": (frame(1) + b"get " + b"k" * 251 + b"\r\n", "drop", False),  # bad_key_len
	# steered, then dropped by the worker (mc_dropped) or answered an error (mc_errors)
	"get-no-line-end": (frame(1) + b"get soak-bad more", "drop", True),
	"short-data": (frame(1) + b"set soak-bad 0 0 10\r\nabc\r\n", "CLIENT_ERROR", True),
	"bad-flags": (frame(1) + b"set soak-bad abc 0 1\r\nx\r\n", "CLIENT_ERROR", True),
	"delete-arg": (frame(1) + b"delete soak-bad 5\r\n", "CLIENT_ERROR", True),
	"huge-bytes": (frame(1) + b"set soak-bad 0 0 2000000\r\nx\r\n", "SERVER_ERROR", True),
}


def run_bad(host, port, until, quiet, out, t0):
	"""A malformed datagram every 0.2 s; a reply is matched to its datagram by the
	frame's request id, so one that comes late is still its own."""
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.connect((host, port))
	sent = {k: 0 for k in BAD}
	want = {}  # request id: (kind, the reply's first word or "drop")
	replies, unexpected = {}, []
	kinds = list(BAD)
	n = 0

	def take(wait):
		s.settimeout(wait)
		try:
			got = s.recv(2048)
		except socket.timeout:
			return False
		rid = struct.unpack(">H", got[:2])[0] if len(got) >= 8 else None
		word = got[8:].split(b" ", 1)[0].split(b"\r\n", 1)[0].decode("ascii", "replace")
		replies[word] = replies.get(word, 0) + 1
		kind, w = want.pop(rid, (None, None))
		if kind is None or w != word:
			unexpected.append(f"{kind or 'request id %s' % rid}: {got[8:60]!r}")
		return True

	while time.monotonic() < until - 1:
		t = time.monotonic() - t0
		if quiet and quiet[0] <= t <= quiet[1]:
			time.sleep(0.1)
			continue
		kind = kinds[n % len(kinds)]
		n += 1
		rid = 1000 + n  # frame(1) in the table: this datagram's own id instead
		dgram, w, _ = BAD[kind]
		if dgram[:8] == frame(1):
			dgram = frame(rid) + dgram[8:]
		s.send(dgram)
		sent[kind] += 1
		if w != "drop":
			want[rid] = (kind, w)
		deadline = time.monotonic() + 0.2
		while time.monotonic() < deadline and take(max(0.001, deadline - time.monotonic())):
			pass
	deadline = time.monotonic() + 3  # the last replies, however late
	while want and time.monotonic() < deadline and take(0.2):
		pass
	out["bad"] = {"sent": sum(sent.values()), "by_kind": sent,
		      "to_worker": {k: v[2] for k, v in BAD.items()},
		      "want": {k: v[1] for k, v in BAD.items()},
		      "answered": sum(replies.values()), "replies": replies,
		      "want_answered": sum(c for k, c in sent.items() if BAD[k][1] != "drop"),
		      "unanswered": len(want),
		      "unanswered_first": [k for k, _ in want.values()][:5],
		      "unexpected": unexpected[:10], "unexpected_count": len(unexpected)}


def fill(host, port):
	c = Client((host, port), connect_timeout=2, timeout=GIVE_UP, default_noreply=False)
	for client in CLIENTS:
		failed = c.set_many(first_values(client))
		if failed:
			print(f"fill: not stored: {failed}", file=sys.stderr)
			return 1
	c.close()
	return 0


def main():
	if len(sys.argv) >= 4 and sys.argv[1] == "fill":
		return fill(sys.argv[2], int(sys.argv[3]))
	args = sys.argv[5:]
	opts = dict(zip(args[::2], args[1::2]))
	if len(sys.argv) < 5 or sys.argv[1] != "run" or len(args) % 2 or \
			set(opts) - {"--quiet", "--trace"}:
		print(__doc__, file=sys.stderr)
		return 2
	host, port, seconds = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
	quiet = tuple(float(x) for x in opts["--quiet"].split("-")) if "--quiet" in opts else None
	t0 = time.monotonic()
	until = t0 + seconds
	stats = {c: Stats() for c in CLIENTS}
	out = {}
	runs = {"tcp": run_tcp, "meta": run_meta, "udp": run_udp}
	threads = [threading.Thread(target=runs[c.rstrip("01")],
				    args=(host, port, until, stats[c], n + 1, c))
		   for n, c in enumerate(CLIENTS)]
	threads.append(threading.Thread(target=run_bad, args=(host, port, until, quiet, out, t0)))
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	out.update({c: stats[c].json(t0) for c in CLIENTS})
	out["seconds"] = round(time.monotonic() - t0, 3)
	print(json.dumps(out))
	if "--trace" in opts:
		with open(opts["--trace"], "w") as f:
			for line in WRONG:
				print("wrong", line, file=f)
			for c in CLIENTS:
				for line in TRACES.get(c, ()):
					print(c, line, file=f)
	return 0


if __name__ == "__main__":
	sys.exit(main())
