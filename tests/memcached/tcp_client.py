# SPDX-License-Identifier: MIT
"""memcached over TCP against a running xkv-server, with pymemcache (Debian's
python3-pymemcache) and raw sockets: every case prints its name, and the first that
fails raises, so the script exits non-zero naming it.
    tcp_client.py HOST PORT [CONNECTIONS]
CONNECTIONS clients write keys of every partition at once, so that with several
workers some writes land on a worker that is not their partition's writer."""
import socket
import sys
import threading
import time

from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheServerError

HOST, PORT = sys.argv[1], int(sys.argv[2])
CONNECTIONS = int(sys.argv[3]) if len(sys.argv) > 3 else 8


def client():
    return Client((HOST, PORT), default_noreply=False, connect_timeout=5, timeout=10)


def raw():
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until(s, end):
    data = b""
    while not data.endswith(end):
        chunk = s.recv(65536)
        if not chunk:
            raise AssertionError("closed after %r" % data)
        data += chunk
    return data


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def case_basics(c):
    check(c.set("k", b"v1", noreply=False), "set")
    check(c.get("k") == b"v1", "get after set")
    check(c.add("k", b"x", noreply=False) is False, "add of a present key: NOT_STORED")
    check(c.replace("absent", b"x", noreply=False) is False, "replace of an absent key")
    check(c.append("k", b"+a", noreply=False) and c.prepend("k", b"p-", noreply=False),
          "append, prepend")
    check(c.get("k") == b"p-v1+a", "appended and prepended: %r" % c.get("k"))
    value, cas = c.gets("k")
    check(value == b"p-v1+a" and cas, "gets")
    check(c.cas("k", b"v2", cas) is True, "cas with the right unique")
    check(c.cas("k", b"v3", cas) is False, "cas with a stale unique: EXISTS")
    check(c.cas("absent", b"v3", 1) is None, "cas of an absent key: NOT_FOUND")
    check(c.get("k") == b"v2", "the cas that won")
    check(c.set("n", b"10") and c.incr("n", 5) == 15 and c.decr("n", 20) == 0, "incr, decr")
    check(c.incr("absent", 1) is None, "incr of an absent key")
    check(c.delete("k", noreply=False) is True and c.get("k") is None, "delete")
    check(c.delete("k", noreply=False) is False, "delete of an absent key")
    check(c.set("t", b"x") and c.touch("t", 100, noreply=False) is True, "touch")
    check(c.touch("absent", 100, noreply=False) is False, "touch of an absent key")
    check(c.version().split(b".")[0].isdigit(), "version is x.y.z: %r" % c.version())


def case_flags_and_noreply(c):
    c.set("f", b"flagged", noreply=False, flags=0xdeadbeef)
    s = raw()
    s.sendall(b"get f\r\n")
    reply = read_until(s, b"END\r\n")
    check(reply == b"VALUE f 3735928559 7\r\nflagged\r\nEND\r\n", "flags kept: %r" % reply)
    # noreply: nothing comes back, and the next command's reply is the next thing read
    s.sendall(b"set q 0 0 1 noreply\r\nq\r\ndelete q noreply\r\nget q\r\n")
    check(read_until(s, b"END\r\n") == b"END\r\n", "noreply answers nothing")
    s.close()


def case_big_value(c):
    value = bytes((i * 7 + 3) % 251 for i in range(1 << 20))
    check(c.set("big", value, noreply=False), "set of 1 MiB")
    check(c.get("big") == value, "1 MiB byte-exact")
    try:
        c.set("over", value + b"x", noreply=False)
    except MemcacheServerError:  # memcached's "SERVER_ERROR object too large for cache"
        pass
    check(c.get("over") is None, "over 1 MiB is not stored")


def case_get_many(c):
    items = {"many:%d" % i: ("value %d " % i).encode() * (i % 7 + 1) for i in range(100)}
    check(c.set_many(items, noreply=False) == [], "set_many")
    got = c.get_many(list(items) + ["many:absent"])
    check(got == items, "get_many of 100 keys: %d returned" % len(got))
    # pipelined: 100 commands in one send, 100 replies in order
    s = raw()
    s.sendall(b"".join(b"get many:%d\r\n" % i for i in range(100)))
    data = b""
    while data.count(b"END\r\n") < 100:
        data += s.recv(65536)
    check(all(b"VALUE many:%d " % i in data for i in range(100)), "pipelined gets")
    s.close()


