# The coherence directory's program on a real data path: the lab of tools/netns-dir.sh,
# stand-in servers and a client (tests/dir/lab.sh, lab.py).
$(BUILD)/tests/run-dir-lab: tests/dir/lab.sh tests/dir/lab.py tools/netns-dir.sh \
			    tools/netns-pair.sh | $(BUILD)/bpf/dir.bpf.o \
			    $(BUILD)/tests/bpf/xdp_pass.bpf.o $(BUILD)/tests/skip-bpf
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-lab
