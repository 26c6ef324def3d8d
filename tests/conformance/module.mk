# SPDX-License-Identifier: Apache-2.0
# tests/conformance: NCCL's call patterns against a net plugin.
# gdrtrace-conform loads any plugin library (docs/conformance.md);
# conform-sock.sh runs it on the built plugin (sock, and inner wrapping
# sock); test_conform_ib runs the same patterns on ib over a verbs model.
CONFORM_BIN := $(BUILD)/gdrtrace-conform
CONFORM_SRCS := tests/conformance/cf_main.c tests/conformance/cf_dl.c \
                tests/conformance/cf_patterns.c
$(CONFORM_BIN): $(call obj,$(CONFORM_SRCS))
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl
tests: $(CONFORM_BIN)
TEST_SCRIPTS += tests/conformance/conform-sock.sh

# ib's transport over the in-process RC model of tests/unit/fake_rc.h
# (recursive =: IB_SRCS, OOB_SRCS, REG_SRCS are set by other fragments).
TESTS += test_conform_ib
test_conform_ib_SRCS = tests/conformance/test_conform_ib.c tests/conformance/cf_patterns.c \
                       $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_conform_ib_LIBS := -ldl -lpthread -lcmocka
