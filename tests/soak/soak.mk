# The soak (tests/soak/soak.sh, issue R2 "Nothing stays stuck"): one XDP server under
# every kind of client at once for SOAK_SECONDS, a worker stopped midway, then its
# counters and maps checked (docs/DESIGN.md, "The soak"). 60 s of it run in make test
# (run-soak, about 75 s in all); make soak runs it for SOAK_SECONDS (300 by default),
# with progress. Not in the ASan pass: its figures (gaps, RSS) are the optimised
# build's, and the ASan servers run the same paths in their own suites.

SOAK_BINS := $(BUILD)/tests/soak/xkv-soak-freeze

$(BUILD)/tests/soak/xkv-soak-freeze: $(BUILD)/tests/soak/freeze.o
$(SOAK_BINS):
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lpthread

$(BUILD)/tests/run-soak: tests/soak/soak.sh tests/soak/mc_load.py tests/soak/gaps.py \
		tests/soak/facts.py | $(SOAK_BINS) $(BUILD)/xkv-stall $(BUILD)/xkv-server $(BUILD)/xkv-loader \
		$(BUILD)/xkv-bench $(BUILD)/xkv-cli $(BUILD)/xkv-linload $(BUILD)/xkv-lincheck
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-soak

.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all $(SOAK_BINS)
	$(Q)SOAK_SECONDS=$(or $(SOAK_SECONDS),300) \
		tests/soak/soak.sh $(BUILD)
