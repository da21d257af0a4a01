# SPDX-License-Identifier: MIT
# The loader on a veth pair in throwaway namespaces (root). The test is a script:
# make writes a launcher that hands it the binaries of this build.

$(BUILD)/test-netns: tests/net/netns.sh $(BUILD)/xkv-loader $(BUILD)/tests/bpf/xdp_pass.bpf.o
	$(call script_launcher,$(abspath $(BUILD)/xkv-loader) $(abspath $(BUILD)/tests/bpf/xdp_pass.bpf.o))

TESTS += $(BUILD)/test-netns
