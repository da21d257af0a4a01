# Userspace: one static library per layer (docs/DESIGN.md, "Layers"), so that a
# program links only the layers it uses; tests/layers/check-layers.sh keeps every include
# pointing down the stack. Link order is the stack's, top first.

define layer_library
LIBXKV_$(2) := $(BUILD)/libxkv-$(1).a
$(BUILD)/libxkv-$(1).a: $(patsubst %.c,$(BUILD)/%.o,$(wildcard userspace/$(1)/*.c userspace/$(1)/*/*.c))
	$$(call msg,AR,$$@)
	$$(Q)rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
BINS += $(BUILD)/libxkv-$(1).a
endef

$(eval $(call layer_library,util,UTIL))
$(eval $(call layer_library,proto,PROTO))
$(eval $(call layer_library,store,STORE))
$(eval $(call layer_library,net,NET))
$(eval $(call layer_library,client,CLIENT))
$(eval $(call layer_library,engine,ENGINE))

# The engine and everything under it: what executes requests, without a transport.
LIBXKV_EXEC := $(LIBXKV_ENGINE) $(LIBXKV_STORE) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
# the engine's validation tokens are SipHash-2-4 (crypto_shorthash)
ENGINE_LDLIBS := -lsodium
# the meta commands' base64 keys (b) decode with sodium_base642bin
PROTO_LDLIBS := -lsodium
# the client's ketama hashes with md5 (libmd) and counts points as twemproxy, in float
CLIENT_LDLIBS := -lmd -lm

# memcached over TCP in TLS: OpenSSL on memory buffers (net/tls.c)
NET_LDLIBS := -luring -lssl -lcrypto

BPF_LDLIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

# Attach, pin, status: shared by the loader and the server, so both attach the same way.
BPFCTL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard userspace/bpfctl/*.c))
$(BPFCTL_OBJS): $(BUILD)/xkv.skel.h

SERVER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard userspace/server/*.c))

$(BUILD)/userspace/net/reuseport.o: $(BUILD)/reuseport.skel.h

# BPFCTL_OBJS (loader/loader.mk): the server attaches the way the loader does
$(BUILD)/xkv-server: $(SERVER_OBJS) $(BPFCTL_OBJS) $(LIBXKV_ENGINE) $(LIBXKV_STORE) \
		     $(LIBXKV_NET) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(ENGINE_LDLIBS) $(NET_LDLIBS) -lxdp $(BPF_LDLIBS)

$(BUILD)/xkv-cli: $(BUILD)/tools/cli/xkv-cli.o $(LIBXKV_CLIENT) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(CLIENT_LDLIBS)

# The store microbenchmark: ops/s per thread and instructions per operation.
$(BUILD)/xkv-storebench: $(BUILD)/tools/storebench/storebench.o $(LIBXKV_STORE) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS)

BINS += $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/xkv-storebench
BENCHES += $(BUILD)/xkv-storebench
