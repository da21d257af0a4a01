#!/usr/bin/env python3
"""memcached over TLS, xkv-server beside memcached 1.6.18 -Z with the same certificates
(tests/interop/tls.sh makes them and starts both).

  tls.py server|refresh|mutual --certs DIR --xkv PORT --memcached PORT [--reference PORT]

server: the server has a certificate and asks for none. Clients that verify it are
served: pymemcache by both; pipelines of several MiB, values that fill xkv's input
buffer while TLS holds more (noreply, so that no reply wakes the connection) and the
binary protocol by xkv in TLS byte for byte as a plain memcached -I 2m (--reference)
serves them in the clear (memcached 1.6.18 -Z stalls on such pipelines: what OpenSSL holds
decrypted, its event loop never sees); TLS 1.2 by both. A plain client, a client
trusting another CA and one that stops inside its handshake get nothing and keep no
one else waiting; stats settings shows TLS as memcached does; xkv counts handshake
errors. refresh: refresh_certs loads a renewed certificate for new connections while
open ones go on, and one that fails (a key that is not the certificate's) leaves the
last one served. mutual: client certificates from the CA required, TLS 1.3 at least: a client
with one is served; without one, with a rogue CA's, or at TLS 1.2 it is refused.
"""
import argparse
import shutil
import socket
import ssl
import struct
import sys
import time

from pymemcache.client.base import Client

TIMEOUT = 10


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Certs:
    def __init__(self, path):
        self.path = path

    def context(self, client=None, ca="ca", max_version=None):
        ctx = ssl.create_default_context(cafile=f"{self.path}/{ca}.pem")
        if client:
            ctx.load_cert_chain(f"{self.path}/{client}.pem", f"{self.path}/{client}.key")
        if max_version:
            ctx.maximum_version = max_version
        return ctx


def connect(port, ctx):
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    try:
        return ctx.wrap_socket(sock, server_hostname="localhost")
    except BaseException:
        sock.close()
        raise


def read_until(sock, end):
    """What the server sends until the reply ends with end (or it closes)."""
    data = b""
    while not data.endswith(end):
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return data


def exchange(port, ctx, request, end=b"MN\r\n"):
    """request sent whole (mn last), the replies up to MN's; ctx None: in the clear."""
    with (connect(port, ctx) if ctx else
          socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)) as t:
        t.sendall(request)
        return read_until(t, end)


def pymemcache_suite(name, port, ctx):
    c = Client(("127.0.0.1", port), tls_context=ctx, timeout=TIMEOUT)
    big = bytes(range(256)) * 3906  # 999,936 bytes: many TLS records
    c.set("tls-a", b"1")
    c.set("tls-big", big)
    keys = {f"tls-k{i}": str(i).encode() for i in range(100)}
    c.set_many(keys)
    got = c.get_many(list(keys))
    if got != keys:
        fail(f"{name}: get_many over TLS: {len(got)} of {len(keys)} right")
    if c.incr("tls-a", 41) != 42 or c.get("tls-big") != big:
        fail(f"{name}: incr or the large value over TLS")
    if not c.delete("tls-a", noreply=False) or c.get("tls-a") is not None:
        fail(f"{name}: delete over TLS")
    c.close()


def pipeline(port, ctx):
    """48 sets of 64 KiB, then their gets: 3 MiB each way in one pipeline."""
    value = b"v" * 65536
    req = b"".join(b"set tls-p%d 0 0 %d\r\n%s\r\n" % (i, len(value), value) for i in range(48))
    req += b"".join(b"get tls-p%d\r\n" % i for i in range(48)) + b"mn\r\n"
    return exchange(port, ctx, req)


def noreply_fill(port, ctx):
    """Values of 1 MiB, the largest, without replies: the input buffer fills to its
    limit (4 KiB past such a request) while TLS still holds the rest of a record, and
    no send completes to bring the connection back (nor a hand-over's return: of the
    8 keys, 2 are one worker's and 6 the other's under crew with 2 workers, so
    whichever takes the connection writes some of them itself)."""
    value = b"n" * (1 << 20)
    req = b"".join(b"set tls-n%d 0 0 %d noreply\r\n%s\r\n" % (i, len(value), value)
                   for i in range(8))
    req += b"mg tls-n7 s\r\nmn\r\n"
    return exchange(port, ctx, req)


