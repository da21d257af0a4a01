# memcached over TCP end to end (tests/memcached/tcp.sh): pymemcache against the
# xkv-server of this build, a run per backend (the XDP one skips alone where the
# machine cannot make its hosts); the script stops its servers by PID.

$(BUILD)/tests/run-memcached-tcp-%: tests/memcached/tcp.sh | $(BUILD)/xkv-server \
				     $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)) $*)

MEMCACHED_TCP_RUNS := $(BUILD)/tests/run-memcached-tcp-uring $(BUILD)/tests/run-memcached-tcp-xdp
TESTS += $(MEMCACHED_TCP_RUNS)
ASAN_TESTS += $(MEMCACHED_TCP_RUNS)
