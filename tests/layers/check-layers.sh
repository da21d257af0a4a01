#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: check-layers.sh [ROOT]
#
# The stack runs one way (docs/DESIGN.md, "Layers"): a file may include its own
# layer or a lower one, never a higher one nor a sibling of its own rank. Checks
# every quoted #include under ROOT's include/, bpf/ and userspace/; prints each
# include that breaks the rule and exits 1 if there is one.
set -uo pipefail
root=${1:-.}

# A layer's rank; equal ranks may not see each other (store and net know nothing
# of one another). A generated BPF skeleton (X.skel.h) ranks with bpf/, its source.
declare -A rank=(
	[xkv]=0
	[bpf]=1 [skel]=1
	[util]=2 [proto]=2 [bpfctl]=2
	[store]=3 [net]=3 [client]=3
	[engine]=4 [dirctl]=4
	[server]=5
)

# The layer a file belongs to, from its path.
layer_of_file() {
	case $1 in
	include/xkv/*) echo xkv ;;
	bpf/*) echo bpf ;;
	userspace/*/*) local rest=${1#userspace/}; echo "${rest%%/*}" ;;
	*) echo "?" ;;
	esac
}

# The layer an include names: "dir/file.h" by its directory; a bare "file.h"
# is a sibling in the includer's own directory (or the xkv headers beside it), and
# so is "sub/file.h" found under the includer's directory (bpf/dir_select/).
layer_of_include() {
	local file_layer=$1 inc=$2 file=$3
	case $inc in
	*../*) echo "?" ;;
	*/*) if [ -e "$(dirname "$file")/$inc" ]; then echo "$file_layer"; else echo "${inc%%/*}"; fi ;;
	*.skel.h) echo skel ;;
	*) echo "$file_layer" ;;
	esac
}

bad=0
cd "$root" || exit 2
while IFS= read -r f; do
	from=$(layer_of_file "$f")
	if [ -z "${rank[$from]+x}" ]; then
		echo "$f: layer '$from' has no rank in check-layers.sh: give it one"
		bad=1
		continue
	fi
	while IFS= read -r line; do
		inc=${line#*\"}
		inc=${inc%%\"*}
		to=$(layer_of_include "$from" "$inc" "$f")
		if [ -z "${rank[$to]+x}" ]; then
			echo "$f: #include \"$inc\": not a layer (no relative paths up)"
			bad=1
		elif [ "$to" != "$from" ] && [ "${rank[$to]}" -ge "${rank[$from]}" ]; then
			echo "$f: #include \"$inc\": $from (rank ${rank[$from]}) may not use $to (rank ${rank[$to]})"
			bad=1
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	# <xkv/...> is the bottom layer and always allowed; nothing else uses <>
done < <(find include bpf userspace -name '*.[ch]' | sort)

[ $bad -eq 0 ] && echo "layers: every include points down"
exit $bad
