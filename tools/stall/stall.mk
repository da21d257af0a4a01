# xkv-stall (tools/stall/stall.c): what the machine kept from the CPUs while something
# else ran, for the soak (tests/soak/soak.sh) and every benchmark (tools/bench).

$(BUILD)/xkv-stall: $(BUILD)/tools/stall/stall.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lpthread

BINS += $(BUILD)/xkv-stall
