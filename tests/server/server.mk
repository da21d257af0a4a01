# The server end to end, through the client library: the io_uring backend over
# loopback, the XDP backend over veth between two namespaces. Each suite runs the
# xkv-server of its own build, so the ASan run tests an ASan server.

SERVER_TESTS := $(BUILD)/tests/test_server_uring $(BUILD)/tests/test_server_xdp \
		$(BUILD)/tests/test_server_minos $(BUILD)/tests/test_server_requeue \
		$(BUILD)/tests/test_server_multiqueue $(BUILD)/tests/test_server_dcrew

$(BUILD)/tests/server/%.o: XKV_CFLAGS += -Itests/server \
	-DXKV_SERVER_BIN='"$(abspath $(BUILD))/xkv-server"' \
	-DXKV_LOADER_BIN='"$(abspath $(BUILD))/xkv-loader"' \
	-DXKV_SLOW_RECEIVER_BPF='"$(abspath $(BUILD))/tests/server/slow_receiver.bpf.o"'

# the XDP program the XDP suite puts on its client's side of the veth
$(BUILD)/tests/server/%.bpf.o: tests/server/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SERVER_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/server/%.o $(BUILD)/tests/server/server_proc.o \
		 $(BUILD)/tests/server/workloads.o \
		 $(LIBXKV_CLIENT) $(LIBXKV_PROTO) $(LIBXKV_UTIL) | $(BUILD)/xkv-server $(BUILD)/xkv-loader
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ -lcriterion $(XKV_LDLIBS) $(CLIENT_LDLIBS) \
		$(BPF_LDLIBS)

# it skips whole where its servers cannot load their SK_REUSEPORT program (tests/skip.h)
$(BUILD)/tests/test_server_uring: $(SKIP_MAIN_OBJS) $(SKIP_OBJS)

# run-in-netns.sh makes the namespaces for the XDP suite and removes them after
$(BUILD)/tests/run-server-xdp: tests/server/run-in-netns.sh
	$(call script_launcher,$(abspath $(BUILD))/tests/test_server_xdp)

$(BUILD)/tests/run-server-xdp: $(BUILD)/tests/test_server_xdp \
			       $(BUILD)/tests/server/slow_receiver.bpf.o

$(BUILD)/tests/run-server-minos: tests/server/run-in-netns.sh $(BUILD)/tests/test_server_minos
	$(call script_launcher,$(abspath $(BUILD))/tests/test_server_minos)

# it reads the EWT as xkv-loader stats does
$(BUILD)/tests/test_server_dcrew: $(BPFCTL_OBJS)

# 8 workers on one queue: many more than the cores, for correctness
$(BUILD)/tests/run-server-dcrew: tests/server/run-in-netns.sh $(BUILD)/tests/test_server_dcrew
	$(call script_launcher,$(abspath $(BUILD))/tests/test_server_dcrew)

# its own veth pair, with queues to change, in the namespaces the script makes
$(BUILD)/tests/run-server-requeue: tests/server/run-in-netns.sh $(BUILD)/tests/test_server_requeue
	$(call script_launcher,$(abspath $(BUILD))/tests/test_server_requeue)

# the multi-queue suite, on a veth of 2 and of 4 queues a side
$(BUILD)/tests/run-server-mq%: tests/server/run-in-netns.sh $(BUILD)/tests/test_server_multiqueue
	$(call script_launcher,--queues $* $(abspath $(BUILD))/tests/test_server_multiqueue)

SERVER_RUNS := $(BUILD)/tests/test_server_uring $(BUILD)/tests/run-server-xdp \
	       $(BUILD)/tests/run-server-minos $(BUILD)/tests/run-server-requeue \
	       $(BUILD)/tests/run-server-mq2 $(BUILD)/tests/run-server-mq4 \
	       $(BUILD)/tests/run-server-dcrew
TESTS += $(SERVER_RUNS)
ASAN_TESTS += $(SERVER_RUNS)

# Broken servers for the tests that must fail, made at link time: the production
# objects unchanged, one call of theirs wrapped (-Wl,--wrap) by a file in
# tests/server/broken/. early-reply answers compacted PUTs when they are held, before
# their window's write (test_linearizable); early-release lets each write's EWT hold
# go as it claims it and dawdles in each write, so that two writers meet on 2 cores
# too (test_server_dcrew, whose checked build must abort).
BROKEN_SERVER_LIBS := $(SERVER_OBJS) $(BPFCTL_OBJS) $(LIBXKV_ENGINE) $(LIBXKV_STORE) \
		      $(LIBXKV_NET) $(LIBXKV_PROTO) $(LIBXKV_UTIL)

$(BUILD)/tests/broken/%.o: tests/server/broken/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XKV_CFLAGS) -c $< -o $@

$(BUILD)/tests/xkv-server-early-reply: WRAP := xkv_compact_hold
$(BUILD)/tests/xkv-server-early-release: WRAP := xkv_holds_claim xkv_apply_write
$(BUILD)/tests/xkv-server-early-%: $(BUILD)/tests/broken/early_%.o $(BROKEN_SERVER_LIBS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(foreach f,$(WRAP),-Wl,--wrap=$(f)) $^ -o $@ $(XKV_LDLIBS) $(ENGINE_LDLIBS) $(NET_LDLIBS) \
		-lxdp $(BPF_LDLIBS)

$(BUILD)/tests/test_server_dcrew: | $(BUILD)/tests/xkv-server-early-release
$(BUILD)/tests/server/test_server_dcrew.o: XKV_CFLAGS += \
	-DXKV_EARLY_RELEASE_BIN='"$(abspath $(BUILD))/tests/xkv-server-early-release"'

# every path a request takes keeps its arrival stamp (tests/server/latency.sh)
$(BUILD)/tests/run-latency: tests/server/latency.sh | $(BUILD)/xkv-server $(BUILD)/xkv-loader \
			    $(BUILD)/xkv-bench
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-latency

# xkv-loader metrics, checked by promtool and scraped by Prometheus (tests/server/metrics.sh)
$(BUILD)/tests/run-metrics: tests/server/metrics.sh | $(BUILD)/xkv-server $(BUILD)/xkv-loader \
			    $(BUILD)/xkv-bench
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-metrics
