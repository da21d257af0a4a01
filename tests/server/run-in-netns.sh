#!/usr/bin/env bash
# Runs a test binary against a client and a server host (tools/netns-pair.sh), made
# here and removed on every way out. The test reads their names from XKV_* variables.
# --queues N gives each end of the veth N tx and rx queues (XKV_QUEUES to the test).
#   run-in-netns.sh [--queues N] TEST_BINARY [ARGS...]
set -euo pipefail

queues=1
if [ "${1:-}" = --queues ]; then
	queues=$2
	shift 2
fi

. "$(dirname "$0")/../../tools/netns-pair.sh"
. "$(dirname "$0")/../skip.sh"
need_xdp_hosts
ns_s="xkvt-$$-s" ns_c="xkvt-$$-c" if_s="xs$$" if_c="xc$$" ip_s=10.201.0.1 ip_c=10.201.0.2
trap netns_pair_down EXIT INT TERM
netns_pair_up "$queues"
# a second client address that the server's allowlist leaves out
ip -n "$ns_c" addr add 10.201.0.3/24 dev "$if_c"

export XKV_NS_SERVER=$ns_s XKV_NS_CLIENT=$ns_c XKV_IFACE=$if_s XKV_IFACE_CLIENT=$if_c
export XKV_SERVER_IP=$ip_s XKV_CLIENT_IP=$ip_c XKV_STRANGER_IP=10.201.0.3
export XKV_QUEUES=$queues
# one server at a time on the one interface; not exec: the trap must run after
export CRITERION_JOBS=1
"$@"
