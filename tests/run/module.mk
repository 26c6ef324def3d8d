# SPDX-License-Identifier: Apache-2.0
# tests/run: `gdrtrace run` (tools/cmd/cmd_run.c) around the NCCL-like harness,
# and its refusal of a network filesystem (tools/lib/netfs.c).
TEST_SCRIPTS += tests/run/test-run.sh
# the job's NCCL_NET_PLUGIN, another user's --dir link, writers still running
TEST_SCRIPTS += tests/run/test-run-trust.sh
# 64 ranks as mpirun and srun start them: one line per rank, exit codes collected
TEST_SCRIPTS += tests/run/test-run-launcher.sh
# the command's whole process tree waited for; no empty archive (dump, run)
TEST_SCRIPTS += tests/run/test-run-tree.sh
# what run leaves in GDRTRACE_DIR (--keep, SIGKILL) found by ls, cleaned by prune
TEST_SCRIPTS += tests/run/test-run-leftovers.sh
# NCCL_PROFILER_PLUGIN: set for an NCCL older than 2.28.3 only, the job's kept
FAKE_NCCL := $(BUILD)/tests/fakenccl/libnccl.so.2
$(FAKE_NCCL): $(call obj,tests/run/fake_nccl.c)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $< $(LDFLAGS)
tests: $(FAKE_NCCL)
TEST_SCRIPTS += tests/run/test-run-profiler.sh