def case_byte_by_byte(c):
    s = raw()
    for b in b"set slow 5 0 5\r\nhello\r\n":
        s.send(bytes([b]))
        time.sleep(0.002)
    check(read_until(s, b"\r\n") == b"STORED\r\n", "a command sent byte by byte")
    for b in b"get slow\r\n":
        s.send(bytes([b]))
    check(read_until(s, b"END\r\n") == b"VALUE slow 5 5\r\nhello\r\nEND\r\n", "its get")
    s.close()


def case_malformed_endless_and_cut_short(c):
    s = raw()
    s.sendall(b"bogus command\r\n")
    check(read_until(s, b"\r\n") == b"ERROR\r\n", "an unknown command: ERROR")
    s.sendall(b"set k2 0 0 notanumber\r\n")
    check(read_until(s, b"\r\n").startswith(b"CLIENT_ERROR"), "a bad length: CLIENT_ERROR")
    s.sendall(b"set k2 0 0 2\r\nok\r\nget k2\r\n")
    check(read_until(s, b"END\r\n").endswith(b"ok\r\nEND\r\n"), "the connection survives")
    s.close()
    # an endless line: closed, as memcached closes it
    s = raw()
    try:
        s.sendall(b"x" * 100000)
        while s.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):  # closed while it sent, or after
        pass
    s.close()
    # a client that disconnects halfway through a value
    s = raw()
    s.sendall(b"set cut 0 0 100000\r\n" + b"x" * 5000)
    s.close()
    check(c.set("after-cut", b"1", noreply=False) and c.get("cut") is None,
          "the server survives a value cut short, which is not stored")


def case_flush_and_stats(c):
    c.set("gone", b"1")
    before = c.stats()
    for name in (b"pid", b"uptime", b"time", b"version", b"pointer_size", b"curr_connections",
                 b"total_connections", b"cmd_get", b"cmd_set", b"get_hits", b"get_misses",
                 b"delete_hits", b"delete_misses", b"incr_hits", b"incr_misses",
                 b"decr_hits", b"decr_misses", b"cas_hits", b"cas_misses", b"cas_badval",
                 b"touch_hits", b"touch_misses", b"curr_items", b"bytes",
                 b"limit_maxbytes", b"threads", b"evictions"):
        check(name in before, "stats has %s" % name.decode())
    c.get("gone")
    c.get("never-set")
    c.set("s", b"1")
    after = c.stats()
    # this connection's worker counts what it served at once
    check(after[b"cmd_set"] >= before[b"cmd_set"] + 1, "cmd_set counted")
    check(after[b"get_hits"] >= before[b"get_hits"] + 1, "get_hits counted")
    check(after[b"get_misses"] >= before[b"get_misses"] + 1, "get_misses counted")
    check(after[b"curr_connections"] >= 1 and after[b"curr_items"] >= 1, "connections, items")
    check(c.flush_all(noreply=False) is True and c.get("gone") is None, "flush_all")


def writer(i, errors):
    try:
        c = client()
        for j in range(200):
            key = "w:%d:%d" % (i, j)
            check(c.set(key, b"%d" % j, noreply=False), "set " + key)
            check(c.incr(key, 1) == j + 1, "incr " + key)
            check(c.get(key) == b"%d" % (j + 1), "get " + key)
        c.close()
    except Exception as e:  # reported by the main thread
        errors.append("writer %d: %r" % (i, e))


def case_concurrent_writers(c):
    errors = []
    threads = [threading.Thread(target=writer, args=(i, errors)) for i in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "; ".join(errors))


def main():
    c = client()
    for name, case in sorted(globals().items()):
        if name.startswith("case_"):
            print("memcached tcp: %s" % name[5:], flush=True)
            case(c)
    c.close()
    print("memcached tcp: all passed")


main()
