#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: help.sh BUILD_DIR
#
# Each program's --help comes from the table that parses its options (util/opts.h).
# This checks that every program and command lists exactly the options below, each
# with its short letter: the names and letters they have always had, so that one
# lost or renamed fails here, and one added must be named here too.
set -uo pipefail
build=$(cd "${1:?usage: help.sh BUILD_DIR}" && pwd)
failed=0

# expect "PROGRAM [COMMAND]" OPTION...: an OPTION is "-x,--name" or "--name"
expect() {
	local -a cmd
	local out opt letter name pattern listed
	read -ra cmd <<<"$1"
	shift
	if ! out=$("$build/${cmd[0]}" "${cmd[@]:1}" --help 2>&1); then
		echo "FAIL ${cmd[*]} --help exits non-zero: $out"
		failed=1
		return
	fi
	for opt in "$@"; do
		letter=${opt%%,*}
		name=${opt#*,}
		if [ "$letter" != "$opt" ]; then
			pattern="^  $letter, $name( |\$)"
		else
			pattern="^      $name( |\$)"
		fi
		if ! grep -qE -- "$pattern" <<<"$out"; then
			echo "FAIL ${cmd[*]} --help does not list $opt"
			failed=1
		fi
	done
	listed=$(grep -cE -- '^  (-[[:alnum:]], |    )--[[:alnum:]]' <<<"$out")
	if [ "$listed" -ne $# ]; then
		echo "FAIL ${cmd[*]} --help lists $listed options, this test knows $#"
		failed=1
	else
		echo "ok   ${cmd[*]} --help: $# options"
	fi
}

expect xkv-server -b,--backend -i,--iface -w,--workers -p,--port -M,--memcached-port -c,--max-conns --tls-cert \
	--tls-key --tls-ca --tls-verify --tls-min-version --tls-ciphers -m,--memory --mode -P,--policy --minos-percentile --minos-epoch-ms --hot-epoch-ms -a,--allow -l,--listen --trust \
	--skb --echo --compaction --compact-slo --latency --local-order -h,--help
expect "xkv-loader attach" -i,--iface -m,--mode -p,--port -M,--memcached-port -w,--workers \
	-P,--policy -a,--allow -l,--listen -f,--force -v,--verbose -h,--help
expect "xkv-loader detach" -i,--iface -f,--force -v,--verbose -h,--help
expect "xkv-loader status" -i,--iface -j,--json -v,--verbose -h,--help
expect "xkv-loader stats" -i,--iface -j,--json -S,--save -s,--since -v,--verbose -h,--help
expect xkv-bench -s,--server --protocol --transport --iface --queue --queues -t,--threads \
	-d,--depth -r,--rate -D,--duration --sweep --slo-us --slo-mult --slo-percentile --sweep-max \
	--sweep-retries --csv --interval-csv -k,--keys --warmup-keys --no-load --get-ratio \
	--key-size --value-size --value-profile --large-pct --large-size --large-keys \
	--large-pct-steps --step-seconds --zipf --shuffle --hot-in --seed --timeout-ms --label --json \
	-h,--help
expect xkv-sim --cores --policy --load --rate --write-frac --zipf --items --partitions \
	--service --fixed-ns --unit-ns --K --p-large --small-bytes --large-bytes --size-base-ns \
	--ns-per-byte --max-size --large-pct --epoch-us --channel-ns --jbsq --comp-ns --close \
	--lookahead --slo --requests --duration --warmup --servers --dir --replicated --write-servers \
	--popular-ppm --hop-ns --sweep --sweep-max --sweep-steps --seed \
	--json -h,--help
expect "xkv-trace gen" -w,--workload -n,--count -o,--out -s,--seed --src --dst --src-mac \
	--dst-mac --pps -h,--help
expect "xkv-trace check" -p,--port --lincheck -t,--timeout --history -h,--help
expect "xkv-trace record" -i,--iface -o,--out -p,--port -c,--count -t,--seconds -h,--help
expect xkv-cli -s,--server -t,--timeout -r,--retries -d,--dir -h,--help
expect xkv-dir -p,--pin -d,--state -s,--servers -P,--port -S,--select -o,--popular -W,--write-servers \
	-k,--skb -w,--wait -t,--timeout -e,--epoch -K,--keys -f,--force -j,--json -h,--help
# --counted is the run callgrind counts, not for people: not listed
expect xkv-storebench -t,--threads -k,--keys -s,--seconds -b,--batch -n,--no-callgrind -h,--help
expect xkv-linload -s,--server -o,--out -t,--threads -k,--keys -m,--mix -v,--value -D,--duration \
	-n,--ops --timeout-ms --seed -d,--dir -h,--help
expect bench-xdp -r,--rounds -n,--repeat -h,--help

[ "$failed" -eq 0 ] && echo "help: every program lists its options"
exit "$failed"
