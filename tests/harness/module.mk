# SPDX-License-Identifier: Apache-2.0
# tests/harness: the NCCL-like driver of the built plugin (one test per ABI
# version), and the export check.  The harness dlopens the plugin, so it
# links none of its objects.
HARNESS_BIN := $(BUILD)/harness/harness
HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,tests/harness/harness.c)

$(HARNESS_BIN): $(HARNESS_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl

# `make tests` / `make check-run` and `make demo` (demo-build) build it too.
tests: $(HARNESS_BIN)
demo-build: $(HARNESS_BIN)

TEST_SCRIPTS += tests/harness/check_exports.sh \
                $(foreach v,6 7 8 9 10 11 12,tests/harness/harness_v$(v).sh) \
                tests/harness/harness_sockbuf.sh tests/harness/harness_refsock.sh \
                tests/harness/harness_nccl_env.sh

# A stand-in libcuda with one "GPU" that can export DMA-BUF, loaded through
# GDRTRACE_CUDA_LIB: the GPU-memory validation layer then offers GPU memory
# on a machine without a GPU; its "device memory" is memfds another process
# can map (cuMem export/import, IPC), as the copier process does (fake_cuda.c).
FAKE_CUDA := $(BUILD)/tests/libfakecuda.so
$(FAKE_CUDA): $(call obj,tests/harness/fake_cuda.c)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $< $(LDFLAGS)
tests: $(FAKE_CUDA)
# NCCL's settings recorded, named in the verdict, compared by diff (issue 19.2).
TEST_SCRIPTS += tests/reader/test-nccl-settings.sh

# The copier process through the built plugin, its copier
# found beside it (gpumem_copier_so.c).
TESTS += test_gpumem_copier_so
test_gpumem_copier_so_SRCS := tests/harness/gpumem_copier_so.c
test_gpumem_copier_so_LIBS := -ldl -lpthread
# a copier another user planted beside a plugin copy is not started (root)
TEST_SCRIPTS += tests/harness/copier-trust.sh

# The profiler ABI v1..v6 driven as NCCL drives it (prof_harness.c dlopens
# the plugin), its recorder read back by collstat through the validator.
PROF_HARNESS := $(BUILD)/tests/prof_harness
$(PROF_HARNESS): $(call obj,tests/harness/prof_harness.c)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl
COLLSTAT := $(BUILD)/tests/collstat
$(COLLSTAT): $(call obj,tests/gpu/collstat.c) $(call obj,$(sort $(RECFILE_SRCS) $(BASE_SRCS)))
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -ldl -lpthread
tests: $(PROF_HARNESS) $(COLLSTAT)
TEST_SCRIPTS += tests/harness/harness_prof.sh
