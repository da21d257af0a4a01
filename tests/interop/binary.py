#!/usr/bin/python3
"""memcached's binary protocol over TCP, side by side: each case below is a script of
binary requests, run against a real memcached (the reference) and the server under
test, on a connection of its own; the replies must be equal after normalizing what
legitimately differs: CAS values (each distinct one mapped to its first-seen index in
the case) and the version string. Where a step gives its expected replies too, the
reference must give them: the list below is the executable spec.

Each step's requests are followed by a NOOP and the replies read up to the NOOP's: that
bounds every step, quiet opcodes included. A step that makes the server close reads to
the end of the stream instead.

  binary.py --reference HOST:PORT --server HOST:PORT [--only SUBSTRING] [--list]

Exit 0: every case equal; 1: a case differed (both replies are printed)."""
import argparse
import socket
import struct
import sys

HDR = struct.Struct(">BBHBBHIIQ")  # magic opcode keylen extlen datatype status/vbucket body opaque cas
OPS = {
	"GET": 0x00, "SET": 0x01, "ADD": 0x02, "REPLACE": 0x03, "DELETE": 0x04, "INCR": 0x05,
	"DECR": 0x06, "QUIT": 0x07, "FLUSH": 0x08, "GETQ": 0x09, "NOOP": 0x0a, "VERSION": 0x0b,
	"GETK": 0x0c, "GETKQ": 0x0d, "APPEND": 0x0e, "PREPEND": 0x0f, "STAT": 0x10, "SETQ": 0x11,
	"ADDQ": 0x12, "REPLACEQ": 0x13, "DELETEQ": 0x14, "INCRQ": 0x15, "DECRQ": 0x16,
	"QUITQ": 0x17, "FLUSHQ": 0x18, "APPENDQ": 0x19, "PREPENDQ": 0x1a, "TOUCH": 0x1c,
	"GAT": 0x1d, "GATQ": 0x1e, "SASL_LIST": 0x20, "GATK": 0x23, "GATKQ": 0x24,
}
NAMES = {v: k for k, v in OPS.items()}
STATUS = {0: "OK", 1: "NOT_FOUND", 2: "EXISTS", 3: "TOO_LARGE", 4: "EINVAL", 5: "NOT_STORED",
	  6: "NON_NUMERIC", 0x81: "UNKNOWN", 0x82: "NO_MEMORY"}
MIB = 1 << 20
NO_VIVIFY = 0xffffffff


def req(op, key=b"", extras=b"", value=b"", cas=0, opaque=0, magic=0x80, key_len=None,
	body_len=None):
	"""One request; key_len and body_len, when given, are what the header claims."""
	op = OPS[op] if isinstance(op, str) else op
	key = key.encode() if isinstance(key, str) else key
	value = value.encode() if isinstance(value, str) else value
	kl = len(key) if key_len is None else key_len
	bl = len(extras) + len(key) + len(value) if body_len is None else body_len
	return HDR.pack(magic, op, kl, len(extras), 0, 0, bl, opaque, cas) + extras + key + value


def setx(op, key, value, flags=0, exptime=0, cas=0):
	return req(op, key, struct.pack(">II", flags, exptime), value, cas=cas)


def arith(op, key, delta, initial=0, exptime=0, cas=0):
	return req(op, key, struct.pack(">QQI", delta, initial, exptime), cas=cas)


def touch(op, key, exptime):
	return req(op, key, struct.pack(">I", exptime))


NOOP = req("NOOP")


class Step:
	"""send: request bytes, or a function of the CAS values seen so far (by index);
	expect: the normalized replies the reference must give, None: not written down;
	closes: the server closes after it; bytewise: sent one byte per send()."""

	def __init__(self, send, expect=None, closes=False, bytewise=False):
		self.send, self.expect, self.closes, self.bytewise = send, expect, closes, bytewise


class Case:
	def __init__(self, name, *steps):
		self.name, self.steps = name, steps


