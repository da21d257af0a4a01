#!/usr/bin/python3
"""pymemcache (Debian's python3-pymemcache) against two servers: its Client on the first
for the commands an application uses, then its HashClient over both: keys spread over
the two, each readable through the HashClient and found on exactly one server; `stats
settings` and `stats reset` as memcached answers them. Then pylibmc (python3-pylibmc,
libmemcached underneath) in the binary protocol over both.

  clients.py HOST:PORT HOST:PORT"""
import socket
import sys

import pylibmc
from pymemcache.client.base import Client
from pymemcache.client.hash import HashClient
from pymemcache.exceptions import MemcacheClientError

REQUIRED_STATS = (b"pid", b"uptime", b"version", b"curr_connections", b"cmd_get", b"cmd_set",
		  b"get_hits", b"get_misses", b"curr_items", b"bytes", b"limit_maxbytes")


def address(text):
	host, port = text.rsplit(":", 1)
	return host, int(port)


def check(what, got, want):
	if got != want:
		sys.exit(f"FAIL: {what}: {got!r}, not {want!r}")


def stats_reset(server):
	"""`stats reset`, which pymemcache does not send: its raw reply."""
	with socket.create_connection(server, timeout=5) as s:
		s.sendall(b"stats reset\r\n")
		reply = b""
		while not reply.endswith(b"\r\n"):
			reply += s.recv(100)
		return reply


def one_client(server):
	# noreply off: every write's answer is checked; one run with noreply at the end
	c = Client(server, default_noreply=False, connect_timeout=2, timeout=5)
	c.flush_all()
	check("set", c.set("k", b"v", expire=0), True)
	check("get", c.get("k"), b"v")
	check("get missing", c.get("missing"), None)
	check("add existing", c.add("k", b"x"), False)
	check("add new", c.add("a", b"1"), True)
	check("replace missing", c.replace("missing", b"x"), False)
	check("replace", c.replace("a", b"2"), True)
	check("append", c.append("a", b"3"), True)
	check("prepend", c.prepend("a", b"1"), True)
	check("after append/prepend", c.get("a"), b"123")
	check("incr", c.incr("a", 7), 130)
	check("decr", c.decr("a", 200), 0)
	check("incr missing", c.incr("missing", 1), None)
	value, cas = c.gets("k")
	check("gets", value, b"v")
	check("cas", c.cas("k", b"w", cas), True)
	check("stale cas", c.cas("k", b"z", cas), False)
	check("cas missing", c.cas("missing", b"z", cas), None)
	check("after cas", c.get("k"), b"w")
	check("touch", c.touch("k", 100), True)
	check("touch missing", c.touch("missing", 100), False)
	check("delete", c.delete("k"), True)
	check("delete missing", c.delete("k"), False)
	many = {f"m{i}": f"value {i}".encode() * (i + 1) for i in range(100)}
	check("set_many", c.set_many(many), [])
	check("get_many", c.get_many(list(many)), many)
	big = bytes(i * 7 % 251 for i in range(1000000))
	check("set 1,000,000 bytes", c.set("big", big), True)
	check("get 1,000,000 bytes", c.get("big") == big, True)
	try:
		c.set("x" * 251, b"v")
		sys.exit("FAIL: a 251-byte key was sent")
	except MemcacheClientError:
		pass  # pymemcache refuses it itself, as it should
	stats = c.stats()
	missing = [n for n in REQUIRED_STATS if n not in stats]
	check("stats without " + " ".join(n.decode() for n in missing), missing, [])
	check("version", bool(c.version()), True)
	settings = c.stats("settings")
	check("stats settings: maxbytes is limit_maxbytes", int(settings[b"maxbytes"]),
	      int(stats[b"limit_maxbytes"]))
	check("stats settings: item_size_max", int(settings[b"item_size_max"]), 1 << 20)
	check("stats reset", stats_reset(server), b"RESET\r\n")
	after = c.stats()
	check("cmd_get after stats reset", after[b"cmd_get"], 0)
	check("curr_items after stats reset", after[b"curr_items"], stats[b"curr_items"])
	c.get("k")
	check("cmd_get after one more get", c.stats()[b"cmd_get"], 1)
	q = Client(server, default_noreply=True, connect_timeout=2, timeout=5)
	q.set("nr", b"1")
	q.incr("nr", 4)
	check("noreply writes then get", q.get("nr"), b"5")
	check("flush_all", c.flush_all(), True)
	check("get after flush_all", c.get("m1"), None)
	c.close()
	q.close()
	print(f"pymemcache Client: every command as memcached answers it ({server[0]}:{server[1]})")


