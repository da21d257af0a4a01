# SPDX-License-Identifier: MIT
# What the suites share: skipping (tests/skip.h: a probe for BPF, and a main() for
# suites that skip whole), and tests/run-tests.sh's own test on fake suites.

SKIP_OBJS := $(BUILD)/tests/skip.o
SKIP_MAIN_OBJS := $(BUILD)/tests/skip_main.o

$(BUILD)/tests/%.o: XKV_CFLAGS += -Itests

$(BUILD)/tests/fake_suite: $(BUILD)/tests/runner/fake_suite.o $(SKIP_MAIN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion

$(BUILD)/tests/run-runner: tests/runner/test-runner.sh tests/run-tests.sh $(BUILD)/tests/fake_suite
	$(call script_launcher,$(abspath tests/run-tests.sh) $(abspath $(BUILD))/tests/fake_suite)

TESTS += $(BUILD)/tests/run-runner
