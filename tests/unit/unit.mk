# Criterion suites for the userspace libraries; also run under AddressSanitizer.

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

$(UNIT_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIBXKV_CLIENT) $(LIBXKV_EXEC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(XKV_LDLIBS) $(BPF_LDLIBS) -lxxhash

TESTS += $(UNIT_TESTS)
ASAN_TESTS += $(UNIT_TESTS)
