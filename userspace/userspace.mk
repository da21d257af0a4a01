# The userspace libraries: the store and the protocol codec, one static library.

LIBXKV_SRCS := $(wildcard userspace/store/*.c userspace/proto/*.c)
LIBXKV_OBJS := $(LIBXKV_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/libxkv.a: $(LIBXKV_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

BINS += $(BUILD)/libxkv.a
