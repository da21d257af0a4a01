# Criterion suites for the userspace libraries; also run under AddressSanitizer.

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

# The suites that also run under ThreadSanitizer (make test-tsan): the store's
# concurrency suite, the EWT's protocol and the live counters' seqlock. They link the
# store and util alone, so that TSan builds no more than that.
TSAN_UNIT_TESTS := $(BUILD)/tests/test_store_concurrency $(BUILD)/tests/test_ewt \
		   $(BUILD)/tests/test_counters

$(filter-out $(TSAN_UNIT_TESTS),$(UNIT_TESTS)): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o \
						       $(LIBXKV_CLIENT) $(LIBXKV_EXEC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(UNIT_WRAP) $(filter %.o,$^) $(filter %.a,$^) -o $@ -lcriterion \
		$(XKV_LDLIBS) $(ENGINE_LDLIBS) $(CLIENT_LDLIBS) $(BPF_LDLIBS) -lxxhash

# Under ThreadSanitizer (TSAN=1) Criterion cannot run (Snaipe/Criterion#274): those
# suites compile against tests/unit/tsan/criterion/criterion.h and link its runner.
ifeq ($(TSAN),1)
$(TSAN_UNIT_TESTS:$(BUILD)/tests/%=$(BUILD)/tests/unit/%.o): XKV_CFLAGS += -Itests/unit/tsan
TSAN_UNIT_RUNNER := $(BUILD)/tests/unit/tsan/runner.o
else
TSAN_UNIT_RUNNER :=
TSAN_UNIT_LDLIBS := -lcriterion
endif

$(TSAN_UNIT_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TSAN_UNIT_RUNNER) $(LIBXKV_STORE) \
		    $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(TSAN_UNIT_LDLIBS) $(XKV_LDLIBS) -lxxhash

# util/counters.c maps the counters from their BPF map
$(BUILD)/tests/test_counters: XKV_LDLIBS += $(BPF_LDLIBS)

TESTS += $(UNIT_TESTS)
ASAN_TESTS += $(UNIT_TESTS)
TSAN_TESTS += $(TSAN_UNIT_TESTS)

# the TCP layer, on loopback
$(BUILD)/tests/test_tcp_uring: $(LIBXKV_NET)
$(BUILD)/tests/test_tcp_uring: XKV_LDLIBS += $(NET_LDLIBS)
$(BUILD)/tests/test_latency: XKV_LDLIBS += -lm

# the suites of expiry move the store's clock (tests/unit/store_clock.h)
STORE_CLOCK_TESTS := $(BUILD)/tests/test_store $(BUILD)/tests/test_mc_exec $(BUILD)/tests/test_mc_text
$(STORE_CLOCK_TESTS): $(BUILD)/tests/unit/store_clock.o
# (not LDFLAGS, which the sanitizer builds set on the command line)
$(STORE_CLOCK_TESTS): UNIT_WRAP := -Wl,--wrap=xkv_store_now