S = Step
CASES = [
	Case("get misses: GET and GETK answer, their quiet forms do not",
	     S(req("GET", "nokey") + req("GETK", "nokey") + req("GETQ", "nokey") +
	       req("GETKQ", "nokey"),
	       ["GET NOT_FOUND v='Not found'", "GETK NOT_FOUND k='nokey'"])),
	Case("set, then every get: flags 0, 1, 2^32-1, the CAS the set returned",
	     S(setx("SET", "f0", "a") + setx("SET", "f1", "b", flags=1) +
	       setx("SET", "fmax", "c", flags=0xffffffff),
	       ["SET OK cas=#0", "SET OK cas=#1", "SET OK cas=#2"]),
	     S(req("GET", "f0") + req("GETK", "f1") + req("GETQ", "fmax") + req("GETKQ", "f0"),
	       ["GET OK x=00000000 v='a' cas=#0", "GETK OK x=00000001 k='f1' v='b' cas=#1",
		"GETQ OK x=ffffffff v='c' cas=#2", "GETKQ OK x=00000000 k='f0' v='a' cas=#0"])),
	Case("a multi-get as clients send it: GETKQ each key, then a NOOP",
	     S(b"".join(setx("SETQ", f"m{i}", f"value{i}", flags=i) for i in range(20))),
	     S(b"".join(req("GETKQ", f"m{i}") for i in range(0, 24, 3)))),
	Case("add, replace, append, prepend",
	     S(setx("ADD", "ad", "a", flags=1) + setx("ADD", "ad", "b"),
	       ["ADD OK cas=#0", "ADD EXISTS v='Data exists for key.'"]),
	     S(setx("REPLACE", "rp", "a") + setx("SET", "rp", "a") + setx("REPLACE", "rp", "bb", 4),
	       ["REPLACE NOT_FOUND v='Not found'", "SET OK cas=#1", "REPLACE OK cas=#2"]),
	     S(req("APPEND", "ap", value="x") + req("PREPEND", "ap", value="x") +
	       setx("SET", "ap", "mid", flags=9) + req("APPEND", "ap", value="-end") +
	       req("PREPEND", "ap", value="start-") + req("GET", "ap"),
	       ["APPEND NOT_STORED v='Not stored.'", "PREPEND NOT_STORED v='Not stored.'",
		"SET OK cas=#3", "APPEND OK cas=#4", "PREPEND OK cas=#5",
		"GET OK x=00000009 v='start-mid-end' cas=#5"])),
	Case("cas: a set with a CAS is a compare-and-swap, add and replace too",
	     S(setx("SET", "c1", "v1"), ["SET OK cas=#0"]),
	     S(lambda cas: setx("SET", "c1", "v2", cas=cas[0]) + setx("SET", "c1", "v3", cas=cas[0]),
	       ["SET OK cas=#1", "SET EXISTS v='Data exists for key.'"]),
	     S(lambda cas: setx("SET", "c-none", "x", cas=cas[1]) + setx("ADD", "c1", "v4", cas=cas[1]),
	       ["SET NOT_FOUND v='Not found'", "ADD OK cas=#2"]),
	     S(lambda cas: setx("REPLACE", "c1", "v5", cas=cas[1]) +
	       req("APPEND", "c1", value="!", cas=cas[1]) + req("APPEND", "c1", value="!", cas=cas[2]),
	       ["REPLACE EXISTS v='Data exists for key.'", "APPEND EXISTS v='Data exists for key.'",
		"APPEND OK cas=#3"]),
	     S(lambda cas: req("DELETE", "c1", cas=cas[2]) + req("DELETE", "c1", cas=cas[3]) +
	       req("DELETE", "c1"),
	       ["DELETE EXISTS v='Data exists for key.'", "DELETE OK", "DELETE NOT_FOUND v='Not found'"])),
	Case("incr, decr: made from the initial value, a miss left alone at 2^32-1, wrapping, floors",
	     S(arith("INCR", "n", 1, exptime=NO_VIVIFY) + arith("INCR", "n", 1, initial=10) +
	       arith("INCR", "n", 5) + arith("DECR", "n", 100),
	       ["INCR NOT_FOUND v='Not found'", "INCR OK v=10 cas=#0", "INCR OK v=15 cas=#1",
		"DECR OK v=0 cas=#2"]),
	     S(setx("SET", "big", "18446744073709551615") + arith("INCR", "big", 2) + req("GET", "big")),
	     S(setx("SET", "txt", "abc") + arith("INCR", "txt", 1) + arith("DECR", "txt", 1),
	       ["SET OK cas=#5", "INCR NON_NUMERIC v='Non-numeric server-side value for incr or decr'",
		"DECR NON_NUMERIC v='Non-numeric server-side value for incr or decr'"]),
	     S(setx("SET", "pad", "100") + arith("DECR", "pad", 91) + req("GET", "pad")),
	     S(lambda cas: arith("INCR", "n", 1, cas=cas[0]) + arith("INCRQ", "n", 1) +
	       arith("DECRQ", "n", 1) + req("GET", "n"))),
	Case("quiet writes: nothing on success, the error when there is one",
	     S(setx("SETQ", "q", "1") + setx("ADDQ", "q", "2") + setx("REPLACEQ", "q-none", "3") +
	       req("APPENDQ", "q", value="4") + req("PREPENDQ", "q-none", value="5") +
	       req("DELETEQ", "q-none") + req("GET", "q"),
	       ["ADDQ EXISTS v='Data exists for key.'", "REPLACEQ NOT_FOUND v='Not found'",
		"PREPENDQ NOT_STORED v='Not stored.'", "DELETEQ NOT_FOUND v='Not found'",
		"GET OK x=00000000 v='14' cas=#0"]),
	     S(req("DELETEQ", "q") + req("GET", "q"), ["GET NOT_FOUND v='Not found'"])),
	Case("touch, gat, gatk and their quiet forms",
	     S(touch("TOUCH", "t", 100) + touch("GAT", "t", 100) + touch("GATK", "t", 100) +
	       touch("GATQ", "t", 100) + touch("GATKQ", "t", 100),
	       ["TOUCH NOT_FOUND v='Not found'", "GAT NOT_FOUND v='Not found'",
		"GATK NOT_FOUND k='t'"]),
	     S(setx("SET", "t", "tv", flags=3) + touch("TOUCH", "t", 100) + touch("GAT", "t", 0) +
	       touch("GATK", "t", 100) + touch("GATQ", "t", 100) + touch("GATKQ", "t", 100),
	       ["SET OK cas=#0", "TOUCH OK x=00000003 cas=#0", "GAT OK x=00000003 v='tv' cas=#0",
		"GATK OK x=00000003 k='t' v='tv' cas=#0", "GATQ OK x=00000003 v='tv' cas=#0",
		"GATKQ OK x=00000003 k='t' v='tv' cas=#0"])),
	Case("flush, version, noop",
	     S(setx("SETQ", "fl", "x") + req("FLUSH") + req("GET", "fl") + setx("SETQ", "fl", "y") +
	       req("FLUSHQ") + req("GETQ", "fl") + req("VERSION"),
	       ["FLUSH OK", "GET NOT_FOUND v='Not found'", "VERSION OK v=VERSION"])),
	Case("stats: a reply per counter then an empty one; a group xkv lacks is Not found",
	     S(req("STAT", "reset"), ["STAT OK"]),
	     S(req("STAT", "sizes"), ["STAT OK k='sizes_status' v='disabled'", "STAT OK"]),
	     S(req("STAT", "nonsense"), ["STAT NOT_FOUND v='Not found'"]),
	     S(req("STAT", "detail off"), ["STAT OK"])),
	Case("an opcode memcached does not know, SASL's too: Unknown command, its body skipped",
	     S(req(0x30, value="skipped") + req(0x30) + req("SASL_LIST") + req("GET", "nokey"),
	       ["0x30 UNKNOWN v='Unknown command'", "0x30 UNKNOWN v='Unknown command'",
		"SASL_LIST UNKNOWN v='Unknown command'", "GET NOT_FOUND v='Not found'"])),
	Case("a request cut into single bytes is read whole",
	     S(setx("SET", "slow", "v" * 100) + req("GETK", "slow"), bytewise=True)),
	Case("a value over the limit: Too large, its bytes skipped, the old value gone",
	     S(setx("SET", "tl", "old") + setx("SET", "tl", b"x" * (MIB + 1)) + req("GET", "tl"),
	       ["SET OK cas=#0", "SET TOO_LARGE v='Too large.'", "GET NOT_FOUND v='Not found'"])),
	Case("a key over 250 bytes: Invalid arguments, then the connection closes",
	     S(req("GET", "k" * 251) + req("GET", "after"), ["GET EINVAL v='Invalid arguments'"],
	       closes=True)),
	Case("a get with extras: Invalid arguments, then the connection closes",
	     S(req("GET", "k", extras=b"1234") + req("GET", "after"),
	       ["GET EINVAL v='Invalid arguments'"], closes=True)),
	Case("lengths that lie (key past the body): Unknown command, then the connection closes",
	     S(req("GET", "key", body_len=2) + b"y" + req("GET", "after"),
	       ["GET UNKNOWN v='Unknown command'"], closes=True)),
	Case("a byte that starts no request: the connection closes, nothing said",
	     S(req("GET", "nokey") + req("GET", "x", magic=0x81), ["GET NOT_FOUND v='Not found'"],
	       closes=True)),
	Case("quit answers and closes; quitq only closes",
	     S(req("QUIT"), ["QUIT OK"], closes=True)),
	Case("quitq",
	     S(req("QUITQ"), [], closes=True)),
]


