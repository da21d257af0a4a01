# The coherence directory's program on a real data path: the lab of tools/netns-dir.sh,
# two xkv-servers and a version 3 client (tests/dir/lab.sh, lab.py).
$(BUILD)/tests/run-dir-lab: tests/dir/lab.sh tests/dir/lab.py tools/netns-dir.sh \
			    tools/netns-pair.sh | $(BUILD)/bpf/dir.bpf.o $(BUILD)/xkv-server \
			    $(BUILD)/xkv-cli $(BUILD)/tests/bpf/xdp_pass.bpf.o $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-lab
