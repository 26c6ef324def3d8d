# SPDX-License-Identifier: Apache-2.0
# tests/: the end-to-end demo and the unit tests of the ABI adapters + core.
DEMO_SCRIPT := tests/demo.sh
TEST_SCRIPTS += tests/check-demo.sh

# Adapters and core over fake transports and a fake shim (defined in the test).
TESTS += test_abi
test_abi_SRCS := tests/unit/test_abi.c plugin/core.c plugin/abi/abi_common.c \
                 $(foreach v,6 7 8 9 10 11 12,plugin/abi/abi_v$(v).c) $(BASE_SRCS)
test_abi_LIBS := -lpthread -lcmocka

# Every gt_net implementation fills every slot: links sock, gpumem, ib (with its
# registration policy and dl tables), inner and the shim, as the plugin does
# (recursive =: SOCK_SRCS, IB_SRCS, OOB_SRCS, REG_SRCS are set by later fragments).
TESTS += test_net_ops
test_net_ops_SRCS = tests/unit/test_net_ops.c $(SOCK_SRCS) $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) \
                    plugin/inner/inner.c $(GPUMEM_SRCS) $(SHIM_TEST_SRCS) $(DL_SRCS)
test_net_ops_LIBS := -lcmocka -lpthread -ldl
