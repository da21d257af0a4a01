# Sourced by the test scripts that read a server's counters from what it prints when it
# stops: lines "worker W NAME: N" (userspace/util/counters.c).

# server_counter LOG NAME: NAME summed over the workers. A log without it is an error
# (status 1, said on stderr), never a 0: the server died before it printed its
# counters, or NAME is wrong. Assign it (n=$(server_counter ...)) so that set -e sees it.
server_counter() {
	awk -v name="$2" '
	match($0, /^worker [0-9]+ /) {
		rest = substr($0, RLENGTH + 1)
		v = substr(rest, length(name) + 3)
		if (index(rest, name ": ") == 1 && v ~ /^[0-9]+$/) {
			sum += v
			found = 1
		}
	}
	END {
		if (!found) {
			printf "no counter \"%s\" in %s: the server did not print it\n", name,
				FILENAME > "/dev/stderr"
			exit 1
		}
		print sum
	}' "$1"
}
