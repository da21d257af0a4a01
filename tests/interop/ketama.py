#!/usr/bin/python3
"""Keys set through nutcracker (ketama, md5), each found on the memcached it chose, and
xkv-cli's placement of the same keys over the same list (by ketama.sh):

  ketama.py PROXY XKV_CLI LIST PORT...   LIST as xkv-cli's --server takes it, its
                                         entries in the order of PORT..., the
                                         memcacheds' ports

Fails on any key whose server the two disagree on, and if any server holds no keys."""
import subprocess
import sys

from pymemcache.client.base import Client

KEYS = [f"ketama:{i}" for i in range(3000)] + ["a", "b", "xkv", "k" * 250]


def client(port):
	return Client(("127.0.0.1", int(port)), default_noreply=False, connect_timeout=2,
		      timeout=5)


def fail(why):
	sys.exit(f"FAIL: {why}")


def main(proxy, cli, server_list, *ports):
	p = client(proxy.rsplit(":", 1)[1])
	for k in KEYS:
		if p.set(k, b"v") is not True:
			fail(f"set {k} through nutcracker")
	# which memcached nutcracker chose, by asking each directly
	chosen = {}
	for index, port in enumerate(ports):
		c = client(port)
		for i in range(0, len(KEYS), 100):
			for k in c.get_many(KEYS[i:i + 100]):
				if k in chosen:
					fail(f"{k} on two memcacheds")
				chosen[k] = index
		c.close()
	if set(chosen) != set(KEYS):
		fail(f"{len(KEYS) - len(chosen)} keys on no memcached")
	names = [entry.split(" ", 1)[1] if " " in entry else entry.rsplit(":", 1)[0]
		 for entry in server_list.split(",")]
	out = subprocess.run([cli, "--server", server_list, "where", *KEYS], check=True,
			     capture_output=True, text=True).stdout.splitlines()
	placed = dict(line.split("\t") for line in out)
	wrong = [k for k in KEYS if placed.get(k) != names[chosen[k]]]
	if wrong:
		fail(f"{len(wrong)} of {len(KEYS)} keys placed apart from nutcracker, e.g. "
		     f"{wrong[0]!r}: xkv {placed.get(wrong[0])}, nutcracker {names[chosen[wrong[0]]]}")
	held = [sum(1 for k in KEYS if chosen[k] == i) for i in range(len(ports))]
	if min(held) == 0:
		fail(f"a server holds no keys: {held}")
	print(f"ketama: {len(KEYS)} keys placed as nutcracker placed them, over "
	      f"{len(ports)} servers holding {held}")


if __name__ == "__main__":
	main(*sys.argv[1:])
