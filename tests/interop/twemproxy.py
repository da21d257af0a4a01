#!/usr/bin/python3
"""pymemcache through twemproxy (nutcracker, ketama) in front of two servers, in two
steps with one server stopped in between (by twemproxy.sh):

  twemproxy.py load PROXY ONE TWO      1000 keys set through the proxy, each read back
                                       byte-exact through it, and found on exactly one
                                       server (direct gets), both holding a fair share
  twemproxy.py stopped PROXY ONE LIMIT  TWO stopped: ONE's keys still read back
                                       byte-exact; TWO's keys fail with twemproxy's
                                       SERVER_ERROR at most LIMIT times in all (its
                                       server_failure_limit), then TWO is ejected and
                                       they are misses; set again through the proxy,
                                       they land on ONE and read back

Which keys are on ONE is found again in the second step, the same way."""
import random
import sys

from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheServerError

KEYS = [f"twem:{i}" for i in range(1000)]


def value(key, generation=0):
	"""Up to 20 kB of bytes of its own per key, some with CR LF and "END" inside."""
	r = random.Random(f"{key}/{generation}")
	return r.randbytes(r.randrange(1, 20000)) + (b"\r\nEND\r\n" if r.random() < 0.1 else b"")


def client(address):
	host, port = address.rsplit(":", 1)
	return Client((host, int(port)), default_noreply=False, connect_timeout=2, timeout=5)


def held_by(address):
	"""The keys a server holds with their right value (direct gets)."""
	c = client(address)
	got = {}
	for i in range(0, len(KEYS), 100):
		got.update(c.get_many(KEYS[i:i + 100]))
	c.close()
	return {k for k, v in got.items() if v == value(k)}


def fail(why):
	sys.exit(f"FAIL: {why}")


def load(proxy, one, two):
	p = client(proxy)
	for k in KEYS:
		if p.set(k, value(k)) is not True:
			fail(f"set {k} through twemproxy")
	wrong = [k for k in KEYS if p.get(k) != value(k)]
	if wrong:
		fail(f"{len(wrong)} values not read back byte-exact through twemproxy: {wrong[:5]}")
	on_one, on_two = held_by(one), held_by(two)
	if on_one & on_two or on_one | on_two != set(KEYS):
		fail(f"keys not on exactly one server: {len(on_one)} + {len(on_two)}")
	# ketama, 160 points per server of weight 1: about half each
	if min(len(on_one), len(on_two)) < len(KEYS) // 4:
		fail(f"keys not spread: {len(on_one)} and {len(on_two)}")
	print(f"twemproxy: {len(KEYS)} keys set and read back byte-exact, {len(on_one)} on one "
	      f"server and {len(on_two)} on the other")


def stopped(proxy, one, limit):
	p = client(proxy)
	on_one = held_by(one)
	on_two = [k for k in KEYS if k not in on_one]
	wrong = [k for k in on_one if p.get(k) != value(k)]
	if wrong:
		fail(f"{len(wrong)} keys of the live server not served byte-exact: {wrong[:5]}")
	errors, misses = 0, 0
	for k in on_two:
		try:
			got = p.get(k)
		except MemcacheServerError:
			errors += 1
			if misses:
				fail(f"{k}: an error after the stopped server's keys had become misses")
			continue
		if got is not None:
			fail(f"{k}: a value from a stopped server: {got[:20]!r}")
		misses += 1
	if not 1 <= errors <= int(limit):
		fail(f"{errors} errors before the stopped server was ejected, not 1 to {limit}")
	for k in on_two:
		if p.set(k, value(k, 1)) is not True or p.get(k) != value(k, 1):
			fail(f"{k}: not stored through twemproxy once its server was ejected")
	c = client(one)
	moved = c.get_many(on_two)
	if moved != {k: value(k, 1) for k in on_two}:
		fail("the stopped server's keys, set again, are not all on the live one")
	print(f"twemproxy, one server stopped: its {len(on_two)} keys: SERVER_ERROR {errors} times "
	      f"then ejected: {misses} misses, then set again onto the live "
	      f"server; the live server's {len(on_one)} keys served byte-exact throughout")


if __name__ == "__main__":
	steps = {"load": (load, 3), "stopped": (stopped, 3)}
	if len(sys.argv) < 2 or sys.argv[1] not in steps or len(sys.argv) != steps[sys.argv[1]][1] + 2:
		sys.exit(__doc__)
	steps[sys.argv[1]][0](*sys.argv[2:])
