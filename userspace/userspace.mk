# Userspace: the libraries (store, protocol, execution, client) as one static
# library, and the programs built on it.

LIBXKV_SRCS := $(wildcard userspace/store/*.c userspace/proto/*.c userspace/client/*.c) \
	       userspace/server/execute.c userspace/server/worker.c
LIBXKV_OBJS := $(LIBXKV_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/libxkv.a: $(LIBXKV_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

SERVER_OBJS := $(addprefix $(BUILD)/userspace/, server/main.o net/udp_uring.o net/reuseport.o)

$(BUILD)/userspace/net/reuseport.o: $(BUILD)/reuseport.skel.h

$(BUILD)/xkv-server: $(SERVER_OBJS) $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) -luring -lbpf -lelf -lz

$(BUILD)/xkv-cli: $(BUILD)/tools/cli/xkv-cli.o $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

# The store microbenchmark: ops/s per thread and instructions per operation.
$(BUILD)/xkv-storebench: $(BUILD)/tools/storebench/storebench.o $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

BINS += $(BUILD)/libxkv.a $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/xkv-storebench
BENCHES += $(BUILD)/xkv-storebench
