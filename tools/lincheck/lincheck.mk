# SPDX-License-Identifier: MIT
# xkv-lincheck, the linearizability checker (Go, porcupine), its go test, and
# xkv-linload, the concurrent client that records a history for it
# (docs/LINEARIZABILITY.md).

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
	$(call script_launcher,$(abspath tools/lincheck) "$(LINCHECK_GO)")

BINS += $(BUILD)/xkv-lincheck
TESTS += $(BUILD)/tests/run-lincheck-go