def read_exactly(sock, n):
	data = b""
	while len(data) < n:
		chunk = sock.recv(n - len(data))
		if not chunk:
			return None
		data += chunk
	return data


def replies(sock, until_close):
	"""The replies up to the NOOP's (excluded), or to the end of the stream."""
	out = []
	while True:
		hdr = read_exactly(sock, HDR.size)
		if hdr is None:
			if until_close:
				return out
			raise EOFError("the server closed before the NOOP's reply")
		magic, op, kl, el, _, status, body, opaque, cas = HDR.unpack(hdr)
		data = read_exactly(sock, body) if body else b""
		if data is None:
			raise EOFError("the server closed inside a reply")
		if op == OPS["NOOP"] and not until_close:
			return out
		out.append((magic, op, status, data[:el], data[el:el + kl], data[el + kl:], cas, opaque))


def normalize(r, cas_seen):
	magic, op, status, extras, key, value, cas, opaque = r
	name = NAMES.get(op, f"0x{op:02x}")
	text = f"{name} {STATUS.get(status, hex(status))}"
	if magic != 0x81 or opaque:
		text += f" magic={magic:#x} opaque={opaque}"
	if extras:
		text += f" x={extras.hex()}"
	if key:
		text += f" k={key.decode(errors='replace')!r}"
	if op == OPS["VERSION"] and status == 0:
		text += " v=VERSION"
	elif op in (OPS["INCR"], OPS["DECR"]) and status == 0 and len(value) == 8:
		text += f" v={struct.unpack('>Q', value)[0]}"
	elif value:
		shown = value if len(value) <= 64 else value[:32] + b"...%d bytes" % len(value)
		text += f" v={shown.decode(errors='replace')!r}"
	if cas:
		if cas not in cas_seen:
			cas_seen.append(cas)
		text += f" cas=#{cas_seen.index(cas)}"
	return text


