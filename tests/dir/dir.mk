# The lab both tests run in (tests/dir/lab_env.sh), and what it runs.
DIR_LAB := tests/dir/lab_env.sh tools/netns-dir.sh tools/netns-pair.sh
DIR_LAB_BINS := $(BUILD)/xkv-server $(BUILD)/xkv-cli $(BUILD)/tests/bpf/xdp_pass.bpf.o \
		$(BUILD)/tests/skip-bpf

# The coherence directory's program on a real data path: the lab of tools/netns-dir.sh,
# two xkv-servers and a version 3 client (tests/dir/lab.sh, lab.py).
$(BUILD)/tests/run-dir-lab: tests/dir/lab.sh tests/dir/lab.py $(DIR_LAB) | $(BUILD)/bpf/dir.bpf.o \
			    $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-lab

# xkv-dir in the same lab, in front of two xkv-servers (tests/dir/controller.sh).
$(BUILD)/tests/run-dir-controller: tests/dir/controller.sh $(DIR_LAB) | $(BUILD)/xkv-dir \
				   $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-controller

# Directories with one planted fault each, which run-dir-lincheck must catch:
# xkv-dir-join, its program's Algorithm 2 broken by tests/dir/broken/join.sed (built from
# the program's own source, so that it cannot drift from it); xkv-dir-no_migration, its
# controller removing keys without the migration phase (tests/dir/broken/no_migration.c,
# by --wrap).
DIR_BROKEN := $(BUILD)/tests/dir/broken
XKV_DIR_LINK = $(CC) $(LDFLAGS) $^ -o $@ $(XKV_LDLIBS) $(CLIENT_LDLIBS) $(BPF_LDLIBS)

$(DIR_BROKEN)/join/dir.bpf.c: bpf/dir.bpf.c tests/dir/broken/join.sed
	$(call msg,SED,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -f tests/dir/broken/join.sed $< > $@
	$(Q)! cmp -s $< $@ || { echo "join.sed changed nothing in $<" >&2; rm -f $@; exit 1; }

$(DIR_BROKEN)/join/dir.skel.h: $(DIR_BROKEN)/join/dir.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name dir_bpf > $@

$(DIR_BROKEN)/join/dir.bpf.o: $(DIR_BROKEN)/join/dir.bpf.c
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# attach.c against the broken skeleton, found before the real one
$(DIR_BROKEN)/join/attach.o: userspace/dirctl/attach.c $(DIR_BROKEN)/join/dir.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -I$(DIR_BROKEN)/join $(XKV_CFLAGS) -c $< -o $@

$(DIR_BROKEN)/xkv-dir-join: $(BUILD)/loader/xkv-dir.o $(DIR_BROKEN)/join/attach.o \
			    $(filter-out %/attach.o,$(DIRCTL_OBJS)) $(LIBXKV_CLIENT) $(LIBXKV_PROTO) \
			    $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(XKV_DIR_LINK)

$(DIR_BROKEN)/xkv-dir-no_migration: $(BUILD)/loader/xkv-dir.o \
				    $(BUILD)/tests/dir/broken/no_migration.o $(DIRCTL_OBJS) \
				    $(LIBXKV_CLIENT) $(LIBXKV_PROTO) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(XKV_DIR_LINK) -Wl,--wrap=dirctl_migrate

# Linearizability across four servers through the directory, and the faults caught
# (tests/dir/lincheck.sh).
$(BUILD)/tests/run-dir-lincheck: tests/dir/lincheck.sh $(DIR_LAB) | $(BUILD)/xkv-dir \
				 $(BUILD)/xkv-linload $(BUILD)/xkv-lincheck $(DIR_LAB_BINS) \
				 $(DIR_BROKEN)/xkv-dir-join $(DIR_BROKEN)/xkv-dir-no_migration
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-lincheck

# The strategies that choose a server, each with the servers alike and one made slow
# (tests/dir/select.sh).
$(BUILD)/tests/run-dir-select: tests/dir/select.sh $(DIR_LAB) | $(BUILD)/xkv-dir \
			       $(BUILD)/xkv-bench $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-select

# the controller's choice of keys, a unit suite (tests/unit/unit.mk) over dirctl
$(BUILD)/tests/test_dirctl: $(DIRCTL_OBJS)

# xkv-dir run, the controller's loop, replicating the key its servers report hottest
# (tests/dir/run.sh).
$(BUILD)/tests/run-dir-run: tests/dir/run.sh $(DIR_LAB) | $(BUILD)/xkv-dir $(BUILD)/xkv-bench \
			    $(DIR_LAB_BINS)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-dir-run
