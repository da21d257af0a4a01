# SPDX-License-Identifier: MIT
# xkv-lincheck, the linearizability checker (Go, porcupine), its go test, and
# xkv-linload, the concurrent client that records a history for it
# (docs/LINEARIZABILITY.md). linload is C in its own folder: Go builds no C beside it.

# Debian's golang-go (tools/deps.sh) or a Go of one's own in /usr/local/go
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
# the module must build with Debian 12's Go 1.19, which knows no GOTOOLCHAIN
LINCHECK_GO := GOFLAGS=-buildvcs=false GOTOOLCHAIN=local $(GO)

$(BUILD)/xkv-lincheck: $(wildcard tools/lincheck/*.go) tools/lincheck/go.mod tools/lincheck/go.sum
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd tools/lincheck && $(LINCHECK_GO) build -o $(abspath $@) .

# the model and the CLI on histories written by hand
$(BUILD)/tests/run-lincheck-go: tests/lincheck/go-test.sh $(BUILD)/xkv-lincheck
	$(call script_launcher,$(abspath tools/lincheck) $(GO))

BINS += $(BUILD)/xkv-lincheck
TESTS += $(BUILD)/tests/run-lincheck-go

$(BUILD)/xkv-linload: $(BUILD)/tools/lincheck/linload/linload.o $(HISTORY_OBJS) $(COMMON_OBJS) \
		      $(LIBXKV_CLIENT) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(CLIENT_LDLIBS) -lxxhash

BINS += $(BUILD)/xkv-linload

# a server that answers nonsense, or never answers a PUT, for the rows that must fail
$(BUILD)/tests/xkv-broken-server: $(BUILD)/tests/lincheck/broken_server.o $(LIBXKV_PROTO) \
				  $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

# tests/server/test_linearizable.c: linload and lincheck against XDP servers, a row each
$(BUILD)/tests/server/test_linearizable.o: XKV_CFLAGS += \
	-DXKV_LINLOAD_BIN='"$(abspath $(BUILD))/xkv-linload"' \
	-DXKV_LINCHECK_BIN='"$(abspath $(BUILD))/xkv-lincheck"' \
	-DXKV_BENCH_BIN='"$(abspath $(BUILD))/xkv-bench"' \
	-DXKV_EARLY_REPLY_BIN='"$(abspath $(BUILD))/tests/xkv-server-early-reply"' \
	-DXKV_BROKEN_SERVER_BIN='"$(abspath $(BUILD))/tests/xkv-broken-server"'

$(BUILD)/tests/test_linearizable: $(BUILD)/tests/server/test_linearizable.o \
		$(BUILD)/tests/server/server_proc.o \
		$(LIBXKV_CLIENT) $(LIBXKV_PROTO) $(LIBXKV_UTIL) \
		| $(BUILD)/xkv-server $(BUILD)/xkv-loader $(BUILD)/xkv-linload \
		$(BUILD)/xkv-lincheck $(BUILD)/xkv-bench $(BUILD)/tests/xkv-server-early-reply \
		$(BUILD)/tests/xkv-broken-server
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ -lcriterion $(XKV_LDLIBS) $(CLIENT_LDLIBS) \
		$(BPF_LDLIBS)

$(BUILD)/tests/run-linearizable: tests/server/run-in-netns.sh $(BUILD)/tests/test_linearizable
	$(call script_launcher,$(abspath $(BUILD))/tests/test_linearizable)

TESTS += $(BUILD)/tests/run-linearizable

# the history writer (tools/common/history.c), and xkv-lincheck reading what it wrote
$(BUILD)/tests/lincheck/%.o: XKV_CFLAGS += -Itools \
	-DXKV_LINCHECK_BIN='"$(abspath $(BUILD))/xkv-lincheck"'

$(BUILD)/tests/test_history: $(BUILD)/tests/lincheck/test_history.o $(HISTORY_OBJS) \
			     | $(BUILD)/xkv-lincheck
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ -lcriterion -lxxhash

TESTS += $(BUILD)/tests/test_history
ASAN_TESTS += $(BUILD)/tests/test_history
