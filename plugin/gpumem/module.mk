# SPDX-License-Identifier: Apache-2.0
# plugin/gpumem: the GPU-memory validation layer over sock (GDRTRACE_GPUMEM=1),
# its copier process (where every copy runs) and their tests.
# REG_SRCS, SOCK_SRCS and OOB_SRCS are set by later fragments: lists naming
# them use =.
GPUMEM_SRCS := plugin/gpumem/gpumem.c plugin/gpumem/gm_reg.c plugin/gpumem/copier_client.c
PLUGIN_SRCS += $(GPUMEM_SRCS)

# Where `make install` puts the copier (LIBEXECDIR: dist/module.mk); the
# plugin looks there last (after GDRTRACE_GPUMEM_COPIER and the folders
# relative to its own).
$(call obj,plugin/gpumem/copier_client.c): CPPFLAGS += -DGT_LIBEXECDIR=\"$(LIBEXECDIR)\"

# gdrtrace-gpumem-copier, beside the plugin in the build tree (where the
# plugin finds it uninstalled).
COPIER := $(BUILD)/gdrtrace-gpumem-copier
COPIER_SRCS := plugin/gpumem/copier_main.c $(DL_SRCS) $(BASE_SRCS)
$(COPIER): $(call obj,$(COPIER_SRCS))
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl -lpthread
all: $(COPIER)

TESTS += test_gpumem
test_gpumem_SRCS = tests/unit/test_gpumem.c $(GPUMEM_SRCS) $(SOCK_SRCS) $(OOB_SRCS) $(REG_SRCS) \
                   $(DL_SRCS) $(BASE_SRCS)
test_gpumem_LIBS := -ldl -lpthread -lcmocka

# The layer and its copier process over real sock
# connections: the built copier, the fake libcuda (tests/harness/fake_cuda.c)
# shared by both processes.
TESTS += test_gpumem_copier
test_gpumem_copier_SRCS = tests/unit/test_gpumem_copier.c $(GPUMEM_SRCS) $(SOCK_SRCS) \
                          $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_gpumem_copier_LIBS := -ldl -lpthread -lcmocka

# The copier's start many times over, a spy copier and a link flipper, for
# the link and link-flip cases of tests/harness/copier-trust.sh.
COPIER_RACE := $(BUILD)/tests/copier_race
$(COPIER_RACE): $(call obj,tests/harness/copier_race.c plugin/gpumem/copier_client.c \
                           $(DL_SRCS) $(BASE_SRCS))
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl -lpthread
tests: $(COPIER_RACE)

# The judging half of tests/gpu/gpumem.sh (GPU machine only), on canned runs.
TEST_SCRIPTS += tests/gpu/test-gpumem-judge.sh

# The copier next to host memory through sock, bound to one core and unbound,
# over the fake libcuda (figures for `make bench`).
BENCHES += bench_gpumem
bench_gpumem_SRCS = tests/bench/bench_gpumem.c $(GPUMEM_SRCS) $(SOCK_SRCS) $(OOB_SRCS) \
                    $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
bench_gpumem_LIBS := -ldl -lpthread
benches: $(BUILD)/tests/libfakecuda.so
