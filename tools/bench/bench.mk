# xkv-bench: the load generator (docs/BENCH.md) and its Criterion suite.

BENCH_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/bench/main.c,$(wildcard tools/bench/*.c)))

$(BUILD)/xkv-bench: $(BUILD)/tools/bench/main.o $(BENCH_OBJS) $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) -lm

$(BUILD)/tests/bench/test_bench.o: XKV_CFLAGS += -Itools/bench

$(BUILD)/tests/test_bench: $(BUILD)/tests/bench/test_bench.o $(BENCH_OBJS) $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(XKV_LDLIBS) -lm

BINS += $(BUILD)/xkv-bench
TESTS += $(BUILD)/tests/test_bench
ASAN_TESTS += $(BUILD)/tests/test_bench