def hash_client(servers):
	h = HashClient(servers, default_noreply=False, connect_timeout=2, timeout=5)
	keys = {f"hash-{i}": f"{i}".encode() * (i % 50 + 1) for i in range(400)}
	for k, v in keys.items():
		check(f"HashClient set {k}", h.set(k, v), True)
	per_server = []
	for s in servers:
		c = Client(s, connect_timeout=2, timeout=5)
		per_server.append({k for k, v in c.get_many(list(keys)).items() if v == keys[k]})
		c.close()
	check("keys on both servers", per_server[0] & per_server[1], set())
	check("keys on one or the other", per_server[0] | per_server[1], set(keys))
	if not all(per_server):
		sys.exit(f"FAIL: HashClient put every key on one server: {[len(p) for p in per_server]}")
	for k, v in keys.items():
		check(f"HashClient get {k}", h.get(k), v)
	print(f"pymemcache HashClient: {len(keys)} keys, {len(per_server[0])} and "
	      f"{len(per_server[1])} on the two servers, each read back")


def pylibmc_binary(servers):
	"""libmemcached's binary protocol: multi-gets as GETKQ and NOOP, quiet multi-sets."""
	c = pylibmc.Client([f"{h}:{p}" for h, p in servers], binary=True,
			   behaviors={"cas": True, "ketama": True})
	c.flush_all()
	check("binary set", c.set("b", b"1"), True)
	check("binary get", c.get("b"), b"1")
	check("binary incr", c.incr("b", 41), 42)
	check("binary decr below 0", c.decr("b", 100), 0)
	check("binary add existing", c.add("b", b"x"), False)
	try:
		c.replace("b-none", b"x")
		sys.exit("FAIL: binary replace missing: stored")
	except pylibmc.NotFound:
		pass  # libmemcached's word for memcached's binary NOT_FOUND
	check("binary append", c.append("b", b"9"), True)
	check("binary prepend", c.prepend("b", b"8"), True)
	# decr from 42 to 0 left "0 ": memcached pads a shorter number in place
	check("binary after append, prepend", c.get("b"), b"80 9")
	value, cas = c.gets("b")
	check("binary cas", c.cas("b", b"new", cas), True)
	check("binary stale cas", c.cas("b", b"newer", cas), False)
	check("binary touch", c.touch("b", 100), True)
	check("binary touch missing", c.touch("b-none", 100), False)
	many = {f"bin-{i}": f"v{i}".encode() * (i % 30 + 1) for i in range(300)}
	check("binary set_multi", c.set_multi(many), [])
	check("binary get_multi", c.get_multi(list(many) + ["bin-none"]), many)
	big = bytes(i * 13 % 251 for i in range(1000000))
	check("binary set 1,000,000 bytes", c.set("bin-big", big), True)
	check("binary get 1,000,000 bytes", c.get("bin-big") == big, True)
	check("binary delete", c.delete("b"), True)
	check("binary delete missing", c.delete("b"), False)
	stats = c.get_stats()
	check("binary stats from both servers", len(stats), 2)
	for name, values in stats:
		missing = [n for n in ("pid", "version", "cmd_get", "curr_items") if n not in values]
		check(f"binary stats of {name} without " + " ".join(missing), missing, [])
	c.disconnect_all()
	print(f"pylibmc, binary protocol: every command, {len(many)} keys over both servers")


def main():
	servers = [address(a) for a in sys.argv[1:3]]
	if len(servers) != 2:
		sys.exit(__doc__)
	one_client(servers[0])
	hash_client(servers)
	pylibmc_binary(servers)


if __name__ == "__main__":
	main()
