# SPDX-License-Identifier: Apache-2.0
# tests/vm: the Soft-RoCE VM test and bench of the ib transport (run-vm.sh),
# and the guest program it runs (built with the plugin's sources, no NCCL).
VM_IBTEST_SRCS := tests/vm/gt_ib_vmtest.c $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)

.PHONY: vm-progs
vm-progs: $(BUILD)/vm/gt_ib_vmtest

$(BUILD)/vm/gt_ib_vmtest: $(VM_IBTEST_SRCS) $(wildcard plugin/ib/*.h plugin/oob/*.h plugin/reg/*.h common/dl/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(VM_IBTEST_SRCS) $(LDFLAGS) -ldl -lpthread

TEST_SCRIPTS += tests/vm/run-vm.sh
BENCH_SCRIPTS += tests/vm/bench-vm.sh

# The DMA-BUF path through the built plugin (dlopen, ncclNetPlugin_v10).
vm-progs: $(BUILD)/vm/gt_dmabuf_plugin
$(BUILD)/vm/gt_dmabuf_plugin: tests/vm/gt_dmabuf_plugin.c tests/vm/vgem.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ tests/vm/gt_dmabuf_plugin.c $(LDFLAGS) -ldl

# The GPU-memory validation layer on a real vgem dma-buf, through the built
# plugin over the fake libcuda (guest.d/70-gpumem-vgem.sh runs it).
vm-progs: $(BUILD)/vm/gt_gpumem_vgem $(FAKE_CUDA)
$(BUILD)/vm/gt_gpumem_vgem: tests/vm/gt_gpumem_vgem.c tests/vm/vgem.h tests/plugin_said.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ tests/vm/gt_gpumem_vgem.c $(LDFLAGS) -ldl -lpthread
