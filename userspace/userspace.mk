# Userspace: the libraries (store, protocol, execution, client) as one static
# library, and the programs built on it.

LIBXKV_SRCS := $(wildcard userspace/store/*.c userspace/proto/*.c userspace/client/*.c \
		userspace/util/*.c) \
	       userspace/server/execute.c userspace/server/worker.c
LIBXKV_OBJS := $(LIBXKV_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/libxkv.a: $(LIBXKV_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

BPF_LDLIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

# Attach, pin, status: shared by the loader and the server, so both attach the same way.
BPFCTL_OBJS := $(BUILD)/userspace/bpfctl/bpfctl.o $(BUILD)/userspace/bpfctl/log.o
$(BPFCTL_OBJS): $(BUILD)/xkv.skel.h

SERVER_OBJS := $(addprefix $(BUILD)/userspace/, server/main.o server/backend_uring.o \
	       server/backend_xdp.o net/udp_uring.o net/reuseport.o net/xsk.o net/packet.o)

$(BUILD)/userspace/net/reuseport.o: $(BUILD)/reuseport.skel.h

# BPFCTL_OBJS (loader/loader.mk): the server attaches the way the loader does
$(BUILD)/xkv-server: $(SERVER_OBJS) $(BPFCTL_OBJS) $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) -luring -lxdp $(BPF_LDLIBS)

$(BUILD)/xkv-cli: $(BUILD)/tools/cli/xkv-cli.o $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

# The store microbenchmark: ops/s per thread and instructions per operation.
$(BUILD)/xkv-storebench: $(BUILD)/tools/storebench/storebench.o $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

BINS += $(BUILD)/libxkv.a $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/xkv-storebench
BENCHES += $(BUILD)/xkv-storebench