def run(address, case):
	cas_seen, out = [], []
	with socket.create_connection(address, timeout=10) as sock:
		for step in case.steps:
			send = step.send([c for c in cas_seen]) if callable(step.send) else step.send
			if not step.closes:
				send += NOOP
			if step.bytewise:
				for i in range(len(send)):
					sock.sendall(send[i:i + 1])
			else:
				sock.sendall(send)
			got = [normalize(r, cas_seen) for r in replies(sock, step.closes)]
			out.append(got)
	return out


def address(text):
	host, port = text.rsplit(":", 1)
	return host, int(port)


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
	ap.add_argument("--reference", type=address)
	ap.add_argument("--server", type=address)
	ap.add_argument("--only", default="")
	ap.add_argument("--list", action="store_true")
	args = ap.parse_args()
	cases = [c for c in CASES if args.only in c.name]
	if args.list:
		for c in cases:
			print(c.name)
		return 0
	failed = 0
	for case in cases:
		ref = run(args.reference, case)
		for i, (step, got) in enumerate(zip(case.steps, ref)):
			if step.expect is not None and got != step.expect:
				print(f"SPEC {case.name}: step {i}: the reference gave\n  {got}\n"
				      f"not what the case writes down\n  {step.expect}")
				failed += 1
		srv = run(args.server, case)
		if srv != ref:
			print(f"DIFF {case.name}:")
			for i, (a, b) in enumerate(zip(ref, srv)):
				if a != b:
					print(f"  step {i}: reference {a}\n          server    {b}")
			failed += 1
	print(f"binary protocol: {len(cases) - failed} of {len(cases)} cases equal")
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main())
