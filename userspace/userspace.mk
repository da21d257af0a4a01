# The userspace libraries (store, protocol, request execution) as one static library.

LIBXKV_SRCS := $(wildcard userspace/store/*.c userspace/proto/*.c) userspace/server/execute.c
LIBXKV_OBJS := $(LIBXKV_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/libxkv.a: $(LIBXKV_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# The store microbenchmark: ops/s per thread and instructions per operation.
$(BUILD)/xkv-storebench: $(BUILD)/tools/storebench/storebench.o $(BUILD)/libxkv.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

BINS += $(BUILD)/libxkv.a $(BUILD)/xkv-storebench
BENCHES += $(BUILD)/xkv-storebench
