# SPDX-License-Identifier: MIT
# The XDP programs: bpf/X.bpf.c -> $(BUILD)/bpf/X.bpf.o -> $(BUILD)/X.skel.h

BPF_CFLAGS = -target bpf -mcpu=v3 -O2 -g -Wall -Wextra -Werror -Wshadow \
	     -Wimplicit-fallthrough -Iinclude -Ibpf \
	     -I/usr/include/$(shell gcc -dumpmachine) -MMD -MP

# A program beside its users (tools/bench's client, tests/bpf's baseline) is built the
# same way: DIR/X.bpf.c -> $(BUILD)/DIR/X.bpf.o, its skeleton $(BUILD)/X.skel.h.
$(BUILD)/%.bpf.o: %.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

define bpf_skeleton
$(BUILD)/$(1).skel.h: $(BUILD)/$(2)/$(1).bpf.o
	$$(call msg,SKEL,$$@)
	$$(Q)$$(BPFTOOL) gen skeleton $$< name $(1)_bpf > $$@
endef
$(eval $(call bpf_skeleton,xkv,bpf))
$(eval $(call bpf_skeleton,dir,bpf))
$(eval $(call bpf_skeleton,reuseport,bpf))
$(eval $(call bpf_skeleton,bench_client,tools/bench))
$(eval $(call bpf_skeleton,xdp_pass,tests/bpf))

BPF_SKELS := $(BUILD)/xkv.skel.h $(BUILD)/xdp_pass.skel.h $(BUILD)/dir.skel.h
BPF_OBJS := $(BUILD)/bpf/xkv.bpf.o $(BUILD)/tests/bpf/xdp_pass.bpf.o $(BUILD)/bpf/reuseport.bpf.o \
	    $(BUILD)/bpf/dir.bpf.o
# kept: the network test attaches xdp_pass.bpf.o with ip(8) as a foreign program
.SECONDARY: $(BPF_OBJS)
