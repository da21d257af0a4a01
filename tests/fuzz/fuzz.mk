# SPDX-License-Identifier: MIT
# libFuzzer harnesses (tests/fuzz/README.md). Each builds two ways: replay-NAME, with
# replay_main.c and any compiler, replays its seed corpus in make test (and under
# ASan); fuzz-NAME, with clang's libFuzzer, is what make fuzz runs.

FUZZ_HARNESSES := decode reasm_raw reasm_ops memcached mc_udp mc_tcp
FUZZ_SECONDS ?= 60

$(BUILD)/tests/fuzz/fuzz_memcached.o: XKV_CFLAGS += -Itools/bench

# fuzz_harness(NAME, objects beside the harness, layers under the proto layer, -l libraries)
define fuzz_harness
$(BUILD)/tests/fuzz/replay-$(1): $(BUILD)/tests/fuzz/fuzz_$(1).o $(2) $(BUILD)/tests/fuzz/replay_main.o \
				 $(LIBXKV_PROTO) $(3)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(LDFLAGS) $$^ $(4) -o $$@

$(BUILD)/tests/fuzz/fuzz-$(1): $(BUILD)/tests/fuzz/fuzz_$(1).o $(2) $(LIBXKV_PROTO) $(3)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(LDFLAGS) $$^ $(4) -o $$@

$(BUILD)/tests/run-fuzz-$(1): $(BUILD)/tests/fuzz/replay-$(1)
	$$(call script_launcher,$(abspath tests/fuzz/corpus/$(1)))

TESTS += $(BUILD)/tests/run-fuzz-$(1)
ASAN_TESTS += $(BUILD)/tests/run-fuzz-$(1)
endef

$(eval $(call fuzz_harness,decode,))
$(eval $(call fuzz_harness,reasm_raw,$(BUILD)/tests/fuzz/reasm_fuzz.o))
$(eval $(call fuzz_harness,reasm_ops,$(BUILD)/tests/fuzz/reasm_fuzz.o))
$(eval $(call fuzz_harness,memcached,$(BUILD)/tools/bench/proto.o))
$(eval $(call fuzz_harness,mc_udp,))
$(eval $(call fuzz_harness,mc_tcp,$(BUILD)/userspace/engine/mc_exec.o,$(LIBXKV_STORE) $(LIBXKV_UTIL),$(XKV_LDLIBS) $(PROTO_LDLIBS)))

# The seed corpora, written through the codec (tests/fuzz/make_corpus.c): run again
# when the wire format changes.
$(BUILD)/tests/fuzz/make_corpus: $(BUILD)/tests/fuzz/make_corpus.o $(LIBXKV_PROTO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@

fuzz-corpus: $(BUILD)/tests/fuzz/make_corpus
	$(Q)rm -rf tests/fuzz/corpus
	$(Q)$< tests/fuzz/corpus

# Each harness for FUZZ_SECONDS, built by clang with libFuzzer, ASan and UBSan in
# $(BUILD)/fuzz; new inputs go to $(BUILD)/fuzz/corpus, crashes to $(BUILD)/fuzz/crashes.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=$(CLANG) \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=fuzzer,address,undefined" fuzz-harnesses
	$(Q)tests/fuzz/run-fuzz.sh $(BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-harnesses: $(FUZZ_HARNESSES:%=$(BUILD)/tests/fuzz/fuzz-%)

.PHONY: fuzz fuzz-harnesses fuzz-corpus
