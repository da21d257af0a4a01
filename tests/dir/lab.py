#!/usr/bin/python3
"""The client of the directory lab (tests/dir/lab.sh): xkv's version 3 (docs/PROTOCOL.md)
at the wire's level, so that it sees the extension the servers send back.

  lab.py client HOME HOT COLD  through the directory to HOME (server 0's address); each
                               server i holds HOT and COLD as "si", and the directory
                               replicates HOT on server 1 alone
  lab.py forge SERVER KEY      a GET of KEY to SERVER marked as a server marks a stray it
                               sends home (Sec. 6.6): the directory must drop it"""
import socket
import struct
import sys

MAGIC, PORT, GET, PUT, REPLY, F_DIR, STEERED, FORWARDED = 0x584B, 7411, 1, 2, 0x80, 1, 1, 8
HDR = struct.Struct("!HBBBBHIIIIQQ")  # include/xkv/proto.h, 40 bytes
EXT = struct.Struct("!QQIIBB6x")  # struct xkv_dir_ext, include/xkv/proto.h, 32 bytes


def encode(op, request_id, key=b"", value=b"", ext=None, status=0):
	version, flags = (3, F_DIR) if ext is not None else (2, 0)
	hdr = HDR.pack(MAGIC, version, op, status, flags, len(key), request_id, len(value), 0,
		       len(value), 0, 0)
	return hdr + (EXT.pack(*ext) if ext is not None else b"") + key + value


def decode(data):
	f = HDR.unpack_from(data)
	op, flags, key_len, request_id, value_len = f[2], f[4], f[5], f[6], f[7]
	ext = EXT.unpack_from(data, HDR.size) if flags & F_DIR else None
	body = data[HDR.size + (EXT.size if ext else 0):]
	return op, request_id, ext, body[:key_len], body[key_len:key_len + value_len]


def fail(why):
	sys.exit(f"FAIL: {why}")


def client(home, hot, cold):
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.connect((home, PORT))  # a reply from anywhere else never reaches this socket
	s.settimeout(2)
	zero = (0, 0, 0, 0, 0, 0)
	rid = 0

	def ask(op, key, ext=zero, value=b""):
		nonlocal rid
		rid += 1
		s.send(encode(op, rid, key.encode(), value, ext))
		while True:
			rop, rrid, rext, _, rvalue = decode(s.recv(2048))
			if rrid == rid and rop == op | REPLY:
				return rvalue, rext

	value, _ = ask(GET, cold)
	if value != b"s0":
		fail(f"a key the directory does not hold went to {value!r}, not its home s0")
	value, rext = ask(GET, hot)
	if value != b"s1" or not rext or rext[5] != STEERED:
		fail(f"a replicated read went to {value!r}, not its replica set's s1 ({rext})")
	_, rext = ask(PUT, hot, value=b"new")
	if rext[1] != 6 or rext[5] != STEERED:
		fail(f"the write's reply does not vouch for its version 6: {rext}")
	for _ in range(4):
		value, rext = ask(GET, hot)
		if value != b"new" or rext[1] != 6:
			fail(f"a read after the write's reply: {value!r}, version {rext[1]}")
	rid += 1
	s.send(encode(GET, rid, hot.encode()))  # version 2: no extension
	try:
		s.recv(2048)
		fail("a version 2 request for a replicated key was answered")
	except socket.timeout:
		pass
	print(f"lab: cold key to its home; replicated read to its replica set; the write "
	      f"at version 6, and every read after it returns it; every reply from {home}; "
	      f"version 2 dropped")


def forge(server, key):
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.connect((server, PORT))
	s.settimeout(1)
	s.send(encode(GET, 1, key.encode(), ext=(0, 0, 0, 0, 0, STEERED | FORWARDED)))
	try:
		s.recv(2048)
		fail("a client's request marked as a server's stray was answered")
	except socket.timeout:
		print("lab: a client's request marked as a server's stray: dropped")


if __name__ == "__main__":
	if sys.argv[1:2] == ["client"]:
		client(*sys.argv[2:5])
	elif sys.argv[1:2] == ["forge"]:
		forge(*sys.argv[2:4])
	else:
		sys.exit(__doc__)
