# make install (README, docs/LOADER.md "Installing"): the programs, their man pages made
# by help2man from their own --help (one source: the option tables), and a systemd unit
# template. PREFIX (/usr/local) and DESTDIR as usual; the unit goes under PREFIX's
# lib/systemd/system, its config under SYSCONFDIR (/etc).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
SBIN_PROGRAMS := xkv-server xkv-loader xkv-dir
BIN_PROGRAMS := xkv-cli xkv-bench
MAN_PAGES := $(SBIN_PROGRAMS:%=$(BUILD)/man/%.8) $(BIN_PROGRAMS:%=$(BUILD)/man/%.1)
# the version memcached clients are told (XKV_MC_VERSION), defined once
XKV_VERSION := $(shell sed -n 's/^\#define XKV_MC_VERSION "\(.*\)"/\1/p' userspace/proto/mc_text.h)

# what each program is, for its page's NAME line
man_name_xkv-server := the xkv key-value server: XDP steering, AF_XDP or io_uring, memcached
man_name_xkv-loader := load, inspect and detach xkv's XDP program and its maps
man_name_xkv-dir := the coherence directory's controller (Pegasus on XDP)
man_name_xkv-cli := get, put and delete keys on xkv servers
man_name_xkv-bench := load generator for xkv and memcached servers

$(BUILD)/man/%.8 $(BUILD)/man/%.1: $(BUILD)/%
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)help2man --no-info --no-discard-stderr --version-string=$(XKV_VERSION) \
		--section=$(subst .,,$(suffix $@)) --name="$(man_name_$*)" --output=$@ $<

# the unit is written at install, with this install's PREFIX and SYSCONFDIR
install: $(SBIN_PROGRAMS:%=$(BUILD)/%) $(BIN_PROGRAMS:%=$(BUILD)/%) $(MAN_PAGES) \
	 tools/install/xkv-server@.service.in
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 755 $(SBIN_PROGRAMS:%=$(BUILD)/%) $(DESTDIR)$(PREFIX)/sbin
	install -m 755 $(BIN_PROGRAMS:%=$(BUILD)/%) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man1
	sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		tools/install/xkv-server@.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/xkv-server@.service
	chmod 644 $(DESTDIR)$(PREFIX)/lib/systemd/system/xkv-server@.service

.PHONY: install