def binary_version(port, ctx):
    """The binary protocol's VERSION: its response header."""
    with (connect(port, ctx) if ctx else
          socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)) as t:
        t.sendall(struct.pack(">BBHBBHIIQ", 0x80, 0x0B, 0, 0, 0, 0, 0, 0xABCD, 0))
        head = b""
        while len(head) < 24:
            chunk = t.recv(24 - len(head))
            if not chunk:
                break
            head += chunk
    magic, opcode, _, _, _, status, _, opaque, _ = struct.unpack(">BBHBBHIIQ", head)
    return magic, opcode, status, opaque


def quit_closes(port, ctx):
    """quit after a get: the answer, then close_notify before the connection ends (a
    bare TCP close here raises SSLEOFError: a truncation no client could tell)."""
    ctx.options &= ~ssl.OP_IGNORE_UNEXPECTED_EOF  # Debian's Python sets it by default
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    with ctx.wrap_socket(sock, server_hostname="localhost", suppress_ragged_eofs=False) as t:
        t.sendall(b"set tls-q 0 0 1\r\nq\r\nget tls-q\r\nquit\r\n")
        data = b""
        while chunk := t.recv(4096):
            data += chunk
    return data


def refused(port, ctx, what):
    """Whether a client gets no answer: a failed handshake, or a close before any."""
    try:
        with connect(port, ctx) as t:
            t.sendall(b"version\r\n")
            data = read_until(t, b"\r\n")
    except (ssl.SSLError, OSError) as e:
        print(f"  {what}: refused ({type(e).__name__}: {e})")
        return True
    print(f"  {what}: answered {data[:40]!r}")
    return b"VERSION" not in data


def plain_closed(port):
    """A plain-text client on the TLS port is closed without an answer, promptly."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(b"version\r\n")
        start = time.monotonic()
        data = b""
        try:
            while chunk := s.recv(4096):
                data += chunk
        except ConnectionResetError:
            pass
        return b"VERSION" not in data and time.monotonic() - start < 5


def served_beside_stalled_handshake(port, ctx):
    """A client stopped inside its ClientHello holds nothing up: another is served."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as stalled:
        stalled.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a hello begun
        start = time.monotonic()
        ok = exchange(port, ctx, b"mn\r\n") == b"MN\r\n"
        return ok and time.monotonic() - start < 2


def stats(port, ctx, group=b""):
    data = exchange(port, ctx, b"stats " + group + b"\r\n", b"END\r\n")
    return dict(line.split(" ", 2)[1:] for line in data.decode().splitlines()
                if line.startswith("STAT "))


def handshake_errors_reach(port, ctx, least):
    """xkv's counters are published every second or so: poll for them."""
    for _ in range(40):
        n = int(stats(port, ctx).get("ssl_handshake_errors", -1))
        if n >= least:
            return n
        time.sleep(0.1)
    fail(f"xkv: ssl_handshake_errors {n}, not at least {least}")


def phase_server(args, certs):
    ctx = certs.context()
    servers = {"xkv": args.xkv, "memcached": args.memcached}
    for name, port in servers.items():
        pymemcache_suite(name, port, ctx)
    print("pymemcache over TLS: sets, gets, get_many, incr, delete, a 1 MB value: both")
    for name, port in servers.items():
        if quit_closes(port, certs.context()) != b"STORED\r\nVALUE tls-q 0 1\r\nq\r\nEND\r\n":
            fail(f"{name}: quit: not the answers, then close_notify")
    print("quit: the answers, then close_notify: both")
    for check in (pipeline, noreply_fill, binary_version):
        got, want = check(args.xkv, ctx), check(args.reference, None)
        if got != want:
            fail(f"{check.__name__}: xkv in TLS {str(got)[:200]}, memcached in the clear "
                 f"{str(want)[:200]}")
        print(f"{check.__name__}: xkv in TLS as memcached in the clear "
              f"({len(str(got))} characters)")
    if binary_version(args.xkv, ctx)[:3] != (0x81, 0x0B, 0):
        fail("binary VERSION over TLS: not a success response")
    if pipeline(args.xkv, ctx).count(b"VALUE ") != 48:
        fail("pipeline: not every value came back")
    tls12 = certs.context(max_version=ssl.TLSVersion.TLSv1_2)
    for name, port in servers.items():
        if exchange(port, tls12, b"mn\r\n") != b"MN\r\n":
            fail(f"{name}: a TLS 1.2 client is not served")
        if not plain_closed(port):
            fail(f"{name}: a plain client on the TLS port was answered or kept open")
        if not refused(port, certs.context(ca="rogue-ca"), f"{name}, trusting another CA"):
            fail(f"{name}: a client trusting another CA was served")
        if not served_beside_stalled_handshake(port, ctx):
            fail(f"{name}: a stalled handshake held another client up")
    print("TLS 1.2 served; a plain client closed, unanswered; another CA's client refused; "
          "a stalled handshake holds no one up: both")
    settings = {name: {k: v for k, v in stats(port, ctx, b"settings").items()
                       if k.startswith("ssl_")} for name, port in servers.items()}
    shown = set(settings["xkv"])
    # memcached's per-connection output buffer has no counterpart (MEMCACHED.md)
    if shown != set(settings["memcached"]) - {"ssl_wbuf_size"} or \
            any(settings["xkv"][k] != settings["memcached"][k] for k in shown):
        fail(f"stats settings: xkv {settings['xkv']}, memcached {settings['memcached']}")
    print(f"stats settings: {len(shown)} ssl_ settings as memcached's")
    errors = handshake_errors_reach(args.xkv, ctx, 2)
    print(f"xkv: ssl_handshake_errors {errors}")


