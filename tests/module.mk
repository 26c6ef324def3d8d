# SPDX-License-Identifier: Apache-2.0
# tests/: the end-to-end demo and the unit tests of the ABI adapters + core.
DEMO_SCRIPT := tests/demo.sh

# Adapters and core over fake transports and a fake shim (defined in the test).
TESTS += test_abi
test_abi_SRCS := tests/unit/test_abi.c plugin/core.c plugin/abi/abi_common.c \
                 $(foreach v,6 7 8 9 10 11 12,plugin/abi/abi_v$(v).c) $(BASE_SRCS)
test_abi_LIBS := -lpthread -lcmocka
