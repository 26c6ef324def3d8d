# SPDX-License-Identifier: Apache-2.0
# tests/inner: the `inner` transport driven by the NCCL-like harness, over a
# stand-in third-party plugin (fake_inner.c, exporting v11 and v8 over sock;
# recursive: SOCK_SRCS is plugin/sock's).
FAKE_INNER := $(BUILD)/tests/libnccl-net-fakeinner.so
FAKE_INNER_SRCS = tests/inner/fake_inner.c $(SOCK_SRCS) $(OOB_SRCS) \
                   $(BASE_SRCS)
$(FAKE_INNER): $(call obj,$(FAKE_INNER_SRCS))
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $^ -Wl,-z,defs $(LDFLAGS) -ldl -lpthread
tests: $(FAKE_INNER)
TEST_SCRIPTS += tests/inner/inner_harness.sh

# A stand-in libibverbs with no device, or one whose enumeration crashes
# (FAKEIBV_CRASH=devices), loaded through GDRTRACE_IBVERBS_LIB.
FAKE_IBVERBS := $(BUILD)/tests/libfakeibverbs.so
$(FAKE_IBVERBS): $(call obj,tests/inner/fake_ibverbs.c) tests/inner/fake_ibverbs.map
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $< -Wl,--version-script=tests/inner/fake_ibverbs.map $(LDFLAGS)
tests: $(FAKE_IBVERBS)
TEST_SCRIPTS += tests/inner/postmortem.sh
