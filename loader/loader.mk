# SPDX-License-Identifier: MIT
# xkv-loader, a command line over userspace/bpfctl (BPFCTL_OBJS, userspace.mk); its
# options and JSON come from userspace/util. xkv-dir, the same over userspace/dirctl.

LOADER_OBJS := $(BUILD)/loader/xkv-loader.o $(BUILD)/loader/live.o $(BUILD)/loader/roles_show.o \
	       $(BUILD)/loader/snapshot.o $(BUILD)/loader/prometheus.o $(BUILD)/loader/metrics_http.o

# the skeleton is generated: build it before anything that includes it
$(LOADER_OBJS): $(BUILD)/xkv.skel.h

$(BUILD)/xkv-loader: $(LOADER_OBJS) $(BPFCTL_OBJS) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(BPF_LDLIBS) -lmicrohttpd

BINS += $(BUILD)/xkv-loader

# xkv-dir, the coherence directory's controller: a command line over userspace/dirctl.
DIRCTL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard userspace/dirctl/*.c))
$(DIRCTL_OBJS): $(BUILD)/dir.skel.h

$(BUILD)/xkv-dir: $(BUILD)/loader/xkv-dir.o $(DIRCTL_OBJS) $(LIBXKV_CLIENT) $(LIBXKV_PROTO) \
		  $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(CLIENT_LDLIBS) $(BPF_LDLIBS)

BINS += $(BUILD)/xkv-dir
