# memcached over TCP end to end (tests/memcached/tcp.sh): pymemcache against the
# xkv-server of this build, on both backends; the script stops its servers by PID.

$(BUILD)/tests/run-memcached-tcp: tests/memcached/tcp.sh | $(BUILD)/xkv-server
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-memcached-tcp
ASAN_TESTS += $(BUILD)/tests/run-memcached-tcp
