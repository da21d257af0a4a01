# SPDX-License-Identifier: MIT
# The XDP programs: bpf/X.bpf.c -> $(BUILD)/bpf/X.bpf.o -> $(BUILD)/X.skel.h

BPF_CFLAGS = -target bpf -mcpu=v3 -O2 -g -Wall -Wextra -Werror -Wshadow \
	     -Wimplicit-fallthrough -Iinclude -Ibpf \
	     -I/usr/include/$(shell gcc -dumpmachine) -MMD -MP

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

BPF_SKELS := $(BUILD)/xkv.skel.h $(BUILD)/xdp_pass.skel.h
BPF_OBJS := $(BUILD)/bpf/xkv.bpf.o $(BUILD)/bpf/xdp_pass.bpf.o $(BUILD)/bpf/reuseport.bpf.o
# kept: the network test attaches xdp_pass.bpf.o with ip(8) as a foreign program
.SECONDARY: $(BPF_OBJS)
