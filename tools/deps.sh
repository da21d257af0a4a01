#!/usr/bin/env bash
# Installs the Debian packages xkv builds, tests and runs with. Quiet and quick
# when everything is already there, so `make test` can always call it.
set -euo pipefail

# libmd-dev: the client's ketama (md5); libclang-rt-dev: clang's libFuzzer and sanitizer
# runtimes, for make fuzz; memcached, python3-pymemcache, python3-pylibmc,
# libmemcached-tools and nutcracker: the memcached interop tests (tests/interop), which
# start their own daemons on their own ports: a system service these packages may start
# is never used; iputils-ping: ping across the coherence directory's lab (tests/dir);
# libmicrohttpd-dev: xkv-loader metrics' HTTP side; prometheus: its test scrapes it
# (its own daemon too); help2man: make install's man pages, from each program's --help;
# systemd: its unit verified (systemd-analyze); libssl-dev: memcached over TCP in TLS,
# openssl: its test's certificates and s_client
packages=(
	make gcc libc6-dev clang llvm libclang-rt-dev pkg-config bpftool libbpf-dev libxdp-dev
	xdp-tools liburing-dev libcriterion-dev liburcu-dev libpcap-dev iproute2 valgrind libtsan2
	libxxhash-dev libsodium-dev libmd-dev python3-matplotlib tcpreplay tcpdump memcached help2man
	python3-pymemcache python3-pylibmc libmemcached-tools nutcracker iputils-ping systemd
	libmicrohttpd-dev prometheus libssl-dev openssl
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# xkv-lincheck is Go: Debian's golang-go (1.19) unless a Go is already there
go_bin() { command -v go || echo /usr/local/go/bin/go; }
[ -x "$(go_bin)" ] || missing+=(golang-go)

# and its one module, porcupine, from the Go module proxy (quick once it is cached)
go_mod_download() {
	(cd "$(dirname "$0")/lincheck" &&
		GOFLAGS=-buildvcs=false GOTOOLCHAIN=local "$(go_bin)" mod download)
}

if [ ${#missing[@]} -eq 0 ]; then
	go_mod_download
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
go_mod_download
