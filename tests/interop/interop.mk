# Real memcached clients, a real memcached side by side, and twemproxy, against the
# server under test: xkv-server's memcached listener (tests/interop/lib.sh; memcached
# itself while xkv-server has no --memcached-port). Each script starts its daemons on
# free loopback ports and stops them by pid.

$(BUILD)/tests/run-mc-semantics: tests/interop/semantics.sh tests/interop/semantics.py \
		tests/interop/binary.py tests/interop/lib.sh | $(BUILD)/xkv-server $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

$(BUILD)/tests/run-mc-clients: tests/interop/clients.sh tests/interop/clients.py \
		tests/interop/lib.sh | $(BUILD)/xkv-server $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

$(BUILD)/tests/run-mc-twemproxy: tests/interop/twemproxy.sh tests/interop/twemproxy.py \
		tests/interop/lib.sh | $(BUILD)/xkv-server $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

# memcached in TLS beside memcached -Z with the same certificates
$(BUILD)/tests/run-mc-tls: tests/interop/tls.sh tests/interop/tls.py \
		tests/interop/lib.sh | $(BUILD)/xkv-server $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

# xkv's ketama, key for key, against nutcracker's placement over four memcacheds
$(BUILD)/tests/run-ketama: tests/interop/ketama.sh tests/interop/ketama.py \
		tests/interop/lib.sh | $(BUILD)/xkv-cli
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-mc-semantics $(BUILD)/tests/run-mc-clients \
	 $(BUILD)/tests/run-mc-twemproxy $(BUILD)/tests/run-ketama $(BUILD)/tests/run-mc-tls
# and against the ASan build's xkv-server: the listener's connections must not leak
ASAN_TESTS += $(BUILD)/tests/run-mc-semantics $(BUILD)/tests/run-mc-clients \
	      $(BUILD)/tests/run-mc-twemproxy $(BUILD)/tests/run-mc-tls
