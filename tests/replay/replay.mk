# xkv-trace (tools/trace, docs/TRACE.md): request traces for replay, its Criterion
# suite, and the replay test: a generated trace sent with tcpreplay to an XDP server
# on veth, the replies captured and checked.

TRACE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out %/main.c,$(wildcard tools/trace/*.c))) \
	      $(BUILD)/tools/bench/workload.o $(COMMON_OBJS) $(HISTORY_OBJS) $(LIBXKV_NET)
TRACE_LDLIBS := -lpcap -lm -lxxhash

# keys and their popularity come from xkv-bench's workload
$(BUILD)/tools/trace/%.o $(BUILD)/tests/replay/%.o: XKV_CFLAGS += -Itools/bench -Itools/trace

$(BUILD)/xkv-trace: $(BUILD)/tools/trace/main.o $(TRACE_OBJS) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(TRACE_LDLIBS)

# check's suite runs the checker beside it (build/tests/../xkv-lincheck)
$(BUILD)/tests/test_trace: $(BUILD)/tests/replay/test_trace.o $(TRACE_OBJS) $(LIBXKV_EXEC) \
		| $(BUILD)/xkv-lincheck
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(XKV_LDLIBS) $(ENGINE_LDLIBS) $(TRACE_LDLIBS)

# replay.sh makes its namespaces and removes them; it runs the binaries of this build
$(BUILD)/tests/run-replay: tests/replay/replay.sh | $(BUILD)/xkv-trace $(BUILD)/xkv-server \
		$(BUILD)/xkv-loader $(BUILD)/xkv-cli $(BUILD)/xkv-lincheck
	$(call script_launcher,$(abspath $(BUILD)))

# the verdict on one replay, on reports written by hand (no root)
$(BUILD)/tests/run-replay-verdict: tests/replay/verdict_test.sh tests/replay/verdict.sh
	$(call script_launcher,)

# replay.sh with a fault planted must fail
$(BUILD)/tests/run-replay-faults: tests/replay/faults.sh | $(BUILD)/tests/run-replay
	$(call script_launcher,$(abspath $(BUILD)))

BINS += $(BUILD)/xkv-trace
TESTS += $(BUILD)/tests/test_trace $(BUILD)/tests/run-replay $(BUILD)/tests/run-replay-verdict \
	 $(BUILD)/tests/run-replay-faults
ASAN_TESTS += $(BUILD)/tests/test_trace
