# The server end to end over loopback (io_uring backend), through the client library.
# Each suite runs the xkv-server of its own build, so the ASan run tests an ASan server.

SERVER_TESTS := $(BUILD)/tests/test_server_uring

$(BUILD)/tests/server/%.o: XKV_CFLAGS += -Itests/server -DXKV_SERVER_BIN='"$(abspath $(BUILD))/xkv-server"'

$(SERVER_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/server/%.o $(BUILD)/tests/server/server_proc.o \
		 $(BUILD)/libxkv.a | $(BUILD)/xkv-server
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter-out $(BUILD)/xkv-server,$^) -o $@ -lcriterion $(XKV_LDLIBS)

TESTS += $(SERVER_TESTS)
ASAN_TESTS += $(SERVER_TESTS)
