#!/usr/bin/python3
"""Both ends of the directory lab's traffic (tests/dir/lab.sh), speaking xkv's version 3
(docs/PROTOCOL.md): a stand-in server, and the client that checks what comes back.

  lab.py server ID LOG        on UDP 7411: each request logged ("ID op key ver") and
                              answered as a version 3 server would: a GET with the
                              value "sID" and the version it holds, a PUT by taking the
                              directory's version; the extension echoed, load ID
  lab.py client HOME HOT COLD  through the directory to HOME (server 0's address)"""
import socket
import struct
import sys

MAGIC, PORT, GET, PUT, REPLY, F_DIR = 0x584B, 7411, 1, 2, 0x80, 1
HDR = struct.Struct("!HBBBBHIIIIQQ")  # include/xkv/proto.h, 40 bytes
EXT = struct.Struct("!QQIIBB6x")  # include/xkv/dir.h, 32 bytes


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


def server(ident, log):
	held = {}  # key -> the version this server holds
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.bind(("0.0.0.0", PORT))
	with open(log, "a", buffering=1) as out:
		while True:
			data, peer = s.recvfrom(2048)
			op, rid, ext, key, value = decode(data)
			key_hash, ver, _, write_set, target, dflags = ext or (0, 0, 0, 0, 0, 0)
			if op == PUT:
				held[key] = ver
			out.write(f"{ident} {op} {key.decode()} {ver}\n")
			reply_ext = None if ext is None else (key_hash, held.get(key, 0), int(ident),
							      write_set, target, dflags)
			s.sendto(encode(op | REPLY, rid, value=b"s" + ident.encode()
					if op == GET else b"", ext=reply_ext), peer)


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
	if value != b"s1" or not rext or rext[5] != 1:
		fail(f"a replicated read went to {value!r}, not its replica set's s1 ({rext})")
	_, rext = ask(PUT, hot, value=b"new")
	writer = rext[2]  # the load field: the server's id
	for _ in range(4):
		value, _ = ask(GET, hot)
		if value != f"s{writer}".encode():
			fail(f"after a write acknowledged by s{writer}, a read went to {value!r}")
	rid += 1
	s.send(encode(GET, rid, hot.encode()))  # version 2: no extension
	try:
		s.recv(2048)
		fail("a version 2 request for a replicated key was answered")
	except socket.timeout:
		pass
	print(f"lab: cold key to its home; replicated read to its replica set; write to "
	      f"s{writer}, then every read there; every reply from {home}; version 2 dropped")
	print(f"writer {writer}")


if __name__ == "__main__":
	if sys.argv[1] == "server":
		server(sys.argv[2], sys.argv[3])
	else:
		client(*sys.argv[2:5])
