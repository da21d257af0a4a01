# make install into a DESTDIR: what lands, the man pages against each --help, the unit
# verified, and the unit's capabilities each needed and enough (tests/install/install.sh).
$(BUILD)/tests/run-install: tests/install/install.sh tools/install/install.mk \
			    tools/install/xkv-server@.service.in tools/netns-pair.sh | \
			    $(SBIN_PROGRAMS:%=$(BUILD)/%) $(BIN_PROGRAMS:%=$(BUILD)/%)
	$(call script_launcher,$(abspath $(BUILD)))

TESTS += $(BUILD)/tests/run-install
