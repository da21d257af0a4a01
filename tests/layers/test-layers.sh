#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: test-layers.sh ROOT
#
# The layering check passes on the tree as it is, and fails on copies of it with
# one include planted that points up a layer, across to a sibling, or up a
# relative path: a check that cannot say no would prove nothing.
set -uo pipefail
root=$(cd "${1:?usage: test-layers.sh ROOT}" && pwd)
check="$root/tests/layers/check-layers.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/checks.sh"

if "$check" "$root"; then ok "the tree as it is"; else not_ok "the tree as it is"; fi

# plant FILE LINE: a fresh copy of the tree with LINE added to FILE; the check must
# fail and name FILE.
plant() {
	local file=$1 line=$2 copy="$tmp/copy" out
	rm -rf "$copy" && mkdir -p "$copy"
	cp -r "$root/include" "$root/bpf" "$root/userspace" "$copy/"
	mkdir -p "$(dirname "$copy/$file")"
	printf '%s\n' "$line" >> "$copy/$file"
	out=$("$check" "$copy")
	if [ $? -eq 1 ] && grep -q "^$file: " <<< "$out"; then
		ok "refused: $file: $line"
	else
		not_ok "not refused: $file: $line (output: $out)"
	fi
}

plant userspace/net/xsk.h '#include "engine/execute.h"'   # net reaching up to the engine
plant userspace/store/store.h '#include "net/packet.h"'   # a sibling of the same rank
plant userspace/proto/codec.h '#include "../server/server.h"'
plant include/xkv/proto.h '#include "proto/codec.h"'     # the bottom depends on nothing
plant userspace/newlayer/x.c '#include "proto/codec.h"'  # a folder without a rank
plant bpf/dir_select/c3.h '#include "engine/execute.h"' # a subfolder is its parent's layer

checks_done layers
