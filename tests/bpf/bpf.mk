# SPDX-License-Identifier: MIT
# BPF_PROG_RUN tests (Criterion) and the per-packet benchmark of the XDP program.

XDP_FIXTURE_OBJS := $(BUILD)/tests/bpf/fixture.o $(BUILD)/tests/bpf/packet.o $(BPFCTL_OBJS)
DIR_FIXTURE_OBJS := $(BUILD)/tests/bpf/dir_fixture.o $(BUILD)/tests/bpf/packet.o

$(BUILD)/tests/bpf/fixture.o $(BUILD)/tests/bpf/test_xdp.o: $(BUILD)/xkv.skel.h
$(BUILD)/tests/bpf/bench_xdp.o: $(BUILD)/xkv.skel.h $(BUILD)/xdp_pass.skel.h $(BUILD)/dir.skel.h

# it skips whole where XDP programs do not load (tests/skip.h)
$(BUILD)/test-xdp: $(BUILD)/tests/bpf/test_xdp.o $(XDP_FIXTURE_OBJS) $(SKIP_MAIN_OBJS) $(SKIP_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(BPF_LDLIBS)

$(BUILD)/bench-xdp: $(BUILD)/tests/bpf/bench_xdp.o $(XDP_FIXTURE_OBJS) $(DIR_FIXTURE_OBJS) \
		   $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(BPF_LDLIBS)

$(BUILD)/tests/bpf/test_dir.o $(BUILD)/tests/bpf/dir_fixture.o: $(BUILD)/dir.skel.h

# the coherence directory's program (bpf/dir.bpf.c), rows of Pegasus's algorithms
$(BUILD)/test-dir: $(BUILD)/tests/bpf/test_dir.o $(DIR_FIXTURE_OBJS) $(SKIP_MAIN_OBJS) \
		   $(SKIP_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion $(BPF_LDLIBS)

TESTS += $(BUILD)/test-xdp $(BUILD)/test-dir
BENCHES += $(BUILD)/bench-xdp
