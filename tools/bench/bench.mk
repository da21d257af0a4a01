# xkv-bench: the load generator (docs/BENCH.md), its Criterion suite, and the
# AF_XDP client's run against a real server in two namespaces.

BENCH_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/bench/main.c %.bpf.c,$(wildcard tools/bench/*.c))) \
	      $(COMMON_OBJS)
# the AF_XDP transport reuses the server's UMEM and ring code and its frame parser/writer
# a server list's ketama is the client library's
BENCH_NET_OBJS := $(LIBXKV_NET) $(LIBXKV_CLIENT)
BENCH_LDLIBS := $(XKV_LDLIBS) -lxdp $(BPF_LDLIBS) $(CLIENT_LDLIBS)

$(BUILD)/tools/bench/afxdp.o: $(BUILD)/bench_client.skel.h

$(BUILD)/xkv-bench: $(BUILD)/tools/bench/main.o $(BENCH_OBJS) $(BENCH_NET_OBJS) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(BENCH_LDLIBS)

$(BUILD)/tests/bench/%.o: XKV_CFLAGS += -Itools/bench
$(BUILD)/tests/bench/test_afxdp.o: $(BUILD)/bench_client.skel.h

BENCH_TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/bench/*.c))

$(BUILD)/tests/test_bench: $(BENCH_TEST_OBJS) $(SKIP_OBJS) $(BENCH_OBJS) $(BENCH_NET_OBJS) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(BENCH_LDLIBS)

# xdp_client.sh makes its own namespaces, runs a server and the AF_XDP client, removes all
$(BUILD)/tests/run-bench-xdp: tests/bench/xdp_client.sh | $(BUILD)/xkv-bench $(BUILD)/xkv-server $(BUILD)/xkv-cli
	$(call script_launcher,$(abspath $(BUILD)))

# xdp_queues.sh: the same over a two-queue veth pair, the client on --queues 2
$(BUILD)/tests/run-bench-xdp-queues: tests/bench/xdp_queues.sh | $(BUILD)/xkv-bench $(BUILD)/xkv-server $(BUILD)/xkv-cli
	$(call script_launcher,$(abspath $(BUILD)))

# memcached.sh runs a memcached on loopback, drives it in both dialects, stops it
$(BUILD)/tests/run-memcached: tests/bench/memcached.sh | $(BUILD)/xkv-bench
	$(call script_launcher,$(abspath $(BUILD)))

# xdp_memcached.sh: memcached over UDP through the XDP backend, both dialects, both clients
$(BUILD)/tests/run-xdp-memcached: tests/bench/xdp_memcached.sh | $(BUILD)/xkv-bench $(BUILD)/xkv-server
	$(call script_launcher,$(abspath $(BUILD)))

# server_host.sh: server_stop and server_counter on planted servers (no root)
$(BUILD)/tests/run-server-host: tests/bench/server_host.sh tools/bench/server-host.sh \
				tests/counters.sh
	$(call script_launcher,)

# bench_smoke.sh: every benchmark program and script in its smoke mode, each to its table
$(BUILD)/tests/run-bench-smoke: tests/bench/bench_smoke.sh | $(BENCHES) $(BUILD)/xkv-bench \
				 $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/xkv-loader $(BUILD)/xkv-sim
	$(call script_launcher,$(abspath $(BUILD)))

BINS += $(BUILD)/xkv-bench
TESTS += $(BUILD)/tests/test_bench $(BUILD)/tests/run-bench-xdp $(BUILD)/tests/run-bench-xdp-queues \
	 $(BUILD)/tests/run-memcached $(BUILD)/tests/run-xdp-memcached $(BUILD)/tests/run-server-host \
	 $(BUILD)/tests/run-bench-smoke
ASAN_TESTS += $(BUILD)/tests/test_bench $(BUILD)/tests/run-bench-xdp \
	      $(BUILD)/tests/run-bench-xdp-queues $(BUILD)/tests/run-memcached \
	      $(BUILD)/tests/run-xdp-memcached
