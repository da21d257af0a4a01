# SPDX-License-Identifier: MIT
# tools/common: the workload model that xkv-bench, xkv-sim and xkv-trace share (one
# histogram, one random number generator, one zipf sampler), and its Criterion suite;
# and the writer of xkv-lincheck's histories, apart: it needs -lxxhash.

HISTORY_OBJS := $(BUILD)/tools/common/history.o
COMMON_OBJS := $(filter-out $(HISTORY_OBJS),$(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/common/*.c)))

# the tools and their tests name these headers "common/NAME.h"
$(BUILD)/tools/%.o $(BUILD)/tests/common/%.o $(BUILD)/tests/bench/%.o \
$(BUILD)/tests/sim/%.o $(BUILD)/tests/replay/%.o: XKV_CFLAGS += -Itools

$(BUILD)/tests/test_common: $(BUILD)/tests/common/test_common.o $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion -lm

TESTS += $(BUILD)/tests/test_common
ASAN_TESTS += $(BUILD)/tests/test_common
