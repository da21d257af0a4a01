# xkv-sim: the queueing simulator (docs/SIMULATION.md), its Criterion suite, and the
# reproduction of the Minos and C-4 model figures.

SIM_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/sim/main.c,$(wildcard tools/sim/*.c))) \
	    $(COMMON_OBJS)

# its options and JSON come from userspace/util; Minos's control loop from userspace/engine
$(BUILD)/xkv-sim: $(SIM_OBJS) $(BUILD)/tools/sim/main.o $(LIBXKV_ENGINE) $(LIBXKV_UTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lm

$(BUILD)/tests/sim/test_sim.o: XKV_CFLAGS += -Itools/sim

$(BUILD)/tests/test_sim: $(BUILD)/tests/sim/test_sim.o $(SIM_OBJS) $(LIBXKV_ENGINE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion -lm

BINS += $(BUILD)/xkv-sim
TESTS += $(BUILD)/tests/test_sim

# Debian's interpreter, the one python3-matplotlib installs into (a pyenv or venv
# python3 earlier in PATH usually lacks it).
SIM_PYTHON ?= /usr/bin/python3

# Runs the three sweeps (progress on stderr), then writes PNGs and the comparison
# table into $(BUILD)/sim-figures/. SIM_FIGURES_ARGS passes options, e.g. --only fig3.
.PHONY: sim-figures
sim-figures: $(BUILD)/xkv-sim
	$(Q)$(SIM_PYTHON) tools/sim/plot_figures.py --sim $(BUILD)/xkv-sim \
		--out $(BUILD)/sim-figures $(SIM_FIGURES_ARGS)

$(BUILD)/tests/sim/test_cluster.o: XKV_CFLAGS += -Itools/sim

$(BUILD)/tests/test_cluster: $(BUILD)/tests/sim/test_cluster.o $(SIM_OBJS) $(LIBXKV_ENGINE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lcriterion -lm

TESTS += $(BUILD)/tests/test_cluster
