# SPDX-License-Identifier: MIT
# xkv: everything builds into $(BUILD) (out of tree). `make V=1` shows commands.
# Each component adds its targets from a fragment beside its sources.

BUILD	?= build
CLANG	?= clang
BPFTOOL	?= bpftool
CFLAGS	?= -O2 -g
LDFLAGS	?=

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# C11 with the GNU extensions that liburcu's headers use
XKV_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wimplicit-fallthrough \
	     -Iinclude -Iuserspace -I$(BUILD) $(CFLAGS) -MMD -MP
XKV_LDLIBS = -lurcu-qsbr -lpthread

# A test that is a script ($<): $@ becomes a launcher that runs it with $(1), the
# paths of this build it needs, and whatever the launcher is given.
define script_launcher
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec %s %s "$$@"\n' "$(abspath $<)" "$(1)" > $@
	$(Q)chmod +x $@
endef

BINS	:=
TESTS	:=
ASAN_TESTS :=
TSAN_TESTS :=
BENCHES	:=

.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
.PHONY: all deps test check test-asan asan-suites test-tsan tsan-suites bench bench-minos \
	bench-dcrew bench-compaction bench-order bench-memcached bench-dir demo clean

include userspace/userspace.mk
include tests/tests.mk
include tests/unit/unit.mk
include tests/server/server.mk
include tests/layers/layers.mk
include bpf/bpf.mk
include loader/loader.mk
include tests/bpf/bpf.mk
include tests/net/net.mk
include tools/common/common.mk
include tools/sim/sim.mk
include tools/bench/bench.mk
include tools/lincheck/lincheck.mk
include tests/replay/replay.mk
include tests/interop/interop.mk
include tests/help/help.mk
include tests/memcached/tcp.mk
include tests/soak/soak.mk
include tools/stall/stall.mk
include tests/fuzz/fuzz.mk
include tests/dir/dir.mk
include tools/install/install.mk
include tests/install/install.mk

all: $(BINS)

# The one-command entry points install what is missing first.
deps:
	$(Q)tools/deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory check

# A server host and a client host on veth, both backends, one table (tools/demo.sh).
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh $(BUILD) 3

# Every suite, then the userspace and server suites again under AddressSanitizer, then
# the store's concurrency suite, the EWT's protocol and the counters' seqlock under
# ThreadSanitizer.
check: $(TESTS)
	$(Q)tests/run-tests.sh $(TESTS)
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory test-tsan

# The ASan build is also the checked build: -DXKV_CHECKS turns on the store's
# assertions (a second writer in a partition aborts) and the tests of them.
test-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -DXKV_CHECKS" \
		LDFLAGS="-fsanitize=address,undefined" asan-suites
	$(Q)tests/run-tests.sh $(ASAN_TESTS:$(BUILD)/%=$(BUILD)/asan/%)

asan-suites: $(ASAN_TESTS)

# The concurrency suites under ThreadSanitizer, in the checked build too
# (-DXKV_CHECKS). TSan does not model atomic_thread_fence (gcc's -Wtsan): the seqlock's
# fences order only atomic accesses, which TSan never reports, so ignoring them
# hides nothing. liburcu is not instrumented: the store announces its grace periods
# to TSan itself, and tests/unit/tsan.supp suppresses the one race liburcu's own
# bookkeeping shows (a record its call_rcu thread frees), and nothing else.
test-tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan TSAN=1 \
		CFLAGS="-O1 -g -fsanitize=thread -Wno-tsan -DXKV_CHECKS" \
		LDFLAGS="-fsanitize=thread" tsan-suites
	$(Q)TSAN_OPTIONS="suppressions=$(abspath tests/unit/tsan.supp) halt_on_error=1" \
		tests/run-tests.sh $(TSAN_TESTS:$(BUILD)/%=$(BUILD)/tsan/%)

tsan-suites: $(TSAN_TESTS)

# Benchmarks print figures and ratios; they assert nothing about time.
bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCHES)
	$(Q)for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done
	$(Q)echo "== memory beside memcached: 1 M items (tools/bench/memory.sh)"
	$(Q)tools/bench/memory.sh $(BUILD)
	$(Q)echo "== every server, both clients, one generator (tools/bench/bench-all.sh)"
	$(Q)tools/bench/bench-all.sh $(BUILD)

# Minos's size-aware sharding against crew, 2 workers on this 2-core machine, ~10 minutes
# (tools/bench/bench-minos.sh; docs/BENCH.md). Run it on an idle machine.
bench-minos: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-minos.sh $(BUILD)

# d-CREW against crew at 50 % and 85 % writes, 2 workers, ~5 minutes
# (tools/bench/bench-dcrew.sh; docs/BENCH.md). Run it on an idle machine.
bench-dcrew: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-dcrew.sh $(BUILD)

# Write compaction off and on under crew: a hot-key storm, zipf 1.25 at 5 % and 50 %
# writes, 2 workers, ~5 minutes (tools/bench/bench-compaction.sh; docs/BENCH.md). Run it
# on an idle machine.
bench-compaction: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-compaction.sh $(BUILD)

# A worker's local order, fifo against rml, under crew on the bimodal load, 2 workers,
# ~2 minutes (tools/bench/bench-order.sh; docs/BENCH.md). Run it on an idle machine.
bench-order: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-order.sh $(BUILD)

# The coherence directory's load balance: four servers behind it, ketama alone against
# the 32 hottest keys replicated, zipf 0.99 and 1.2; then popularity that moves, with
# xkv-dir run and each replica selection strategy; xkv-sim's cluster model beside it;
# ~10 minutes (tools/bench/bench-dir.sh; docs/DIRECTORY.md). Run it on an idle machine.
bench-dir: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-dir.sh $(BUILD)

# xkv speaking memcached against memcached, one worker/thread each: UDP GETs through XDP
# (AF_XDP client, SLO search) and TCP (memcaslap), ~2 minutes
# (tools/bench/bench-memcached-proto.sh; docs/BENCH.md). Run it on an idle machine.
bench-memcached: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench/bench-memcached-proto.sh $(BUILD)

clean:
	$(Q)rm -rf $(BUILD)

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XKV_CFLAGS) -c $< -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
