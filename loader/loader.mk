# SPDX-License-Identifier: MIT
# xkv-loader, a command line over userspace/bpfctl. BPFCTL_OBJS is what the
# server links to attach the same way.

BPF_LDLIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

BPFCTL_OBJS := $(BUILD)/userspace/bpfctl/bpfctl.o $(BUILD)/userspace/bpfctl/log.o
LOADER_OBJS := $(BUILD)/loader/xkv-loader.o

# the skeleton is generated: build it before anything that includes it
$(BPFCTL_OBJS) $(LOADER_OBJS): $(BUILD)/xkv.skel.h

$(BUILD)/xkv-loader: $(LOADER_OBJS) $(BPFCTL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(BPF_LDLIBS)

BINS += $(BUILD)/xkv-loader