def served_cert(port, ctx):
    with connect(port, ctx) as t:
        return t.getpeercert(binary_form=True)


def pem_der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def command(t, line):
    t.sendall(line)
    return read_until(t, b"\r\n")


def phase_refresh(args, certs):
    """The files server.pem and server.key both servers were started with are replaced,
    then refresh_certs asked for on a connection that stays open."""
    ctx = certs.context()
    servers = {"xkv": args.xkv, "memcached": args.memcached}
    path = certs.path
    old, renewed = pem_der(f"{path}/server.pem"), pem_der(f"{path}/renewed.pem")
    open_ones = {name: connect(port, ctx) for name, port in servers.items()}
    for name, port in servers.items():
        if served_cert(port, ctx) != old:
            fail(f"{name}: not serving the certificate it was started with")
        if "time_since_server_cert_refresh" not in stats(port, ctx):
            fail(f"{name}: stats has no time_since_server_cert_refresh")
    shutil.copy(f"{path}/renewed.pem", f"{path}/server.pem")
    shutil.copy(f"{path}/renewed.key", f"{path}/server.key")
    for name, t in open_ones.items():
        if command(t, b"refresh_certs\r\n") != b"OK\r\n":
            fail(f"{name}: refresh_certs did not answer OK")
        if served_cert(servers[name], ctx) != renewed:
            fail(f"{name}: a new connection after refresh_certs has the old certificate")
        if command(t, b"mn\r\n") != b"MN\r\n":
            fail(f"{name}: the connection open across refresh_certs is not served")
    print("refresh_certs: OK, the renewed certificate for new connections, the open one "
          "served on: both")
    shutil.copy(f"{path}/rogue.key", f"{path}/server.key")
    for name, t in open_ones.items():
        reply = command(t, b"refresh_certs noreply\r\n")
        if not reply.startswith(b"Error ") or b"key values mismatch" not in reply:
            fail(f"{name}: refresh_certs with a key not the certificate's: {reply!r}")
        t.close()
    print(f"refresh_certs with another key: {reply.decode().strip()}: both")
    if served_cert(args.xkv, ctx) != renewed:
        fail("xkv: a failed refresh_certs changed the certificate served")
    print("xkv: a failed refresh_certs leaves the last certificate served")
    shutil.copy(f"{path}/renewed.key", f"{path}/server.key")


def phase_mutual(args, certs):
    good = certs.context(client="client")
    servers = {"xkv": args.xkv, "memcached": args.memcached}
    for name, port in servers.items():
        with connect(port, good) as t:
            if t.version() != "TLSv1.3":
                fail(f"{name}: {t.version()}, not TLS 1.3")
        pymemcache_suite(name, port, good)
        for what, ctx in (("no certificate", certs.context()),
                          ("a rogue CA's certificate", certs.context(client="rogue")),
                          ("TLS 1.2", certs.context(client="client",
                                                    max_version=ssl.TLSVersion.TLSv1_2))):
            if not refused(port, ctx, f"{name}, {what}"):
                fail(f"{name}: a client with {what} was served")
    print("client certificates required: served with one from the CA; refused without one, "
          "with another CA's, at TLS 1.2: both")
    errors = handshake_errors_reach(args.xkv, good, 3)
    print(f"xkv: ssl_handshake_errors {errors}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=("server", "refresh", "mutual"))
    p.add_argument("--certs", required=True)
    p.add_argument("--xkv", type=int, required=True)
    p.add_argument("--memcached", type=int, required=True)
    p.add_argument("--reference", type=int, help="server: memcached in the clear")
    args = p.parse_args()
    certs = Certs(args.certs)
    {"server": phase_server, "refresh": phase_refresh, "mutual": phase_mutual}[args.phase](
        args, certs)


if __name__ == "__main__":
    main()
