# SPDX-License-Identifier: MIT
# Every program's --help lists the options of its table (tests/help/help.sh).

HELP_PROGRAMS := $(addprefix $(BUILD)/,xkv-server xkv-loader xkv-bench xkv-sim xkv-trace \
		 xkv-cli xkv-dir xkv-storebench xkv-linload bench-xdp)

$(BUILD)/tests/run-help: tests/help/help.sh | $(HELP_PROGRAMS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-help
