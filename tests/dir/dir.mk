# The lab both tests run in (tests/dir/lab_env.sh), and what it runs.
DIR_LAB := tests/dir/lab_env.sh tools/netns-dir.sh tools/netns-pair.sh
DIR_LAB_BINS := $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/tests/bpf/xdp_pass.bpf.o \
		$(BUILD)/tests/skip-bpf

# The coherence directory's program on a real data path: the lab of tools/netns-dir.sh,
# two xkv-servers and a version 3 client (tests/dir/lab.sh, lab.py).
$(BUILD)/tests/run-dir-lab: tests/dir/lab.sh tests/dir/lab.py $(DIR_LAB) | $(BUILD)/bpf/dir.bpf.o \
			    $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-lab

# xkv-dir in the same lab, in front of two xkv-servers (tests/dir/controller.sh).
$(BUILD)/tests/run-dir-controller: tests/dir/controller.sh $(DIR_LAB) | $(BUILD)/xkv-dir \
				   $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-controller
