#!/usr/bin/env bash
# memcached over TCP in TLS (docs/MEMCACHED.md, "TLS"), side by side with memcached
# 1.6.18 -Z given the same certificates (made here by openssl), and a memcached in the
# clear for the bytes of long pipelines: a server certificate only, then client
# certificates required and TLS 1.3 at least. tls.py drives them with pymemcache and
# Python's ssl; openssl s_client talks to xkv too. Settings that
# cannot work are refused at start with the reason. Every xkv-server must stop with
# exit 0 (the ASan build: no connection, session or context leaked).
#   tls.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: tls.sh BUILD_DIR}" && pwd)
under_test=xkv
dir=$(dirname "$0")
. "$dir/../skip.sh"
. "$dir/lib.sh"
need_commands openssl
need_pymemcache
interop_begin tls

# certs: a CA, the server's certificate for localhost and 127.0.0.1, a client's from
# the same CA, and a rogue CA with a client certificate of its own
certs=$out/certs
mkdir -p "$certs"
cert() { # cert NAME CN SIGNING_CA [SAN]
	local name=$1 cn=$2 ca=$3 san=${4:-}
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$cn" \
		-keyout "$certs/$name.key" -out "$certs/$name.csr" 2>/dev/null
	openssl x509 -req -in "$certs/$name.csr" -CA "$certs/$ca.pem" -CAkey "$certs/$ca.key" \
		-CAcreateserial -days 2 ${san:+-extfile <(printf 'subjectAltName=%s' "$san")} \
		-out "$certs/$name.pem" 2>/dev/null
}
for ca in ca rogue-ca; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=xkv test $ca" -keyout "$certs/$ca.key" -out "$certs/$ca.pem" 2>/dev/null
done
cert server localhost ca "DNS:localhost,IP:127.0.0.1"
cert renewed localhost ca "DNS:localhost,IP:127.0.0.1" # what refresh_certs loads
cert client client ca
cert rogue rogue rogue-ca

# refuses NAME STATUS TEXT ARGS...: xkv-server ARGS exits STATUS at start, saying TEXT
refuses() {
	local name=$1 status=$2 text=$3 rc=0
	shift 3
	timeout 10 "$build/xkv-server" --backend uring --workers 1 --port "$(free_port)" \
		--memcached-port "$(free_port)" "$@" >"$out/$name.log" 2>&1 || rc=$?
	[ "$rc" -eq "$status" ] || fail "$name: exit $rc, not $status: $(cat "$out/$name.log")"
	grep -qF -- "$text" "$out/$name.log" || fail "$name: no \"$text\" in: $(cat "$out/$name.log")"
	echo "refused: $name ($(grep -F -- "$text" "$out/$name.log" | head -1))"
}
refuses key-mismatch 1 "rogue.key: error:05800074:x509 certificate routines::key values mismatch" \
	--tls-cert "$certs/server.pem" --tls-key "$certs/rogue.key"
refuses no-cert-file 1 "$certs/absent.pem" --tls-cert "$certs/absent.pem"
refuses key-alone 2 "the TLS options need --tls-cert" --tls-key "$certs/server.key"
refuses verify-no-ca 2 "--tls-verify require needs --tls-ca" \
	--tls-cert "$certs/server.pem" --tls-key "$certs/server.key" --tls-verify require
refuses bad-version 2 "1.2 or 1.3" --tls-cert "$certs/server.pem" --tls-min-version 1.1

# a GET answered over TLS, verifying the server against our CA
answers_get_tls() {
	/usr/bin/python3 - "$1" "$certs/ca.pem" "$certs/client.pem" "$certs/client.key" <<'PY'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            t.sendall(b"get xkv-interop-probe\r\n")
            sys.exit(0 if t.recv(100) == b"END\r\n" else 1)
except OSError:
    sys.exit(1)
PY
}
daemon_probe=answers_get_tls

# start PHASE MEMCACHED_O XKV_ARGS...: memcached -Z and xkv-server in TLS, on free ports
start() {
	local phase=$1 extra=$2
	shift 2
	memcached_start "memcached_$phase" -Z \
		-o "ssl_chain_cert=$certs/server.pem,ssl_key=$certs/server.key${extra:+,$extra}"
	xkv_port=$(free_port)
	daemon_start "xkv_$phase" "$xkv_port" "$build/xkv-server" --backend uring --workers 2 \
		--port "$(free_port)" --memcached-port "$xkv_port" \
		--tls-cert "$certs/server.pem" --tls-key "$certs/server.key" "$@"
}

start server ""
daemon_probe=answers_get memcached_start reference -I 2m # takes 1 MiB, as xkv
mc_port_var=memcached_server_port
/usr/bin/python3 "$dir/tls.py" server --certs "$certs" --xkv "$xkv_port" \
	--memcached "${!mc_port_var}" --reference "$reference_port"
/usr/bin/python3 "$dir/tls.py" refresh --certs "$certs" --xkv "$xkv_port" \
	--memcached "${!mc_port_var}"
reply=$(printf 'set s_client 0 0 2\r\nok\r\nget s_client\r\nquit\r\n' |
	timeout 10 openssl s_client -connect "127.0.0.1:$xkv_port" -CAfile "$certs/ca.pem" \
		-verify_return_error -quiet 2>"$out/s_client.err" | tr -d '\r' | tr '\n' ' ' || true)
[ "$reply" = "STORED VALUE s_client 0 2 ok END " ] ||
	fail "openssl s_client: \"$reply\": $(cat "$out/s_client.err")"
echo "openssl s_client: $reply"
# stopped holding a session mid-request and a handshake half done: nothing may leak
/usr/bin/python3 - "$xkv_port" "$certs/ca.pem" "$out/held" <<'PY' &
import socket, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[2])
session = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))),
                          server_hostname="localhost")
session.sendall(b"set tls-held 0 0 100\r\nhalf")
half = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
half.sendall(b"\x16\x03\x01\x02\x00\x01")
open(sys.argv[3], "w").close()
time.sleep(60)
PY
interop_pids+=($!)
for _ in $(seq 100); do [ -e "$out/held" ] || sleep 0.1; done
[ -e "$out/held" ] || fail "the connections to hold at stop were not opened"
sleep 0.2 # the server has them
daemon_stop xkv_server
daemon_stop memcached_server

start mutual "ssl_verify_mode=2,ssl_ca_cert=$certs/ca.pem,ssl_min_version=3" \
	--tls-ca "$certs/ca.pem" --tls-min-version 1.3
mc_port_var=memcached_mutual_port
/usr/bin/python3 "$dir/tls.py" mutual --certs "$certs" --xkv "$xkv_port" \
	--memcached "${!mc_port_var}"
daemon_stop xkv_mutual
daemon_stop memcached_mutual
echo "tls: passed"
