# SPDX-License-Identifier: MIT
# The layering check (tests/layers/check-layers.sh) and its test on planted includes.

$(BUILD)/tests/run-layers: tests/layers/test-layers.sh tests/layers/check-layers.sh
	$(call script_launcher,$(abspath .))

TESTS += $(BUILD)/tests/run-layers
