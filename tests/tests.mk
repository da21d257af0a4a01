# SPDX-License-Identifier: MIT
# What the suites share: skipping (tests/skip.h: a probe for BPF, and a main() for
# suites that skip whole), and tests/run-tests.sh's own tests: on fake suites, and on
# the tests that need the XDP hosts where they cannot be made.

SKIP_OBJS := $(BUILD)/tests/skip.o
SKIP_MAIN_OBJS := $(BUILD)/tests/skip_main.o

$(BUILD)/tests/%.o: XKV_CFLAGS += -Itests

# the scripts' probe for BPF (tests/skip.sh, need_bpf), the suites' own (skip_reason_bpf)
$(BUILD)/tests/skip-bpf: $(BUILD)/tests/skip_bpf.o $(SKIP_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(BPF_LDLIBS)

$(BUILD)/tests/fake_suite: $(BUILD)/tests/runner/fake_suite.o $(SKIP_MAIN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion

$(BUILD)/tests/run-runner: tests/runner/test-runner.sh tests/run-tests.sh $(BUILD)/tests/fake_suite
	$(call script_launcher,$(abspath tests/run-tests.sh) $(abspath $(BUILD))/tests/fake_suite)

TESTS += $(BUILD)/tests/run-runner

# every test that needs the XDP hosts (tests/skip.sh, need_xdp_hosts)
XDP_HOST_RUNS := $(addprefix $(BUILD)/tests/,run-memcached-tcp-xdp run-replay run-server-xdp \
		 run-server-minos run-server-requeue run-server-mq2 run-server-mq4 \
		 run-server-dcrew run-linearizable run-bench-xdp run-bench-xdp-queues \
		 run-xdp-memcached run-soak run-bench-smoke run-latency run-dir-lab \
		 run-dir-controller run-dir-lincheck) \
		 $(BUILD)/test-netns

$(BUILD)/tests/run-no-xdp: tests/runner/test-no-xdp.sh tests/run-tests.sh | $(XDP_HOST_RUNS)
	$(call script_launcher,$(abspath tests/run-tests.sh) $(abspath $(XDP_HOST_RUNS)))

TESTS += $(BUILD)/tests/run-no-xdp

# what runs xkv-server on the io_uring backend skips as test_server_uring does, as nobody
NOT_ROOT_RUNS := $(addprefix $(BUILD)/tests/,test_server_uring run-mc-semantics run-mc-clients \
		 run-mc-twemproxy run-memcached-tcp-uring)

$(BUILD)/tests/run-not-root: tests/runner/test-not-root.sh | $(NOT_ROOT_RUNS)
	$(call script_launcher,$(abspath $(NOT_ROOT_RUNS)))

TESTS += $(BUILD)/tests/run-not-root
