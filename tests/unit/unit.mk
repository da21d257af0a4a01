# Criterion suites for the userspace libraries; also run under AddressSanitizer.

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

# The store's concurrency suite links the store alone, so that ThreadSanitizer
# (make test-tsan) builds no more than that.
STORE_CONCURRENCY_TEST := $(BUILD)/tests/test_store_concurrency

$(filter-out $(STORE_CONCURRENCY_TEST),$(UNIT_TESTS)): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o \
						       $(LIBXKV_CLIENT) $(LIBXKV_EXEC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(XKV_LDLIBS) $(BPF_LDLIBS) -lxxhash

# Under ThreadSanitizer (TSAN=1) Criterion cannot run (Snaipe/Criterion#274): the suite
# compiles against tests/unit/tsan/criterion/criterion.h and links its runner instead.
ifeq ($(TSAN),1)
$(BUILD)/tests/unit/test_store_concurrency.o: XKV_CFLAGS += -Itests/unit/tsan
STORE_CONCURRENCY_RUNNER := $(BUILD)/tests/unit/tsan/runner.o
else
STORE_CONCURRENCY_RUNNER :=
STORE_CONCURRENCY_LDLIBS := -lcriterion
endif

$(STORE_CONCURRENCY_TEST): $(BUILD)/tests/unit/test_store_concurrency.o $(STORE_CONCURRENCY_RUNNER) \
			   $(LIBXKV_STORE) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(STORE_CONCURRENCY_LDLIBS) $(XKV_LDLIBS) -lxxhash

TESTS += $(UNIT_TESTS)
ASAN_TESTS += $(UNIT_TESTS)
TSAN_TESTS += $(STORE_CONCURRENCY_TEST)
